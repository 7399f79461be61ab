"""The orchestrator's HTTP API on the embedded app (in-process ASGI): routes, errors, admin guard."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, task_update, write_library

TOKEN = {"Authorization": "Bearer s3cret"}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create(), task_update()])
    app, _ = build_embedded_app(tmp_path / "lib", Settings(admin_token="s3cret"), tmp_path / "tasks.jsonl")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as c:
        yield c


async def test_an_episode_over_http_from_open_to_delete(client: httpx.AsyncClient) -> None:
    opened = await client.post("/episodes", json={"task_id": "t-update", "mode": "gateway", "seed": 4})
    assert opened.status_code == 201
    body = opened.json()
    assert set(body) == {"episode_id", "task_id", "mode", "messages", "tools", "max_steps", "mcp_path"}
    assert [t["function"]["name"] for t in body["tools"]] == [
        "list_services",
        "list_tools",
        "describe_tool",
        "call_tool",
    ]
    eid = body["episode_id"]
    calls = [
        {"id": "a", "name": "list_services", "arguments": "{}"},
        {
            "id": "b",
            "type": "function",
            "function": {
                "name": "call_tool",
                "arguments": json.dumps(
                    {
                        "tool_name": "desk__updateContact",
                        "arguments": {"id": "con_000005", "status": "customer"},
                    }
                ),
            },
        },
    ]
    step = await client.post(
        f"/episodes/{eid}/step", json={"tool_calls": calls, "assistant": {"content": "working"}}
    )
    assert step.status_code == 200
    results = step.json()["results"]
    assert sorted(json.loads(results[0]["content"])["services"]) == ["crm", "desk", "mail"]
    assert json.loads(results[1]["content"])["data"]["status"] == "customer"
    finished = await client.post(f"/episodes/{eid}/finish", json={"answer": "done"})
    assert finished.json()["complete"] is True and finished.json()["criteria"][0]["passed"] is True
    traj = (await client.get(f"/episodes/{eid}")).json()
    assert traj["meta"]["discover_mode"] == "gateway" and traj["meta"]["n_real_tool_calls"] == 1
    assert traj["messages"][2]["content"] == "working"
    assert (await client.delete(f"/episodes/{eid}")).json()["state"] == "finished"
    gone = await client.get(f"/episodes/{eid}")
    assert gone.status_code == 404 and "unknown episode" in gone.json()["detail"]


async def test_bad_requests_get_clear_statuses(client: httpx.AsyncClient) -> None:
    assert (await client.post("/episodes", json={"task_id": "nope"})).status_code == 404
    both = await client.post("/episodes", json={})
    assert both.status_code == 422 and "exactly one" in both.text
    assert (
        await client.post("/episodes", json={"task_id": "t-create", "mode": "telepathy"})
    ).status_code == 422
    assert (await client.post("/episodes/nope/step", json={"tool_calls": [{"name": "x"}]})).status_code == 404
    eid = (await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
    assert (await client.post(f"/episodes/{eid}/step", json={"tool_calls": []})).status_code == 422
    assert (await client.post(f"/episodes/{eid}/finish", json={"answer": ""})).status_code == 200
    late = await client.post(f"/episodes/{eid}/step", json={"tool_calls": [{"name": "crm__listContacts"}]})
    assert late.status_code == 409 and "finished" in late.json()["detail"]
    assert (
        await client.post(f"/episodes/{eid}/finish", json={"answer": ""})
    ).status_code == 200  # idempotent
    assert (await client.post(f"/episodes/{eid}/abort", json={"reason": "x"})).status_code == 409


async def test_the_graders_view_needs_the_admin_token(client: httpx.AsyncClient) -> None:
    eid = (await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
    for path in (f"/admin/episodes/{eid}/state", f"/admin/episodes/{eid}/task", "/admin/episodes"):
        assert (await client.get(path)).status_code == 401
        assert (await client.get(path, headers={"Authorization": "Bearer wrong"})).status_code == 401
    task = (await client.get(f"/admin/episodes/{eid}/task", headers=TOKEN)).json()
    assert task["gold_calls"][0]["tool"] == "createContact"
    state = (await client.get(f"/admin/episodes/{eid}/state", headers=TOKEN)).json()
    assert set(state) == {"crm", "desk"} and "hash" in state["crm"]
    assert (await client.get(f"/services/crm/admin/episodes/{eid}/state")).status_code == 401
    assert (await client.post("/admin/reap")).status_code == 401
    assert (await client.post("/admin/reap", headers=TOKEN)).json() == {"reaped": 0}


async def test_tasks_can_be_listed_and_added_by_an_admin(client: httpx.AsyncClient) -> None:
    assert (await client.get("/tasks")).json() == {"tasks": ["t-create", "t-update"]}
    extra = task_create("t-extra").model_dump(mode="json")
    assert (await client.post("/admin/tasks", json=[extra])).status_code == 401
    assert (await client.post("/admin/tasks", json=[extra], headers=TOKEN)).status_code == 201
    assert (await client.post("/episodes", json={"task_id": "t-extra"})).status_code == 201


async def test_group_rewards_are_served_next_to_episodes(client: httpx.AsyncClient) -> None:
    pytest.importorskip("orchestrator.groups")
    eid = (await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
    await client.post(f"/episodes/{eid}/finish", json={"answer": ""})
    body = {"episode_id": eid, "expected_n": 1, "timeout_s": 1}
    resp = await client.post("/groups/g1/reward", json=body)
    assert resp.status_code == 200 and 0.0 <= resp.json()["reward"] <= 1.0
