"""A grade is right or it is an error; only the orchestrator creates state.

Faults: a service that restarts mid-episode (real uvicorn processes on loopback, the state
gone with them), one stopped (SIGSTOP) and resumed (unavailable meanwhile, its state kept), a fork
lost in process, a service at its capacity, forks kept alive while an
episode works elsewhere. Every affected episode ends aborted with a reason; none is graded
from a re-forked seed; the others run on.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.errors import ServiceUnavailable
from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from orchestrator.api import OpenRequest, StepRequest, ToolCall
from orchestrator.discovery import ServiceDirectory
from orchestrator.episodes import Orchestrator
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import (
    free_port,
    serving,
    task_create,
    task_update,
    tool_content,
    write_library,
)

TOKEN = {"Authorization": "Bearer s3cret"}
SETTINGS = Settings(admin_token="s3cret")
ANN = {"name": "Ann Lee", "email": "ann@example.com", "company_id": 2}


def step(name: str, args: dict[str, Any]) -> StepRequest:
    return StepRequest(tool_calls=[ToolCall(id="c", name=name, arguments=args)])


def served(app: Any, port: int) -> contextlib.AbstractAsyncContextManager[str]:
    """The app on a fixed port, so a restarted service answers at the same URL."""
    return serving(app, port=port)


async def test_a_service_restart_mid_episode_aborts_the_episode_instead_of_grading_a_fresh_seed(
    tmp_path: Path,
) -> None:
    lib = write_library(tmp_path / "lib", ("crm", "desk"))
    port = free_port()
    desk = ServiceRuntime.from_folder(lib / "desk", SETTINGS)
    async with served(create_service_app(desk, SETTINGS), free_port()) as desk_url:
        async with served(
            create_service_app(ServiceRuntime.from_folder(lib / "crm", SETTINGS), SETTINGS), port
        ) as url:
            orch = Orchestrator(ServiceDirectory.remote(SETTINGS, {"crm": [url], "desk": [desk_url]}))
            hit = await orch.open(OpenRequest(task=task_create(distractors=())))
            other = await orch.open(OpenRequest(task=task_update().model_copy(update={"distractors": []})))
            wrote = await orch.step(hit.episode_id, step("crm__createContact", ANN))
            assert tool_content(wrote.results[0])["success"] is True
        # the crm process is gone with its forks; a fresh one starts on the same port
        async with served(
            create_service_app(ServiceRuntime.from_folder(lib / "crm", SETTINGS), SETTINGS), port
        ):
            out = await orch.step(hit.episode_id, step("crm__listContacts", {"limit": 1}))
            envelope = tool_content(out.results[0])
            assert (
                envelope["error"]["code"] == "episode_gone"
                and "episode state lost" in envelope["error"]["message"]
            )
            assert out.done is True and out.state == "aborted" and "episode_gone" in out.environment_error
            traj = await orch.trajectory(hit.episode_id)
            assert traj.meta.finish_reason == "error: episode state lost"
            assert all(not v.passed for v in (await orch.store.get(hit.episode_id)).verdicts)  # type: ignore[union-attr]
            # the other episode's desk state was never touched: it is graded as usual
            done = await orch.step(
                other.episode_id, step("desk__updateContact", {"id": "con_000005", "status": "customer"})
            )
            assert tool_content(done.results[0])["success"] is True
        await orch.aclose()


async def test_a_fork_lost_before_finish_is_an_aborted_episode_not_a_wrong_grade(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    app, _ = build_embedded_app(tmp_path / "lib", SETTINGS, tmp_path / "tasks.jsonl")
    crm: ServiceRuntime = app.state.runtimes["crm"]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as client:
        eid = (await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
        call = {"id": "c", "name": "crm__createContact", "arguments": ANN}
        assert (await client.post(f"/episodes/{eid}/step", json={"tool_calls": [call]})).status_code == 200
        crm.store.delete(eid)  # evicted, expired, or the process restarted: the state is gone
        finished = await client.post(f"/episodes/{eid}/finish", json={"answer": "con_000031"})
        body = finished.json()
        assert finished.status_code == 200 and body["state"] == "aborted"
        assert "episode state lost" in body["environment_error"] and body["score"] == 0.0
        assert not crm.has_episode(eid)  # nothing re-forked behind the episode's back


async def test_service_routes_never_create_state_for_ids_the_orchestrator_did_not_open(
    tmp_path: Path,
) -> None:
    write_library(tmp_path / "lib")
    app, _ = build_embedded_app(tmp_path / "lib", SETTINGS)
    runtimes: dict[str, ServiceRuntime] = app.state.runtimes
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as client:
        for i in range(200):
            resp = await client.post(
                "/services/crm/tools/createContact", json={"name": "Z"}, headers={"X-Episode-Id": f"junk-{i}"}
            )
            assert resp.json()["error"]["code"] == "episode_gone"  # the uniform route's envelope
        rest = await client.post(
            "/services/crm/contacts", json={"name": "Z"}, headers={"X-Episode-Id": "junk"}
        )
        assert rest.status_code == 410
        assert all(r.store.episodes == {} for r in runtimes.values())
        # one orchestrator call opens an episode over named services; its id works on their routes
        opened = await client.post("/episodes", json={"services": ["crm"]})
        assert opened.status_code == 201
        eid = opened.json()["episode_id"]
        made = await client.post(
            "/services/crm/contacts", json={"name": "Ann"}, headers={"X-Episode-Id": eid}
        )
        assert made.status_code == 201
        # a service the episode did not mount gets no fork for it
        other = await client.post(
            "/services/mail/contacts", json={"name": "Z"}, headers={"X-Episode-Id": eid}
        )
        assert other.status_code == 410 and not runtimes["mail"].has_episode(eid)
        # a finished episode's forks are read-only until deleted, then gone
        assert (await client.post(f"/episodes/{eid}/finish", json={"answer": ""})).status_code == 200
        frozen = await client.post(
            "/services/crm/contacts", json={"name": "Bo"}, headers={"X-Episode-Id": eid}
        )
        assert frozen.status_code == 409 and frozen.json()["error"]["code"] == "episode_finished"
        read = await client.get(f"/services/crm/contacts/{made.json()['id']}", headers={"X-Episode-Id": eid})
        assert read.status_code == 200
        assert (await client.delete(f"/episodes/{eid}")).status_code == 200
        gone = await client.get(f"/services/crm/contacts/{made.json()['id']}", headers={"X-Episode-Id": eid})
        assert gone.status_code == 410 and runtimes["crm"].store.episodes == {}


async def test_at_capacity_new_episodes_are_refused_and_live_ones_are_never_evicted(tmp_path: Path) -> None:
    write_library(tmp_path / "lib", ("crm",))
    settings = Settings(admin_token="s3cret", max_episodes=3)
    app, _ = build_embedded_app(tmp_path / "lib", settings)
    crm: ServiceRuntime = app.state.runtimes["crm"]
    task = task_create(distractors=()).model_dump(mode="json")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as client:
        live = [(await client.post("/episodes", json={"task": task})).json()["episode_id"] for _ in range(3)]
        refused = await client.post("/episodes", json={"task": task})
        assert refused.status_code == 503 and "limit" in refused.json()["detail"]
        assert sorted(crm.store.episodes) == sorted(live)
        for i in range(45):  # junk calls make no room either
            await client.post(
                "/services/crm/tools/createContact", json={"name": "Z"}, headers={"X-Episode-Id": f"j{i}"}
            )
        assert sorted(crm.store.episodes) == sorted(live)
        await client.delete(f"/episodes/{live[0]}")
        assert (await client.post("/episodes", json={"task": task})).status_code == 201


async def test_the_orchestrator_keeps_every_mounted_fork_alive_while_the_episode_lives(
    tmp_path: Path,
) -> None:
    from tests.orchestrator_fixture import runtimes as make

    rts = make(tmp_path / "lib", ("crm", "desk"))
    orch = Orchestrator.embedded(rts, SETTINGS)
    opened = await orch.open(OpenRequest(task=task_create(distractors=("desk",))))
    eid = opened.episode_id
    for _ in range(3):  # busy in crm only: desk's fork is never called
        await orch.step(eid, step("crm__listContacts", {"limit": 1}))
    rts["desk"].store.episodes[eid].last_used -= 10 * rts["desk"].store.ttl_s  # idle far past its TTL
    assert await orch.keep_alive() == 2
    assert rts["desk"].store.reap() == 0 and rts["desk"].has_episode(eid)
    finished = await orch.finish(eid, "con_000031")
    assert finished.state == "finished"
    await orch.aclose()


async def test_a_dead_service_fork_refusal_at_capacity_is_a_clear_503(tmp_path: Path) -> None:
    from tests.orchestrator_fixture import runtimes as make

    rts = make(tmp_path / "lib", ("crm",))
    rts["crm"].store.max_episodes = 1
    orch = Orchestrator.embedded(rts, SETTINGS)
    await orch.open(OpenRequest(task=task_create(distractors=())))
    with pytest.raises(ServiceUnavailable, match="COMPOWORLD_MAX_EPISODES"):
        await orch.open(OpenRequest(task=task_create(distractors=())))
    assert len(rts["crm"].store.episodes) == 1
    started = time.monotonic()
    await orch.aclose()
    assert time.monotonic() - started < 5


async def test_a_stopped_service_is_unavailable_not_lost_and_its_episode_grades_once_it_resumes(
    tmp_path: Path,
) -> None:
    """SIGSTOP a real service process mid-episode: calls fail fast as unavailable (the episode lives),
    and after SIGCONT the same forks answer, so the finish grades the work the episode did."""
    import asyncio
    import os
    import signal
    import subprocess
    import sys

    lib = write_library(tmp_path / "lib", ("crm",))
    port = free_port()
    env = {**os.environ, "COMPOWORLD_ADMIN_TOKEN": "s3cret"}
    cmd = [sys.executable, "-m", "compoworld.cli", "serve", "crm", "--library", str(lib), "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as http:
            for _ in range(600):  # the process imports and loads the service first
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{url}/health")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the service process never answered /health")
        settings = Settings(admin_token="s3cret", service_timeout_s=1.0)
        orch = Orchestrator(ServiceDirectory.remote(settings, {"crm": [url]}))
        ep = await orch.open(OpenRequest(task=task_create(distractors=())))
        wrote = await orch.step(ep.episode_id, step("crm__createContact", ANN))
        assert tool_content(wrote.results[0])["success"] is True
        proc.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        out = await orch.step(ep.episode_id, step("crm__listContacts", {"limit": 1}))
        assert time.monotonic() - t0 < 8.0  # the call's timeout, not a hang
        assert tool_content(out.results[0])["error"]["code"] == "service_unavailable"
        assert out.done is False and out.state != "aborted"  # unavailable is not state lost
        proc.send_signal(signal.SIGCONT)
        fin = await orch.finish(ep.episode_id, "")
        assert fin.state == "finished"
        passed = {c.id: c.passed for c in fin.criteria}
        assert passed["c0"] is True and passed["c1"] is True  # graded on the episode's own forks
        await orch.aclose()
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(timeout=30)
