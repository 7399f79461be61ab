"""Replicas found by resolving a headless Service's name: episodes spread over pods and stick to one.

Two real service processes listen on 127.0.0.1 and 127.0.0.2 (same port, both loopback). Only DNS is
stood in for: the resolver maps the cluster name to those two addresses, as a headless Service's
A records would (there is no cluster here).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import uvicorn

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from orchestrator.discovery import HttpService, ReplicaSet, resolve_host
from tests.orchestrator_fixture import free_port
from tests.runtime_fixture import write_crm_service

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
