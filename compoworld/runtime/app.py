"""HTTP face of a service (and of a whole library in one process).

Routes: ``/health``, ``/tools``, ``POST /tools/{name}``, ``/admin/...`` behind a bearer token
(each also under ``/_compoworld``, and only there where a spec path claims its first segment),
and the spec's own REST routes (``compoworld.runtime.rest``). Handlers are async and run SQLite
work inline: each call is microseconds, and a thread pool would only add lock contention.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import hmac
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field
from starlette.routing import Route

from compoworld.contracts import ToolResult
from compoworld.errors import EpisodeError, ServiceUnavailable
from compoworld.runtime.openapi import openapi_document
from compoworld.runtime.query_routes import dispatching_handler, query_template, route_groups
from compoworld.runtime.rest import (
    RESERVED_PREFIX,
    Rejected,
    json_response,
    parse_json,
    plan_routes,
    read_body,
    rest_handler,
    rest_response,
    route_path,
)
from compoworld.runtime.service import ServiceRuntime
from compoworld.runtime.shape import Shaper
from compoworld.runtime.state import SEED_VIEW
from compoworld.runtime.wire import media_kind
from compoworld.sanitize import Limits
from compoworld.settings import Settings

__all__ = [
    "RESERVED_PREFIX",
    "admin_guard",
    "create_library_app",
    "create_service_app",
    "freeze_heap",
    "json_response",
    "rest_response",
    "run_asgi",
    "trim_heap",
]

_EPISODE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_PARAM = re.compile(r"\{[^{}]*\}")


def freeze_heap() -> None:
    """Move everything loaded so far (models, manifests, SQLAlchemy metadata) out of the cyclic GC's reach.

    A served library keeps a large, long-lived heap; without this every full collection
    triggered by request garbage walks it again (the same fix CPython servers use).
    """
    gc.collect()
    gc.freeze()


def trim_heap() -> bool:
    """Hand memory freed by released episodes back to the OS (glibc ``malloc_trim``); False where
    the C library has none. Without it a burst of episodes keeps its peak RSS after they end."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True


def run_asgi(asgi: Any, host: str, port: int, grace_s: int = 30) -> None:
    """uvicorn on ``host:port`` with the loaded heap frozen out of the cyclic GC's reach.

    On SIGINT/SIGTERM the app's ``state.on_exit`` hooks run at once (the group board ends its
    waiters there), before uvicorn waits on open requests; a request still open ``grace_s`` later
    is cut, so a stop never hangs on a client.
    """
    import uvicorn

    hooks = list(getattr(getattr(asgi, "state", None), "on_exit", []) or [])

    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            for hook in hooks:
                hook()
            super().handle_exit(sig, frame)

    freeze_heap()
    config = uvicorn.Config(
        asgi, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=grace_s
    )
    _Server(config).run()


def admin_guard(settings: Settings) -> Callable[[Request], Awaitable[None]]:
    """A dependency that rejects requests without the admin bearer token."""
    expected = f"Bearer {settings.admin_token}".encode()

    async def guard(request: Request) -> None:
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            raise HTTPException(status_code=401, detail="admin token required")

    return guard


async def _read_args(request: Request, limits: Limits) -> Any:
    """The JSON body of a uniform-route call (``{}`` when empty); ``Rejected`` when too large or not
    clean JSON (``compoworld.sanitize``)."""
    return parse_json(await read_body(request, limits.max_bytes), limits)


def _episode_of(request: Request) -> str | None:
    """The ``X-Episode-Id`` header (None: the read-only seed view); ``Rejected`` when malformed."""
    episode = request.headers.get("x-episode-id")
    if episode is None or episode == "":
        return None
    if not _EPISODE_ID.match(episode):
        raise Rejected(
            ToolResult.fail("invalid_episode", "X-Episode-Id must be 1-128 characters of [A-Za-z0-9_.:-]")
        )
    if episode == SEED_VIEW:
        raise Rejected(
            ToolResult.fail(
                "invalid_episode", f"'{SEED_VIEW}' names the read-only seed: send no X-Episode-Id"
            )
        )
    return episode


def _call_id_of(request: Request) -> str | None:
    """The ``X-Call-Id`` header: a call the episode already answered is answered again, not rerun."""
    call_id = request.headers.get("x-call-id") or None
    if call_id is not None and not _EPISODE_ID.match(call_id):
        raise Rejected(
            ToolResult.fail("invalid_arguments", "X-Call-Id must be 1-128 characters of [A-Za-z0-9_.:-]")
        )
    return call_id


class ForkRequest(BaseModel):
    """Body of ``POST /admin/episodes``."""

    episode_id: str = Field(description="Id of the episode to create (replaced if it exists).")
    source: str | None = Field(default=None, description="Fork from this episode instead of the seed.")
    today: str | None = Field(default=None, description="Frozen date of the episode (YYYY-MM-DD).")


class TouchRequest(BaseModel):
    """Body of ``POST /admin/touch``: episodes an orchestrator still runs (their states stay alive)."""

    episode_ids: list[str] = Field(max_length=10_000, description="Episode ids to keep alive.")


class SelectQuery(BaseModel):
    """One targeted read of the grader."""

    table: str = Field(description="Table (entity table or action_log).")
    where: dict[str, Any] = Field(default_factory=dict, description="Equality filters.")


class SelectRequest(BaseModel):
    """Body of ``POST /admin/episodes/{id}/select``."""

    queries: list[SelectQuery] = Field(description="Reads to run, results returned in order.")


def _runtime(request: Request) -> ServiceRuntime:
    """The service an admin request is for: the app it reached (``create_service_app`` sets it)."""
    runtime: ServiceRuntime = request.app.state.runtime
    return runtime


#: The admin router of each admin token: its routes find their service through the request, so one
#: router serves every app of a process (building its routes was a fifth of building a small app).
_ADMIN_ROUTERS: dict[str, APIRouter] = {}
_ADMIN_ROUTERS_KEPT = 8


def _admin_router(settings: Settings) -> APIRouter:
    """``/admin/...`` behind ``settings``' bearer token, for whichever service app includes it."""
    found = _ADMIN_ROUTERS.get(settings.admin_token)
    if found is None:
        while len(_ADMIN_ROUTERS) >= _ADMIN_ROUTERS_KEPT:
            del _ADMIN_ROUTERS[next(iter(_ADMIN_ROUTERS))]
        found = _ADMIN_ROUTERS[settings.admin_token] = _build_admin_router(settings)
    return found


def _build_admin_router(settings: Settings) -> APIRouter:
    router = APIRouter(prefix="/admin", dependencies=[Depends(admin_guard(settings))])

    def episode_or_404(runtime: ServiceRuntime, episode_id: str) -> str | None:
        if episode_id == SEED_VIEW:
            return None
        if not runtime.has_episode(episode_id):
            raise HTTPException(status_code=404, detail=f"unknown episode '{episode_id}'")
        return episode_id

    @router.get("/episodes")
    async def list_episodes(request: Request) -> Response:
        return json_response({"episodes": sorted(_runtime(request).store.episodes)})

    @router.post("/episodes")
    async def fork(body: ForkRequest, request: Request) -> Response:
        runtime = _runtime(request)
        if not _EPISODE_ID.match(body.episode_id):
            raise HTTPException(status_code=422, detail="invalid episode id")
        try:
            runtime.fork(body.episode_id, body.source, body.today)
        except ServiceUnavailable as exc:  # at capacity: refused, never a live fork evicted
            raise HTTPException(status_code=503, detail=str(exc)) from exc
        except EpisodeError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        return json_response({"episode_id": body.episode_id, "service": runtime.name}, 201)

    @router.post("/touch")
    async def touch(body: TouchRequest, request: Request) -> Response:
        return json_response({"missing": _runtime(request).touch(body.episode_ids)})

    @router.post("/episodes/{episode_id}/freeze")
    async def freeze(episode_id: str, request: Request) -> Response:
        if not _runtime(request).freeze(episode_id):
            raise HTTPException(status_code=404, detail=f"unknown episode '{episode_id}'")
        return json_response({"frozen": episode_id})

    @router.delete("/episodes/{episode_id}")
    async def delete(episode_id: str, request: Request) -> Response:
        if not _runtime(request).delete(episode_id):
            raise HTTPException(status_code=404, detail=f"unknown episode '{episode_id}'")
        return json_response({"deleted": episode_id})

    @router.get("/episodes/{episode_id}/state")
    async def state(episode_id: str, request: Request) -> Response:
        runtime = _runtime(request)
        return json_response(runtime.dump(episode_or_404(runtime, episode_id)))

    @router.get("/episodes/{episode_id}/hash")
    async def state_hash(episode_id: str, request: Request) -> Response:
        runtime = _runtime(request)
        return json_response({"hash": runtime.state_hash(episode_or_404(runtime, episode_id))})

    @router.get("/episodes/{episode_id}/log")
    async def write_log(episode_id: str, request: Request) -> Response:
        runtime = _runtime(request)
        eid = episode_or_404(runtime, episode_id)
        return json_response({"log": runtime.write_log(eid) if eid else []})

    @router.post("/episodes/{episode_id}/select")
    async def select(episode_id: str, body: SelectRequest, request: Request) -> Response:
        runtime = _runtime(request)
        eid = episode_or_404(runtime, episode_id)
        try:
            results = [runtime.select(eid, q.table, q.where) for q in body.queries]
        except EpisodeError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        return json_response({"results": results})

    return router


def _refusal(shaper: Shaper, result: ToolResult) -> Response:
    """A request no operation of a shared route fits, refused in the route's error layout (the first
    operation's: an XML API answers its XML error)."""
    return rest_response(result, shaper)


def _body_media(runtime: ServiceRuntime, name: str) -> str:
    """The media kind of a tool's request body ("" when it takes none)."""
    defn = runtime.tools[name].defn
    if not any(loc == "body" for loc in defn.arg_locations.values()) and defn.body_whole is None:
        return ""
    return media_kind(defn.body_media)


def _literal_length(route: str) -> int:
    """How much of a route is fixed text (its ``{parameters}`` left out)."""
    return len(_PARAM.sub("", route))


def _named_params(runtime: ServiceRuntime, name: str) -> dict[str, str]:
    """A tool's query and header parameters by their names on the wire: where each is sent."""
    defn = runtime.tools[name].defn
    named = {
        defn.wire_names.get(arg, arg): where
        for arg, where in defn.arg_locations.items()
        if where in ("query", "header")
    }
    named.update(dict.fromkeys(defn.fixed_query, "query"))
    named.update(dict.fromkeys(defn.fixed_headers, "header"))
    return named


def _spec_route(
    path: str, handler: Callable[[Request], Awaitable[Response]], method: str, name: str
) -> Route:
    """A spec route as a plain Starlette route, as the uniform route is: its handler takes the request
    and answers a ``Response``, so FastAPI's per-route machinery (a dependency graph built for every
    route of every app and solved on every request) had nothing to do. Served for ``method`` only
    (Starlette adds HEAD to a GET route; FastAPI's routes, as before, do not)."""
    route = Route(path, handler, methods=[method], name=name, include_in_schema=False)
    route.methods = {method}
    return route


def create_service_app(target: ServiceRuntime | Path, settings: Settings) -> FastAPI:
    """The FastAPI app of one service: the runtime's routes (see ``plan_routes``) and the spec's."""
    runtime = target if isinstance(target, ServiceRuntime) else ServiceRuntime.from_folder(target, settings)
    m = runtime.manifest
    plan = plan_routes(m)
    docs = "" if "docs" in plan.root else RESERVED_PREFIX
    app = FastAPI(
        title=m.title or m.name,
        description=m.description[:2000],
        version=m.version or "0",
        openapi_url=("" if "openapi.json" in plan.root else RESERVED_PREFIX) + "/openapi.json",
        docs_url=docs + "/docs",
        redoc_url=("" if "redoc" in plan.root else RESERVED_PREFIX) + "/redoc",
    )
    app.state.runtime = runtime
    limit = settings.max_payload_bytes

    async def health(request: Request) -> Response:
        return json_response(
            {"status": "ok", "service": runtime.name, "episodes": len(runtime.store.episodes)}
        )

    async def tools(request: Request) -> Response:
        return json_response(runtime.tool_schemas())

    async def call(request: Request) -> Response:
        """The uniform tool route: a plain Starlette endpoint (no per-call dependency solving)."""
        name = request.path_params["name"]
        if name not in runtime.tools:
            missing = ToolResult.fail("unknown_tool", f"service '{runtime.name}' has no tool '{name}'")
            return json_response(missing.envelope(), 404)
        try:
            episode = _episode_of(request)
            call_id = _call_id_of(request)
            args = await _read_args(request, runtime.limits)
        except Rejected as refused:  # the same status the REST routes answer (413, 400)
            return json_response(refused.result.envelope(), refused.result.status)
        return json_response((await runtime.call_tool(episode, name, args, call_id)).envelope())

    for prefix in plan.at("tools"):
        app.add_route(prefix + "/tools/{name}", call, methods=["POST"])
        app.add_route(prefix + "/tools", tools, methods=["GET"], include_in_schema=False)
    for prefix in plan.at("health"):
        app.add_route(prefix + "/health", health, methods=["GET"], include_in_schema=False)
    for prefix in plan.at("admin"):
        app.include_router(_admin_router(settings), prefix=prefix)
    # the most literal route first: Starlette takes the first route that matches, and
    # ``/v1/{name}:getIamPolicy`` or ``/users/me`` must not be read as ``/v1/{name}`` or ``/users/{id}``
    groups = sorted(route_groups(plan.spec_routes).items(), key=lambda item: -_literal_length(item[0][1]))
    for (method, route), served in groups:
        handler = rest_handler(runtime, served[0][1], limit, _episode_of)
        if len(served) > 1 or served[0][0] != route:  # operations told apart by their query strings
            handler = dispatching_handler(
                [
                    (
                        query_template(p, _body_media(runtime, n), _named_params(runtime, n)),
                        rest_handler(runtime, n, limit, _episode_of),
                    )
                    for p, n in served
                ],
                functools.partial(_refusal, runtime.tools[served[0][1]].shaper),
                limit,
            )
        app.router.routes.append(_spec_route(route_path(route), handler, method, served[0][1]))
    app.openapi = functools.cache(lambda: openapi_document(m, plan))  # type: ignore[method-assign]
    return app


def create_library_app(runtimes: dict[str, ServiceRuntime], settings: Settings) -> FastAPI:
    """Every service of a library in one process, each under ``/services/<name>``."""
    app = FastAPI(title="CompoWorld library", version="1")
    app.state.runtimes = runtimes

    @app.get("/health")
    async def health() -> Response:
        return json_response({"status": "ok", "services": len(runtimes)})

    @app.get("/services")
    async def services() -> Response:
        return json_response(
            [
                {
                    "name": r.name,
                    "title": r.manifest.title,
                    "description": r.manifest.description[:300],
                    "domain": r.manifest.domain,
                    "tools": len(r.tools),
                    "implemented": sum(1 for b in r.tools.values() if b.backend == "implemented"),
                }
                for r in runtimes.values()
            ]
        )

    for name, runtime in runtimes.items():
        app.mount(f"/services/{name}", create_service_app(runtime, settings))
    return app
