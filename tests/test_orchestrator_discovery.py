"""Service discovery over real HTTP (uvicorn on 127.0.0.1): remote services, dead and slow ones, replicas."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from compoworld.errors import ServiceUnavailable
from compoworld.runtime import create_library_app, create_service_app
from compoworld.runtime.rest import RESERVED_PREFIX
from compoworld.settings import Settings
from orchestrator.api import OpenRequest, StepRequest, ToolCall
from orchestrator.discovery import ServiceDirectory
from orchestrator.episodes import Orchestrator
from orchestrator.errors import InvalidRequest
from orchestrator.hop import Hop
from orchestrator.remote import HttpService, load_url_map, pick_replica
from orchestrator.server import create_orchestrator_app
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import (
    free_port,
    runtimes,
    serving,
    task_create,
    task_update,
    tool_content,
)

# Generous: these tests are about remote services and dead ones (refused at once), not timeouts; 0.5 s
# flaked on a loaded machine (the slow-service test below sets its own short timeout).
SETTINGS = Settings(admin_token="tok", service_timeout_s=10.0)


def step(name: str, args: object) -> StepRequest:
    return StepRequest(tool_calls=[ToolCall(name=name, arguments=args)])


async def test_an_orchestrator_alone_drives_remote_services_over_http(tmp_path: Path) -> None:
    rts = runtimes(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_update()])
    async with serving(create_library_app(rts, SETTINGS)) as lib_url:
        urls = {name: [f"{lib_url}/services/{name}"] for name in rts}
        app = create_orchestrator_app(SETTINGS, tmp_path / "tasks.jsonl", urls=urls)
        async with serving(app) as orch_url, httpx.AsyncClient(base_url=orch_url) as client:
            listed = (await client.get("/services")).json()
            assert [s["name"] for s in listed] == ["crm", "desk", "mail"]
            for row in listed:  # counts come from each service's GET /tools, before any episode
                rt = rts[row["name"]]
                assert row["tools"] == len(rt.tools) > 0
                assert row["implemented"] == sum(1 for b in rt.tools.values() if b.backend == "implemented")
            opened = (await client.post("/episodes", json={"task_id": "t-update"})).json()
            eid = opened["episode_id"]
            assert all(rt.has_episode(eid) for rt in rts.values())
            call = {"name": "desk__updateContact", "arguments": {"id": "con_000005", "status": "customer"}}
            result = (await client.post(f"/episodes/{eid}/step", json={"tool_calls": [call]})).json()[
                "results"
            ][0]
            assert json.loads(result["content"])["data"]["status"] == "customer"
            graded = (await client.post(f"/episodes/{eid}/finish", json={"answer": ""})).json()
            assert graded["complete"] is True  # the grader read desk over POST /admin/episodes/{id}/select
            await client.delete(f"/episodes/{eid}")
            assert not any(rt.has_episode(eid) for rt in rts.values())


async def test_the_service_listing_names_a_dead_service_and_still_counts_the_others(tmp_path: Path) -> None:
    rts = runtimes(tmp_path / "lib", ("crm",))
    dead = f"http://127.0.0.1:{free_port()}"
    async with serving(create_service_app(rts["crm"], SETTINGS)) as crm_url:
        app = create_orchestrator_app(SETTINGS, urls={"crm": [crm_url], "desk": [dead]})
        async with serving(app) as orch_url, httpx.AsyncClient(base_url=orch_url) as client:
            listed = {s["name"]: s for s in (await client.get("/services")).json()}
    assert listed["crm"]["tools"] == len(rts["crm"].tools) and "error" not in listed["crm"]
    assert listed["desk"]["tools"] == 0 and "desk" in listed["desk"]["error"]


async def test_a_dead_service_is_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    rts = runtimes(tmp_path / "lib", ("crm", "desk"))
    dead = f"http://127.0.0.1:{free_port()}"
    async with serving(create_service_app(rts["crm"], SETTINGS)) as crm_url:
        orch = Orchestrator(ServiceDirectory.remote(SETTINGS, {"crm": [crm_url], "desk": [dead]}))
        with pytest.raises(ServiceUnavailable, match="desk"):
            await orch.open(OpenRequest(task=task_create(distractors=("desk",))))
        assert rts["crm"].store.episodes == {}  # the forks made before the failure were released
        opened = await orch.open(OpenRequest(task=task_create(distractors=())))
        rec = await orch.store.get(opened.episode_id)  # the replica holding the fork dies mid-episode
        assert rec is not None and rec.pins == {"crm": crm_url}
        rec.pins["crm"] = dead
        await orch.store.put(rec)
        out = await orch.step(opened.episode_id, step("crm__listContacts", {}))
        envelope = tool_content(out.results[0])
        assert envelope["success"] is False and envelope["error"]["code"] == "service_unavailable"
        assert "crm" in envelope["error"]["message"]
        traj = await orch.trajectory(opened.episode_id)
        assert "service_unavailable" in traj.messages[-1]["content"]
        with pytest.raises(ServiceUnavailable):
            await orch.finish(opened.episode_id, "")  # grading cannot read crm: retryable, not a verdict
        await orch.aclose()


async def test_a_slow_service_times_out_into_service_unavailable() -> None:
    slow = FastAPI()

    @slow.post(f"{RESERVED_PREFIX}/tools/{{name}}")
    async def hang(name: str) -> dict[str, bool]:
        await asyncio.sleep(1.0)  # longer than the client's 0.3 s timeout
        return {"success": True}

    for http in (Hop(0.3, connect_s=0.3), httpx.AsyncClient(timeout=0.3)):  # the directory's, and httpx
        async with serving(slow) as url:
            svc = HttpService("slow", [url], http, "tok")
            started = asyncio.get_running_loop().time()
            result = await svc.call("e1", "anything", {})
            assert result.code == "service_unavailable" and "timed out" in result.message
            assert asyncio.get_running_loop().time() - started < 2
        await http.aclose()


def test_replicas_are_picked_by_a_stable_hash_and_adding_one_moves_few() -> None:
    urls = [f"http://svc-{i}:8000" for i in range(4)]
    picks = {f"ep{i}": pick_replica(f"ep{i}", urls) for i in range(400)}
    assert picks == {f"ep{i}": pick_replica(f"ep{i}", list(reversed(urls))) for i in range(400)}
    assert len(set(picks.values())) == 4
    moved = sum(pick_replica(e, [*urls, "http://svc-4:8000"]) != p for e, p in picks.items())
    assert 0 < moved < 160  # ~1/5 move to the new replica, none move between old ones


async def test_a_live_episode_stays_on_its_replica_when_replicas_change(tmp_path: Path) -> None:
    rts = runtimes(tmp_path / "lib", ("crm",))
    async with serving(create_service_app(rts["crm"], SETTINGS)) as url:
        http = Hop(30.0, connect_s=5.0)
        svc = HttpService("crm", [url], http, "tok")
        await svc.fork("ep-1", "2026-01-01")
        svc.urls = ["http://127.0.0.1:1", url, "http://127.0.0.1:2"]  # discovery found more replicas
        assert svc.base("ep-1") == url
        assert (await svc.call("ep-1", "listContacts", {"limit": 1})).success is True
        await svc.delete("ep-1")
        assert not rts["crm"].has_episode("ep-1")
        await http.aclose()


def test_url_maps_and_templates(tmp_path: Path) -> None:
    path = tmp_path / "urls.json"
    path.write_text(json.dumps({"b": "http://b:8000", "a": ["http://a-0:8000", "http://a-1:8000"]}))
    assert load_url_map(path) == {"a": ["http://a-0:8000", "http://a-1:8000"], "b": ["http://b:8000"]}
    path.write_text(json.dumps({"a": 3}))
    with pytest.raises(InvalidRequest, match="'a' must map"):
        load_url_map(path)
    settings = Settings(service_url_template="http://{service}.{namespace}.svc:8000", namespace="cw")
    directory = ServiceDirectory.remote(settings)
    client = directory.get("brevo")
    assert isinstance(client, HttpService) and client.urls == ["http://brevo.cw.svc:8000"]
    with pytest.raises(InvalidRequest, match="unknown service"):
        ServiceDirectory.remote(Settings(), {}).get("brevo")
