"""The orchestrator's hop to services (aiohttp): keep-alive that never reuses a closed connection,
one repeat of a request only where repeating cannot run anything twice, bounded answers.

A real uvicorn server on 127.0.0.1 (``tests.orchestrator_fixture.serving``).
"""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI, Request

from orchestrator.hop import KEEPALIVE_S, Hop, HopError, HopTooLarge
from tests.orchestrator_fixture import serving


def counting_app() -> tuple[FastAPI, dict[str, int]]:
    app = FastAPI()
    seen = {"get": 0, "post": 0}

    @app.get("/x")
    async def get_x() -> dict[str, int]:
        seen["get"] += 1
        return {"n": seen["get"]}

    @app.post("/x")
    async def post_x(request: Request) -> dict[str, object]:
        seen["post"] += 1
        return {"n": seen["post"], "echo": await request.json()}

    @app.get("/big")
    async def big() -> dict[str, str]:
        return {"blob": "x" * 100_000}

    return app, seen


async def test_a_connection_idle_past_the_servers_keep_alive_is_not_reused() -> None:
    """uvicorn closes idle connections after 5 s; the hop drops its own sooner (3 s)."""
    assert KEEPALIVE_S < 5
    app, _ = counting_app()
    hop = Hop(10.0, connect_s=5.0)
    async with serving(app) as url:
        assert (await hop.request("GET", f"{url}/x")).json() == {"n": 1}
        await asyncio.sleep(KEEPALIVE_S + 0.5)
        answer = await hop.request("POST", f"{url}/x", json={"a": "é"})  # no call id: never repeated
        assert answer.status_code == 200 and answer.json() == {"n": 1, "echo": {"a": "é"}}
    await hop.aclose()


async def test_requests_after_the_server_closed_idle_connections_still_run_exactly_once() -> None:
    app, seen = counting_app()
    hop = Hop(10.0, connect_s=5.0)
    async with serving(app, keep_alive_s=1) as url:  # a server that closes idle connections sooner
        for _ in range(3):
            assert (await hop.request("GET", f"{url}/x")).status_code == 200
            await asyncio.sleep(1.3)
            call = await hop.request("POST", f"{url}/x", json={}, headers={"X-Call-Id": "t.0.abc"})
            assert call.status_code == 200
            await asyncio.sleep(1.3)
    assert seen == {"get": 3, "post": 3}  # each ran once: a repeat only follows a cut connection
    await hop.aclose()


async def test_answers_over_the_limit_are_refused_and_dead_servers_are_hop_errors() -> None:
    app, _ = counting_app()
    hop = Hop(10.0, connect_s=2.0)
    async with serving(app) as url:
        with pytest.raises(HopTooLarge, match="limit"):
            await hop.request("GET", f"{url}/big", max_bytes=10_000)
        assert len((await hop.request("GET", f"{url}/big", max_bytes=200_000)).content) > 100_000
    with pytest.raises(HopError, match="ClientConnectorError"):
        await hop.request("GET", f"{url}/x")  # the server is gone
    await hop.aclose()
