"""The step route's fast path (``orchestrator.fastpath``) answers exactly what the FastAPI route does.

A body typed ``application/vnd.cw+json`` is JSON to the guard and to FastAPI but not to the fast
path, so the same turn is sent both ways and the answers compared; a body that fails validation
or an unusual path goes on to FastAPI, whose error bodies are kept.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator import fastpath
from orchestrator.fastpath import step_episode
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, write_library

JSON = {"content-type": "application/json"}
FASTAPI_ONLY = {"content-type": "application/vnd.cw+json"}  # JSON to FastAPI, not to the fast path


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    app, _ = build_embedded_app(tmp_path / "lib", Settings(admin_token="s3cret"), tmp_path / "tasks.jsonl")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as c:
        yield c


@pytest.fixture
def passed_on(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths of the step requests the fast path handed on to FastAPI (set before the app's first
    request builds its middleware)."""
    seen: list[str] = []
    init = fastpath.StepFastPath.__init__

    def spying(self: fastpath.StepFastPath, app: Any, *args: Any, **kwargs: Any) -> None:
        async def inner(scope: Any, receive: Any, send: Any) -> None:
            if step_episode(scope) is not None:
                seen.append(scope["path"])
            await app(scope, receive, send)

        init(self, inner, *args, **kwargs)

    monkeypatch.setattr(fastpath.StepFastPath, "__init__", spying)
    return seen


async def _open(client: httpx.AsyncClient) -> str:
    resp = await client.post("/episodes", json={"task_id": "t-create"})
    assert resp.status_code == 201
    return str(resp.json()["episode_id"])


def _turn(step_id: str) -> dict[str, Any]:
    call = {"id": "c1", "name": "crm__getContact", "arguments": {"id": "con_000003"}}
    return {"tool_calls": [call], "assistant": {"content": "x"}, "step_id": step_id}


async def test_a_step_answered_by_the_fast_path_equals_the_fastapi_answer(
    passed_on: list[str], client: httpx.AsyncClient
) -> None:
    fast_eid, slow_eid = await _open(client), await _open(client)
    fast = await client.post(f"/episodes/{fast_eid}/step", json=_turn("s1"))
    slow = await client.post(
        f"/episodes/{slow_eid}/step", content=json.dumps(_turn("s1")), headers=FASTAPI_ONLY
    )
    assert passed_on == [f"/episodes/{slow_eid}/step"]
    assert fast.status_code == slow.status_code == 200
    assert fast.json() == slow.json() and fast.json()["results"][0]["tool_call_id"] == "c1"
    assert dict(fast.headers) == dict(slow.headers)
    again = await client.post(f"/episodes/{fast_eid}/step", json=_turn("s1"))  # a retried turn
    assert again.json() == fast.json()


async def test_errors_keep_their_bodies(passed_on: list[str], client: httpx.AsyncClient) -> None:
    eid = await _open(client)
    bodies: list[Any] = [{"tool_calls": []}, {"tool_calls": [{"id": "x"}]}, [1], None]
    for body in bodies:
        fast = await client.post(f"/episodes/{eid}/step", content=json.dumps(body), headers=JSON)
        slow = await client.post(f"/episodes/{eid}/step", content=json.dumps(body), headers=FASTAPI_ONLY)
        assert fast.status_code == slow.status_code == 422, body
        assert fast.json() == slow.json() and fast.json()["detail"][0]["loc"][0] == "body"
    assert len(passed_on) == 8  # every one of them went on to FastAPI
    unknown = await client.post("/episodes/nope/step", json=_turn("s1"))
    assert unknown.status_code == 404 and "unknown episode" in unknown.json()["detail"]
    assert len(passed_on) == 8  # answered by the fast path, with the route's own 404 body
    empty = await client.post(f"/episodes/{eid}/step", content=b"", headers=JSON)
    assert empty.status_code == 422
    bad = await client.post(f"/episodes/{eid}/step", content=b"{nope", headers=JSON)
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_json"  # the guard's answer, as before


@pytest.mark.parametrize(
    ("method", "path", "root", "expected"),
    [
        ("POST", "/episodes/abc/step", "", "abc"),
        ("POST", "/episodes/a.b-c_d/step", "", "a.b-c_d"),
        ("GET", "/episodes/abc/step", "", None),
        ("POST", "/episodes/abc/step/", "", None),
        ("POST", "/episodes//step", "", None),
        ("POST", "/episodes/a/b/step", "", None),
        ("POST", "/episodes/abc/finish", "", None),
        ("POST", "/x/episodes/abc/step", "/x", None),
    ],
)
def test_only_the_step_route_is_matched(method: str, path: str, root: str, expected: str | None) -> None:
    scope = {"type": "http", "method": method, "path": path, "root_path": root}
    assert step_episode(scope) == expected
