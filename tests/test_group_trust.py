"""The group reward board trusts no caller: it scores only episodes the orchestrator ran, with the
orchestrator's own grading, bounds every wait by configuration and ends every waiter on shutdown.

In-process over ``httpx.ASGITransport`` against the embedded app (real SQLite forks), then a real
``compoworld up`` process stopped with SIGTERM while a report waits on its group.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import free_port, task_create, write_library

ROOT = Path(__file__).resolve().parent.parent
ANN = {"name": "Ann Lee", "email": "ann@example.com", "company_id": 2}


@pytest.fixture
async def app(tmp_path: Path) -> Any:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    built, _ = build_embedded_app(
        tmp_path / "lib", Settings(admin_token="s3cret", group_timeout_max_s=60), tmp_path / "tasks.jsonl"
    )
    return built


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as c:
        yield c


async def _graded(client: httpx.AsyncClient, create: bool) -> tuple[str, list[bool]]:
    """An episode of ``task_create`` played (creating the contact or not) and finished."""
    eid = str((await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"])
    if create:
        call = {"id": "c1", "name": "crm__createContact", "arguments": ANN}
        assert (await client.post(f"/episodes/{eid}/step", json={"tool_calls": [call]})).status_code == 200
    finished = (await client.post(f"/episodes/{eid}/finish", json={"answer": ""})).json()
    return eid, [bool(c["passed"]) for c in finished["criteria"]]


def _report(eid: str, n: int = 1, **extra: Any) -> dict[str, Any]:
    return {"episode_id": eid, "expected_n": n, "timeout_s": 5, **extra}


async def test_reports_for_episodes_the_orchestrator_never_ran_are_refused(client: httpx.AsyncClient) -> None:
    for fake in ("e1", "made-up", "unopened-g-0"):
        resp = await client.post("/groups/g1/reward", json=_report(fake, 2, verdicts=[True, True]))
        assert resp.status_code == 404 and "no ended episode" in resp.json()["detail"]
    eid = str((await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"])
    live = await client.post("/groups/g1/reward", json=_report(eid, 2))
    assert live.status_code == 404  # not ended yet: nothing graded to report


async def test_two_fake_reports_neither_fill_the_group_nor_displace_the_real_rollout(
    client: httpx.AsyncClient,
) -> None:
    eid, verdicts = await _graded(client, create=False)
    assert not all(verdicts)
    for fake in ("fake-1", "fake-2"):
        got = await client.post("/groups/g2/reward", json=_report(fake, 2, verdicts=[True] * len(verdicts)))
        assert got.status_code == 404
    other, _ = await _graded(client, create=True)
    answers = await asyncio.gather(
        client.post("/groups/g2/reward", json=_report(eid, 2)),
        client.post("/groups/g2/reward", json=_report(other, 2)),
    )
    assert [a.status_code for a in answers] == [200, 200]
    assert all(a.json()["group_complete"] and a.json()["n_reported"] == 2 for a in answers)


async def test_an_episode_opened_in_a_group_reports_to_that_group_only(client: httpx.AsyncClient) -> None:
    opened = await client.post("/episodes", json={"task_id": "t-create", "group_id": "mine"})
    eid = str(opened.json()["episode_id"])
    assert (await client.post(f"/episodes/{eid}/finish", json={"answer": ""})).status_code == 200
    for other in ("theirs", "another"):  # a real episode cannot take a slot of someone else's group
        resp = await client.post(f"/groups/{other}/reward", json=_report(eid, 2))
        assert resp.status_code == 409 and "opened in another group" in resp.json()["detail"]
    own = await client.post("/groups/mine/reward", json=_report(eid, 1))
    assert own.status_code == 200 and own.json()["group_complete"]


async def test_group_and_episode_ids_are_bounded_in_length(client: httpx.AsyncClient) -> None:
    long = "g" * 257
    opened = await client.post("/episodes", json={"task_id": "t-create", "group_id": long})
    assert opened.status_code == 422
    assert (await client.post(f"/groups/{long}/reward", json=_report("e", 2))).status_code == 422
    assert (await client.post("/groups/g/reward", json=_report("e" * 257, 2))).status_code == 422
    fits = await client.post("/episodes", json={"task_id": "t-create", "group_id": "g" * 256})
    assert fits.status_code == 201


async def test_the_verdicts_are_the_orchestrator_s_grading_never_the_caller_s(
    client: httpx.AsyncClient,
) -> None:
    eid, verdicts = await _graded(client, create=False)
    lie = await client.post("/groups/g3/reward", json=_report(eid, verdicts=[True] * len(verdicts)))
    assert lie.status_code == 409 and "grading" in lie.json()["detail"]
    told = await client.post("/groups/g3/reward", json=_report(eid, verdicts=verdicts))
    silent = await client.post("/groups/g3/reward", json=_report(eid))  # a retry without verdicts
    assert told.status_code == silent.status_code == 200
    assert told.json() == silent.json() and told.json()["completion"] == 0.0
    assert told.json()["rubric_score"] == pytest.approx(sum(verdicts) / len(verdicts))


async def test_a_released_episode_reports_its_grading_and_a_forfeit_counts_as_all_false(
    client: httpx.AsyncClient,
) -> None:
    good, verdicts = await _graded(client, create=True)
    assert sum(verdicts) >= 2
    assert (await client.delete(f"/episodes/{good}")).status_code == 200  # forks freed before the report
    kept = await client.post("/groups/g4/reward", json=_report(good))
    assert kept.status_code == 200
    assert kept.json()["rubric_score"] == pytest.approx(sum(verdicts) / len(verdicts))
    forfeit, _ = await _graded(client, create=True)
    out = await client.post("/groups/g5/reward", json=_report(forfeit, aborted=True, verdicts=[]))
    assert out.status_code == 200 and out.json()["reward"] == 0.0
    dropped = str((await client.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"])
    await client.delete(f"/episodes/{dropped}")  # released live: aborted, so it counts as all False
    aborted = await client.post("/groups/g6/reward", json=_report(dropped))
    assert aborted.status_code == 200 and aborted.json()["rubric_score"] == 0.0


async def test_a_timeout_beyond_the_configured_bound_is_refused(client: httpx.AsyncClient) -> None:
    eid, _ = await _graded(client, create=False)
    resp = await client.post("/groups/g7/reward", json={**_report(eid, 2), "timeout_s": 61})
    assert resp.status_code == 422 and "limit 60" in resp.json()["detail"]


async def test_closing_the_board_ends_a_waiting_report_at_once_with_503(
    app: Any, client: httpx.AsyncClient
) -> None:
    eid, _ = await _graded(client, create=False)
    waiting = asyncio.create_task(client.post("/groups/g8/reward", json={**_report(eid, 2), "timeout_s": 60}))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    started = time.monotonic()
    for hook in app.state.on_exit:  # what run_asgi calls on SIGTERM
        hook()
    resp = await asyncio.wait_for(waiting, 10)
    assert resp.status_code == 503 and "shutting down" in resp.json()["detail"]
    assert time.monotonic() - started < 5


async def test_sigterm_ends_compoworld_up_while_a_report_waits_for_its_group(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COMPOWORLD_ADMIN_TOKEN": "s3cret"}
    cmd = [sys.executable, "-m", "compoworld.cli", "up", "--library", str(tmp_path / "lib")]
    cmd += ["--tasks", str(tmp_path / "tasks.jsonl"), "--port", str(port)]
    log = (tmp_path / "up.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            for _ in range(1200):  # a loaded machine starts Python slowly
                try:
                    if (await http.get("/health")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            eid, _ = await _graded(http, create=False)
            waiting = asyncio.create_task(
                http.post("/groups/g9/reward", json={**_report(eid, 2), "timeout_s": 600})
            )
            await asyncio.sleep(1.0)
            assert not waiting.done()
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            resp = await asyncio.wait_for(waiting, 60)
            assert resp.status_code == 503
        assert await asyncio.to_thread(proc.wait, 60) is not None
        assert time.monotonic() - started < 30, (tmp_path / "up.log").read_text()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
