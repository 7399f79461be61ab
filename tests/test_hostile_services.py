"""Hostile answers and hostile agents: a remote service that answers garbage, a run whose agent
writes garbage. Over real HTTP (uvicorn on loopback) for the services; no HTTP 500, no crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import Response

from compoworld.errors import ServiceUnavailable
from compoworld.runtime.rest import RESERVED_PREFIX
from compoworld.sanitize import Limits
from compoworld.settings import Settings
from orchestrator.agents.base import Action
from orchestrator.api import OpenResponse
from orchestrator.backends import embedded_backend
from orchestrator.models import Task
from orchestrator.remote import HttpService
from orchestrator.runner import RunConfig, read_trajectories, run_tasks
from orchestrator.server import create_orchestrator_app
from tests.orchestrator_fixture import serving, task_create, write_library

GARBAGE = {
    "nan": '{"success": true, "data": {"total": NaN}}',
    "surrogate": '{"success": true, "data": {"name": "\\ud800"}}',
    "deep": '{"success": true, "data": ' + "[" * 5000 + "]" * 5000 + "}",
    "huge": '{"success": true, "data": "' + "x" * (6 * 1024 * 1024) + '"}',
    "notjson": "<html>oops</html>",
    "notenvelope": '{"hello": "world"}',
}


def _garbage_service(tools_body: str | None = None) -> FastAPI:
    app = FastAPI()
    schemas = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in GARBAGE
    ]

    @app.get(f"{RESERVED_PREFIX}/tools")
    async def tools() -> Response:
        return Response(
            tools_body if tools_body is not None else json.dumps(schemas), media_type="application/json"
        )

    @app.post(f"{RESERVED_PREFIX}/admin/episodes")
    async def fork(request: Request) -> Response:
        return Response(json.dumps({"episode_id": (await request.json())["episode_id"]}), 201)

    @app.post(f"{RESERVED_PREFIX}/tools/{{name}}")
    async def call(name: str) -> Response:
        return Response(GARBAGE[name], media_type="application/json")

    return app


@pytest.mark.parametrize("tool", list(GARBAGE))
async def test_a_garbage_result_is_the_services_failure(tool: str) -> None:
    async with serving(_garbage_service()) as url, httpx.AsyncClient() as http:
        svc = HttpService("junk", [url], http, "tok", result_limits=Limits(4 * 1024 * 1024))
        result = await svc.call("e1", tool, {})
    assert result.success is False and result.code == "service_unavailable"


@pytest.mark.parametrize("body", ['{"tools": []}', "[1, 2]", "NaN", "not json"])
async def test_garbage_tool_listings_refuse_the_open_with_503(body: str) -> None:
    async with serving(_garbage_service(body)) as url, httpx.AsyncClient() as http:
        svc = HttpService("junk", [url], http, "tok")
        with pytest.raises(ServiceUnavailable):
            await svc.tool_schemas()
        app = create_orchestrator_app(Settings(admin_token="tok"), urls={"junk": [url]})
        task = task_create().model_copy(update={"services": ["junk"], "distractors": []})
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://o") as client:
            opened = await client.post("/episodes", json={"task": task.model_dump(mode="json")})
    assert opened.status_code == 503


class _GarbagePolicy:
    """Writes a lone surrogate everywhere it can: content, arguments, call ids, then the answer."""

    def __init__(self) -> None:
        self.stats: dict[str, Any] = {}
        self.turn = 0

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action:
        self.turn += 1
        if self.turn == 1:  # arguments as a string: the call fails, the episode goes on
            return Action(
                tool_calls=[{"id": "a", "name": "crm__createContact", "arguments": '{"name": "\\ud800"}'}]
            )
        if self.turn == 2:  # a lone surrogate in the turn itself: refused, the episode is aborted
            return Action(
                tool_calls=[{"id": "b", "name": "crm__listContacts", "arguments": {}}], content="\ud800"
            )
        return Action(content="\udfff")


class _GarbageAgent:
    name = "garbage"
    label = "test/garbage"

    def start(self, task: Task, episode: OpenResponse, seed: int) -> _GarbagePolicy:
        return _GarbagePolicy()

    async def aclose(self) -> None:
        return None


async def test_compoworld_run_survives_an_agent_that_writes_lone_surrogates(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    backend = embedded_backend(tmp_path / "lib", Settings(admin_token="tok"))
    tasks = [task_create(f"t{i}") for i in range(4)]
    out = tmp_path / "traj.jsonl"
    summary = await run_tasks(
        backend, _GarbageAgent(), tasks, RunConfig(rollouts=2, concurrency=4), out, progress=False
    )
    await backend.aclose()
    assert summary.errors == [] and summary.episodes == 8
    lines = read_trajectories(out)
    assert len(lines) == 8
    assert all(line["meta"]["finish_reason"].startswith("error: turn refused") for line in lines)
