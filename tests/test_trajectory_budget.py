"""An episode's trajectory is bounded (Settings.max_trajectory_bytes / _messages): a turn past it is
413 in the error shape, none of its calls run, and the episode ends graded on its state so far."""

from __future__ import annotations

from pathlib import Path

import httpx

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, write_library


async def test_a_turn_past_the_byte_budget_is_413_and_the_episode_ends_graded(tmp_path: Path) -> None:
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    lib = write_library(tmp_path / "lib")
    settings = Settings(admin_token="t", max_trajectory_bytes=20_000)
    app, _ = build_embedded_app(lib, settings, tmp_path / "tasks.jsonl")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        opened = (await http.post("/episodes", json={"task_id": "t-create"})).json()
        eid, tool = opened["episode_id"], opened["tools"][0]["function"]["name"]
        small = {"tool_calls": [{"name": tool, "arguments": {}}], "assistant": {"content": "ok"}}
        assert (await http.post(f"/episodes/{eid}/step", json=small)).status_code == 200
        big = {"tool_calls": [{"name": tool, "arguments": {}}], "assistant": {"content": "x" * 30_000}}
        resp = await http.post(f"/episodes/{eid}/step", json=big)
        assert resp.status_code == 413 and "trajectory_limit" in resp.json()["detail"], resp.text
        got = (await http.get(f"/episodes/{eid}")).json()
        assert got["meta"]["finish_reason"] == "trajectory_limit" and got["meta"]["n_steps"] == 1
        assert not any("x" * 100 in str(m.get("content")) for m in got["messages"])  # nothing of it kept
        again = await http.post(f"/episodes/{eid}/finish", json={"answer": ""})
        assert again.status_code == 200 and again.json()["finish_reason"] == "trajectory_limit"
        assert (await http.post(f"/episodes/{eid}/step", json=small)).status_code == 409
