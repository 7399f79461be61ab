"""HTTP face of a service (and of a whole library in one process).

Routes: ``/health``, ``/tools``, ``POST /tools/{name}``, the spec's own REST routes, and
``/admin/...`` behind a bearer token. Handlers are async and run SQLite work inline:
each call is microseconds, and a thread pool would only add lock contention.
"""

from __future__ import annotations

import gc
import hmac
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from compoworld.contracts import ToolResult
from compoworld.errors import EpisodeError
from compoworld.runtime.service import ServiceRuntime
from compoworld.settings import Settings

__all__ = [
    "admin_guard",
    "create_library_app",
    "create_service_app",
    "freeze_heap",
    "json_response",
    "rest_response",
]

_EPISODE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_RESERVED = ("/health", "/tools", "/admin", "/docs", "/openapi.json", "/redoc")


def freeze_heap() -> None:
    """Move everything loaded so far (models, manifests, SQLAlchemy metadata) out of the cyclic GC's reach.

    A served library keeps a large, long-lived heap; without this every full collection
    triggered by request garbage walks it again (the same fix CPython servers use).
    """
    gc.collect()
    gc.freeze()


def json_response(payload: Any, status: int = 200) -> Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return Response(body, status_code=status, media_type="application/json")


def admin_guard(settings: Settings) -> Callable[[Request], Awaitable[None]]:
    """A dependency that rejects requests without the admin bearer token."""
    expected = f"Bearer {settings.admin_token}".encode()

    async def guard(request: Request) -> None:
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            raise HTTPException(status_code=401, detail="admin token required")

    return guard


def rest_response(result: ToolResult) -> Response:
    """A REST route's answer: the envelope with the result's status (nothing at all for a 204)."""
    if not result.has_body:
        return Response(status_code=result.status)
    return json_response(result.envelope(), result.status)


class _Rejected(Exception):
    """A request refused before any tool ran; carries the failure to answer with."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.message)
        self.result = result


async def _read_args(request: Request, limit: int) -> Any:
    """The JSON body (``{}`` when empty); ``_Rejected`` when it is too large or not JSON."""
    body = await request.body()
    if len(body) > limit:
        raise _Rejected(
            ToolResult.fail("payload_too_large", f"request body is {len(body)} bytes; the limit is {limit}")
        )
    if not body.strip():
        return {}
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _Rejected(ToolResult.fail("invalid_json", f"request body is not valid JSON: {exc}")) from exc


def _episode_of(request: Request) -> str | None:
    """The ``X-Episode-Id`` header (None: the read-only seed view); ``_Rejected`` when malformed."""
    episode = request.headers.get("x-episode-id")
    if episode is None or episode == "":
        return None
    if not _EPISODE_ID.match(episode):
        raise _Rejected(
            ToolResult.fail("invalid_episode", "X-Episode-Id must be 1-128 characters of [A-Za-z0-9_.:-]")
        )
    return episode


class ForkRequest(BaseModel):
    """Body of ``POST /admin/episodes``."""

    episode_id: str = Field(description="Id of the episode to create (replaced if it exists).")
    source: str | None = Field(default=None, description="Fork from this episode instead of the seed.")
    today: str | None = Field(default=None, description="Frozen date of the episode (YYYY-MM-DD).")


class SelectQuery(BaseModel):
    """One targeted read of the grader."""

    table: str = Field(description="Table (entity table or action_log).")
    where: dict[str, Any] = Field(default_factory=dict, description="Equality filters.")


class SelectRequest(BaseModel):
    """Body of ``POST /admin/episodes/{id}/select``."""

    queries: list[SelectQuery] = Field(description="Reads to run, results returned in order.")


def _admin_router(runtime: ServiceRuntime, settings: Settings) -> APIRouter:
    router = APIRouter(prefix="/admin", dependencies=[Depends(admin_guard(settings))])

    def episode_or_404(episode_id: str) -> str | None:
        if episode_id == "__seed__":
            return None
        if not runtime.has_episode(episode_id):
            raise HTTPException(status_code=404, detail=f"unknown episode '{episode_id}'")
        return episode_id

    @router.get("/episodes")
    async def list_episodes() -> Response:
        return json_response({"episodes": sorted(runtime.store.episodes)})

    @router.post("/episodes")
    async def fork(body: ForkRequest) -> Response:
        if not _EPISODE_ID.match(body.episode_id):
            raise HTTPException(status_code=422, detail="invalid episode id")
        try:
            runtime.fork(body.episode_id, body.source, body.today)
        except EpisodeError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        return json_response({"episode_id": body.episode_id, "service": runtime.name}, 201)

    @router.delete("/episodes/{episode_id}")
    async def delete(episode_id: str) -> Response:
        if not runtime.delete(episode_id):
            raise HTTPException(status_code=404, detail=f"unknown episode '{episode_id}'")
        return json_response({"deleted": episode_id})

    @router.get("/episodes/{episode_id}/state")
    async def state(episode_id: str) -> Response:
        return json_response(runtime.dump(episode_or_404(episode_id)))

    @router.get("/episodes/{episode_id}/hash")
    async def state_hash(episode_id: str) -> Response:
        return json_response({"hash": runtime.state_hash(episode_or_404(episode_id))})

    @router.get("/episodes/{episode_id}/log")
    async def write_log(episode_id: str) -> Response:
        eid = episode_or_404(episode_id)
        return json_response({"log": runtime.write_log(eid) if eid else []})

    @router.post("/episodes/{episode_id}/select")
    async def select(episode_id: str, body: SelectRequest) -> Response:
        eid = episode_or_404(episode_id)
        try:
            results = [runtime.select(eid, q.table, q.where) for q in body.queries]
        except EpisodeError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        return json_response({"results": results})

    return router


def _rest_handler(
    runtime: ServiceRuntime, name: str, settings: Settings
) -> Callable[[Request], Awaitable[Response]]:
    bound = runtime.tools[name]
    defn = bound.defn
    locations = defn.arg_locations
    body_args = {a for a, loc in locations.items() if loc == "body"}
    whole_body = "body" if locations.get("body") == "body" and not (body_args - {"body"}) else None
    aliases = {re.sub(r"[^A-Za-z0-9_]", "_", a).lower(): a for a in defn.input_schema.get("properties", {})}

    async def handler(request: Request) -> Response:
        try:
            episode = _episode_of(request)
            raw = {k: v for k, v in request.path_params.items()}
            for key, value in request.query_params.items():
                raw[aliases.get(re.sub(r"[^A-Za-z0-9_]", "_", key).lower(), key)] = value
            args: dict[str, Any] = bound.validator.coerce_strings(raw)
            if request.method in ("POST", "PUT", "PATCH") or body_args:
                body = await _read_args(request, settings.max_payload_bytes)
                if whole_body is not None:
                    args["body"] = body
                elif isinstance(body, dict):
                    for key, value in body.items():
                        arg = aliases.get(re.sub(r"[^A-Za-z0-9_]", "_", str(key)).lower(), str(key))
                        args.setdefault(arg, value)
                elif body not in ({}, None):
                    raise _Rejected(
                        ToolResult.fail("invalid_arguments", "request body must be a JSON object")
                    )
        except _Rejected as refused:
            return rest_response(refused.result)
        return rest_response(await runtime.call_tool(episode, name, args))

    return handler


def create_service_app(target: ServiceRuntime | Path, settings: Settings | None = None) -> FastAPI:
    """The FastAPI app of one service."""
    settings = settings or Settings()
    runtime = target if isinstance(target, ServiceRuntime) else ServiceRuntime.from_folder(target, settings)
    m = runtime.manifest
    app = FastAPI(title=m.title or m.name, description=m.description[:2000], version=m.version or "0")
    app.state.runtime = runtime
    limit = settings.max_payload_bytes

    @app.get("/health")
    async def health() -> Response:
        return json_response(
            {"status": "ok", "service": runtime.name, "episodes": len(runtime.store.episodes)}
        )

    @app.get("/tools")
    async def tools() -> Response:
        return json_response(runtime.tool_schemas())

    async def call(request: Request) -> Response:
        """The uniform tool route: a plain Starlette endpoint (no per-call dependency solving)."""
        name = request.path_params["name"]
        if name not in runtime.tools:
            missing = ToolResult.fail("unknown_tool", f"service '{runtime.name}' has no tool '{name}'")
            return json_response(missing.envelope(), 404)
        try:
            episode = _episode_of(request)
            args = await _read_args(request, limit)
        except _Rejected as refused:
            return json_response(refused.result.envelope())
        return json_response((await runtime.call_tool(episode, name, args)).envelope())

    app.add_route("/tools/{name}", call, methods=["POST"])
    app.include_router(_admin_router(runtime, settings))
    seen: set[tuple[str, str]] = set()
    for tool in m.tools:
        if not tool.path or tool.path.startswith(_RESERVED) or (tool.method, tool.path) in seen:
            continue
        seen.add((tool.method, tool.path))
        app.add_api_route(
            tool.path,
            _rest_handler(runtime, tool.name, settings),
            methods=[tool.method],
            name=tool.name,
            summary=tool.description[:120],
            include_in_schema=True,
        )
    return app


def create_library_app(runtimes: dict[str, ServiceRuntime], settings: Settings | None = None) -> FastAPI:
    """Every service of a library in one process, each under ``/services/<name>``."""
    settings = settings or Settings()
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
