"""The orchestrator over HTTP: episode routes, MCP per episode, admin routes, and the apps.

``attach_orchestrator`` adds the routes to the embedded library app (``compoworld up``);
``create_orchestrator_app`` builds the orchestrator alone over remote services
(``compoworld orchestrator``, one container on compose or Kubernetes).

    POST   /episodes                 open    {task | task_id, mode, seed, ...}
    POST   /episodes/{id}/step       tool calls of one assistant turn
    POST   /episodes/{id}/finish     grade (a second finish returns the same result)
    POST   /episodes/{id}/abort      give up (every criterion counts as failed)
    GET    /episodes/{id}            the trajectory so far
    DELETE /episodes/{id}            release every fork
    *      /episodes/{id}/mcp        the episode's tools over MCP (streamable HTTP)
    GET    /tasks                    ids of the loaded tasks
    /admin/...                       bearer token: episode list, state dumps, tasks, reaping
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.routing import Route

from compoworld.errors import CompoWorldError
from compoworld.runtime.app import admin_guard, json_response, trim_heap
from compoworld.runtime.service import ServiceRuntime
from compoworld.sanitize import Limits
from compoworld.settings import Settings
from orchestrator.api import AbortRequest, FinishRequest, OpenRequest, StepRequest, error_responses
from orchestrator.budget import TrajectoryBudget
from orchestrator.discovery import ServiceDirectory
from orchestrator.episodes import Orchestrator
from orchestrator.errors import InvalidRequest, http_status
from orchestrator.fastpath import StepFastPath
from orchestrator.groups_api import groups_router
from orchestrator.groups_redis import board_for_store
from orchestrator.guard import BodyGuard
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.mcp_server import EpisodeMcp
from orchestrator.models import Task
from orchestrator.store import store_from_url
from orchestrator.tasksource import TaskRegistry

__all__ = ["attach_orchestrator", "create_orchestrator_app", "episode_router", "orchestrator_app_from"]

log = logging.getLogger(__name__)

# what every route that reads a body can answer before it runs (BodyGuard, FastAPI validation)
_BODY = (400, 413, 422)


async def _answer(work: Awaitable[Any], status: int = 200) -> Response:
    """Run ``work`` and turn its result (a model or a dict) or its error into a JSON response."""
    try:
        result = await work
    except CompoWorldError as exc:
        return json_response({"detail": str(exc)}, http_status(exc))
    if isinstance(result, BaseModel):
        return Response(result.model_dump_json(), status_code=status, media_type="application/json")
    return json_response(result, status)


def episode_router(orch: Orchestrator, settings: Settings) -> APIRouter:
    """The agent-facing episode routes (no token: the episode id is the capability)."""
    router = APIRouter(tags=["episodes"])

    @router.post("/episodes", status_code=201, responses=error_responses(*_BODY, 404, 409, 503))
    async def open_episode(body: OpenRequest) -> Response:
        return await _answer(orch.open(body), 201)

    @router.post("/episodes/{episode_id}/step", responses=error_responses(*_BODY, 404, 409, 503))
    async def step(episode_id: str, body: StepRequest) -> Response:
        return await _answer(orch.step(episode_id, body))

    @router.post("/episodes/{episode_id}/finish", responses=error_responses(*_BODY, 404, 409, 503))
    async def finish(episode_id: str, body: FinishRequest) -> Response:
        return await _answer(orch.finish(episode_id, body.answer))

    @router.post("/episodes/{episode_id}/abort", responses=error_responses(*_BODY, 404, 409, 503))
    async def abort(episode_id: str, body: AbortRequest) -> Response:
        return await _answer(orch.abort(episode_id, body.reason))

    @router.get("/episodes/{episode_id}", responses=error_responses(404, 422))
    async def trajectory(episode_id: str) -> Response:
        return await _answer(orch.trajectory(episode_id))

    @router.delete("/episodes/{episode_id}", responses=error_responses(404, 422, 503))
    async def delete(episode_id: str) -> Response:
        return await _answer(orch.delete(episode_id))

    @router.get("/tasks")
    async def tasks() -> Response:
        return json_response({"tasks": orch.tasks.ids()})

    return router


def admin_router(orch: Orchestrator, settings: Settings) -> APIRouter:
    """The grader's view: never reachable without the admin token."""
    router = APIRouter(
        prefix="/admin",
        dependencies=[Depends(admin_guard(settings))],
        tags=["admin"],
        responses=error_responses(401),
    )

    async def summaries() -> dict[str, Any]:
        out = []
        for eid in await orch.store.ids():
            rec = await orch.store.get(eid)
            if rec is not None:
                out.append(
                    {
                        "episode_id": eid,
                        "task_id": rec.task.id,
                        "state": rec.state.value,
                        "steps": rec.n_steps,
                    }
                )
        return {"episodes": out}

    @router.get("/episodes")
    async def list_episodes() -> Response:
        return await _answer(summaries())

    @router.get("/episodes/{episode_id}/state", responses=error_responses(404, 422, 503))
    async def state(episode_id: str) -> Response:
        return await _answer(orch.state_dump(episode_id))

    @router.get("/episodes/{episode_id}/task", responses=error_responses(404, 422))
    async def task_of(episode_id: str) -> Response:
        return await _answer(orch.task_of(episode_id))

    @router.post("/tasks", status_code=201, responses=error_responses(*_BODY, 409))
    async def add_tasks(body: list[Task]) -> Response:
        for task in body:
            try:
                orch.tasks.add(task)
            except CompoWorldError as exc:
                return json_response({"detail": str(exc)}, http_status(exc))
        return json_response({"tasks": len(orch.tasks)}, 201)

    @router.post("/reap", responses=error_responses(400, 413, 503))
    async def reap() -> Response:
        return await _answer(_count(orch.reap()))

    return router


async def _count(work: Awaitable[int]) -> dict[str, int]:
    return {"reaped": await work}


def _services_router(orch: Orchestrator) -> APIRouter:
    """``GET /services`` and ``GET /services/{svc}/tools`` for the orchestrator alone."""
    router = APIRouter(tags=["services"])

    @router.get("/services")
    async def services() -> Response:
        return json_response(await _summaries(orch))

    @router.get("/services/{service}/tools", responses=error_responses(404, 422, 503))
    async def tools(service: str) -> Response:
        if not orch.directory.has(service):  # a path naming no mounted service: not found
            return json_response({"detail": f"unknown service '{service[:64]}'"}, 404)

        async def load() -> list[dict[str, Any]]:
            return await orch.directory.get(service).tool_schemas()

        return await _answer(load())

    return router


async def _summaries(orch: Orchestrator) -> list[dict[str, Any]]:
    """Each service's summary, its tool counts read from ``GET /tools`` (fetched once, then cached).

    A service that cannot answer is listed with the reason instead of failing the whole listing.
    """
    clients = [orch.directory.get(n) for n in orch.directory.names()]
    fetched = await asyncio.gather(*(c.tool_schemas() for c in clients), return_exceptions=True)
    out = []
    for client, outcome in zip(clients, fetched, strict=True):
        row = client.summary()
        if isinstance(outcome, CompoWorldError):
            row["error"] = str(outcome)
        elif isinstance(outcome, BaseException):
            raise outcome
        out.append(row)
    return out


def install(app: FastAPI, orch: Orchestrator, settings: Settings) -> EpisodeMcp:
    """Add every orchestrator route to ``app`` and run the reaper and MCP within its lifespan."""
    mcp = EpisodeMcp(orch)
    app.state.orchestrator = orch
    app.add_middleware(StepFastPath, orch=orch, answer=_answer)  # inside the guard: a step parsed once
    app.add_middleware(BodyGuard, limits=Limits(settings.max_request_bytes, settings.max_json_depth))
    app.include_router(episode_router(orch, settings))
    app.include_router(admin_router(orch, settings))
    app.router.routes.append(
        Route("/episodes/{episode_id}/mcp", endpoint=mcp, methods=["GET", "POST", "DELETE"])
    )
    # in Redis when the episodes are: any replica takes any report
    board = board_for_store(orch.store, open_deadline_s=settings.group_open_deadline_s)
    orch.outcomes = board  # the board scores only what this orchestrator graded
    app.state.on_exit = [*getattr(app.state, "on_exit", []), board.close_waiters]  # run_asgi: on SIGTERM
    app.include_router(groups_router(board, settings.group_timeout_max_s))
    _name_services_in_schema(app, orch)
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(asgi: Any) -> AsyncIterator[Any]:
        reaper = asyncio.create_task(_reap_forever(orch))
        try:
            async with inner(asgi) as state:
                yield state
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            await mcp.aclose()
            await board.aclose()
            await orch.aclose()

    app.router.lifespan_context = lifespan
    return mcp


def _name_services_in_schema(app: FastAPI, orch: Orchestrator) -> None:
    """``POST /episodes``' ``services`` lists the services this orchestrator can fork, in its
    OpenAPI, when that set is closed: a schema-valid open is one the orchestrator can serve
    (an unknown name is a 422)."""
    if not orch.directory.closed():
        return
    base = app.openapi

    def openapi() -> dict[str, Any]:
        doc = base()
        prop = doc.get("components", {}).get("schemas", {}).get("OpenRequest", {}).get("properties", {})
        for option in prop.get("services", {}).get("anyOf", []):
            if option.get("type") == "array":
                option["items"] = {"type": "string", "enum": sorted(orch.directory.names())}
        return doc

    app.openapi = openapi  # type: ignore[method-assign]


async def _reap_forever(orch: Orchestrator) -> None:
    trimmed = orch.released
    while True:
        await asyncio.sleep(orch.config.reap_interval_s)
        try:
            await orch.reap()
        except CompoWorldError as exc:  # a dead service must not stop the reaper
            log.warning("reaper: %s", exc)
        if orch.released != trimmed:  # episodes ended since the last pass: return their memory
            trimmed = orch.released
            await asyncio.to_thread(trim_heap)


def attach_orchestrator(
    app: FastAPI,
    runtimes: Mapping[str, ServiceRuntime],
    settings: Settings,
    tasks_path: Path | None = None,
    config: OrchestratorConfig | None = None,
) -> Orchestrator:
    """The embedded deployment: the orchestrator calls the in-process runtimes directly."""
    orch = Orchestrator.embedded(runtimes, settings, tasks_path, **({"config": config} if config else {}))
    install(app, orch, settings)
    return orch


def create_orchestrator_app(
    settings: Settings,
    tasks_path: Path | None = None,
    *,
    urls: dict[str, list[str]] | None = None,
    config: OrchestratorConfig | None = None,
) -> FastAPI:
    """The orchestrator alone; services are remote (URL map file, explicit map, or URL template)."""
    directory = ServiceDirectory.remote(settings, urls)
    store = store_from_url(
        settings.store_url, lease_s=settings.store_lease_s, turn_limit_s=settings.store_turn_limit_s
    )
    orch = Orchestrator(
        directory,
        TaskRegistry.load(tasks_path),
        config=config or OrchestratorConfig.from_settings(settings),
        store=store,
        limits=Limits.from_settings(settings),
        budget=TrajectoryBudget.from_settings(settings),
    )
    app = FastAPI(title="CompoWorld orchestrator", version="1")

    @app.get("/health")
    async def health() -> Response:
        body = {"status": "ok", "services": len(directory.names()), "tasks": len(orch.tasks)}
        return json_response(body | {"store": "shared" if orch.store.shared else "memory"})

    app.include_router(_services_router(orch))
    install(app, orch, settings)
    return app


def orchestrator_app_from(settings: Settings, service_urls: Path | None, tasks: Path | None) -> FastAPI:
    """The orchestrator-alone app from the entry point's settings, the URL map overriding them.

    Raises InvalidRequest when no service is named anywhere (no map, no URL template).
    """
    if service_urls is not None:
        settings = settings.model_copy(update={"service_urls_file": service_urls})
    if settings.service_urls_file is None and not settings.service_url_template:
        raise InvalidRequest("no services: pass --service-urls FILE or set COMPOWORLD_SERVICE_URL_TEMPLATE")
    return create_orchestrator_app(settings, tasks)
