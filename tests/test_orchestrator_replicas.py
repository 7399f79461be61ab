"""Replicas, both kinds: orchestrator replicas behind one Redis, and service pods behind one name.

Orchestrator replicas (issue 13): three real orchestrator processes share a real ``redis-server``
on loopback (``tests/replica_mesh.py``); rollouts of ``task_create`` in groups of four run
concurrently, every request sent to a random replica, and one replica is SIGKILLed a third of the
way through. The same rollouts replayed on a fourth orchestrator alone (in-memory store) are the
reference: every episode must finish, leave the same service state and write count (no lost and no
doubled writes), and get the same group reward; afterwards no fork and no episode key is left.
CI runs 48 episodes; the issue's 300 run under ``-m slow`` (``pytest -m slow -k replicas``).

Service pods: two real service processes listen on 127.0.0.1 and 127.0.0.2 (same port, both
loopback). Only DNS is stood in for: the resolver maps the cluster name to those two addresses, as
a headless Service's A records would (there is no cluster here).
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis
import uvicorn

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from orchestrator.remote import HttpService, ReplicaSet, resolve_host
from tests.orchestrator_fixture import free_port
from tests.redis_fixture import redis_server
from tests.replica_mesh import ADMIN, SERVICES, Driver, Outcome, mesh, rollout_script
from tests.runtime_fixture import write_crm_service

__all__ = ["redis_server"]

SETTINGS = Settings(admin_token="tok")
HOST = "crm.cw.svc.cluster.local"


@asynccontextmanager
async def pod(runtime: ServiceRuntime, address: str, port: int) -> AsyncIterator[None]:
    server = uvicorn.Server(
        uvicorn.Config(create_service_app(runtime, SETTINGS), host=address, port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        await task


async def test_episodes_spread_over_resolved_pods_and_stay_pinned(tmp_path: Path) -> None:
    port = free_port()
    pods = {
        a: ServiceRuntime.from_folder(write_crm_service(tmp_path / a), SETTINGS)
        for a in ("127.0.0.1", "127.0.0.2")
    }
    lookups: list[str] = []

    async def dns(host: str, _port: int) -> list[str]:
        lookups.append(host)
        assert host == HOST
        return sorted(pods)

    async with (
        pod(pods["127.0.0.1"], "127.0.0.1", port),
        pod(pods["127.0.0.2"], "127.0.0.2", port),
        httpx.AsyncClient() as http,
    ):
        svc = HttpService("crm", [f"http://{HOST}:{port}"], http, "tok", resolver=dns)
        episodes = [f"ep-{i}" for i in range(24)]
        for ep in episodes:
            await svc.fork(ep, "2026-02-01")
            out = await svc.call(ep, "createContact", {"name": ep})
            assert out.success, out
        for ep in episodes:
            holders = [a for a, rt in pods.items() if rt.has_episode(ep)]
            assert len(holders) == 1  # state lives in exactly one pod
            rows = await svc.select(ep, "contact", {"name": ep})
            assert len(rows) == 1  # and the episode keeps reaching that pod
        assert all(rt.store.episodes for rt in pods.values())  # both pods got episodes
        assert len(lookups) == 1  # answers are cached for the TTL
        for ep in episodes:
            await svc.delete(ep)
        assert not any(rt.store.episodes for rt in pods.values())


async def test_a_failed_lookup_falls_back_to_the_configured_url() -> None:
    async def broken(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    replicas = ReplicaSet(["http://crm:8000"], broken)
    assert await replicas.candidates() == ["http://crm:8000"]
    assert await ReplicaSet(["http://x:1"]).candidates() == ["http://x:1"]


async def test_the_real_resolver_answers_for_localhost() -> None:
    assert "127.0.0.1" in await resolve_host("localhost", 80)


async def run_replicas(work: Path, redis_url: str, groups: int, n: int = 4) -> dict[str, float]:
    """The replica run and its solo replay, checked against each other; returns a few figures."""
    limits = httpx.Limits(max_connections=4 * groups * n, max_keepalive_connections=64)
    t0 = time.monotonic()
    async with mesh(work, redis_url, replicas=3, lease_s=2.0) as m, httpx.AsyncClient(limits=limits) as http:
        print(f"mesh up in {time.monotonic() - t0:.1f} s")
        steps = groups * sum(len(rollout_script(i)[0]) for i in range(n))
        armed, killed_at = [False], [0]

        def kill_a_third_of_the_way(done: int) -> None:
            if armed[0] and not killed_at[0] and done >= steps // 3:
                m.kill(0)
                killed_at[0] = done

        gids = [f"g{k}-{uuid.uuid4().hex[:6]}" for k in range(groups)]
        shared = Driver(http, m.replicas, m.services, random.Random(13), on_step=kill_a_third_of_the_way)
        start = time.monotonic()
        outcomes = await shared.run(gids, n, arm=lambda: armed.__setitem__(0, True))
        took = time.monotonic() - start
        print(f"replica run: {len(outcomes)} episodes in {took:.1f} s, {shared.retries} retries")
        solo = await Driver(http, [m.solo], m.services, random.Random(13)).run(gids, n)
        print(f"solo replay done at {time.monotonic() - t0:.1f} s")

        assert killed_at[0] and m.procs[0].returncode == -9, "replica 0 was not killed mid-run"
        assert shared.served_by.get(m.replicas[0], 0) > 0 and shared.retries > 0
        assert len(outcomes) == groups * n  # no episode lost
        check_same(outcomes, solo)
        for svc in SERVICES:  # every fork released, the replicas' and the solo run's alike
            listed = await http.get(f"{m.services}/services/{svc}/admin/episodes", headers=ADMIN)
            assert listed.json()["episodes"] == [], svc
        left = [k.decode() for k in await aioredis.Redis.from_url(redis_url).keys("cw:*")]
        # groups and the graded outcomes they were scored from expire by TTL
        assert all(k.startswith(("cw:grp:", "cw:grpr:", "cw:grpo:")) for k in left), left
        return {
            "episodes": len(outcomes),
            "seconds": took,
            "retries": shared.retries,
            "killed_at": killed_at[0],
        }


def check_same(outcomes: list[Outcome], solo: list[Outcome]) -> None:
    """Each rollout of the replica run left exactly what the solo replay left."""
    reference = {o.key: o for o in solo}
    for got in outcomes:
        want = reference[got.key]
        assert got.results == want.results, got.key
        assert (got.verdicts, got.score) == (want.verdicts, want.score), got.key
        assert got.hashes == want.hashes and got.writes == want.writes, (got.key, got.writes, want.writes)
        assert got.reward["group_complete"] and not got.reward["fallback"], got.key
        assert got.reward == want.reward, got.key
    rewards = {round(o.reward["reward"], 6) for o in outcomes}
    assert len(rewards) > 2  # the four behaviours really are told apart by the group reward


async def test_three_replicas_behind_one_redis_match_a_solo_run_and_survive_a_kill(
    tmp_path: Path, redis_server: str
) -> None:
    figures = await run_replicas(tmp_path, redis_server, groups=12)
    assert figures["episodes"] == 48


@pytest.mark.slow
async def test_three_hundred_concurrent_episodes_over_three_replicas(
    tmp_path: Path, redis_server: str
) -> None:
    figures = await run_replicas(tmp_path, redis_server, groups=75)
    assert figures["episodes"] == 300
    print(f"replicas: {figures}")
