"""Environment failures are reported as such by the real orchestrator (``environment_error``).

A trainer must tell a rollout the environment broke (a service lost the episode's state, a
service did not answer) from one the policy got wrong: the first is masked out of the loss, the
second is graded. These tests drive the real embedded orchestrator over HTTP (httpx
ASGITransport); the failures are produced the way they happen in the field: the service's fork of
the episode disappears (a restarted or reaped service), or the service stops answering.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from compoworld.runtime import create_library_app
from compoworld.settings import Settings
from orchestrator.server import attach_orchestrator
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import runtimes, task_create, tool_content

BASE = "http://orchestrator"


def _app(tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    services = runtimes(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    app = create_library_app(services, Settings())
    attach_orchestrator(app, services, Settings(), tmp_path / "tasks.jsonl")
    return app, services


CALL = {"id": "c1", "name": "crm__createContact", "arguments": {"name": "Ann Lee", "email": "a@x.org"}}


async def test_a_lost_episode_state_is_an_environment_error_in_step_and_finish(tmp_path: Path) -> None:
    app, services = _app(tmp_path)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        opened = (await http.post("/episodes", json={"task_id": "t-create"})).json()
        eid = opened["episode_id"]
        healthy = (await http.post(f"/episodes/{eid}/step", json={"tool_calls": [CALL]})).json()
        assert healthy["environment_error"] == ""
        services["crm"].delete(eid)  # the service lost this episode's fork (restarted, reaped)
        step = (await http.post(f"/episodes/{eid}/step", json={"tool_calls": [CALL]})).json()
        assert tool_content(step["results"][0])["error"]["code"] == "episode_gone"
        assert step["environment_error"].startswith("crm__createContact: episode_gone")
        finished = (await http.post(f"/episodes/{eid}/finish", json={"answer": ""})).json()
        assert finished["environment_error"] == step["environment_error"]
        traj = (await http.get(f"/episodes/{eid}")).json()
        assert traj["meta"]["environment_error"] == step["environment_error"]


async def test_a_policy_mistake_is_not_an_environment_error(tmp_path: Path) -> None:
    app, _ = _app(tmp_path)
    bad = {"id": "c1", "name": "crm__noSuchTool", "arguments": "{not json"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        eid = (await http.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
        step = (await http.post(f"/episodes/{eid}/step", json={"tool_calls": [bad]})).json()
        assert tool_content(step["results"][0])["success"] is False
        assert step["environment_error"] == ""
