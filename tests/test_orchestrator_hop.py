"""The orchestrator's hop to services (its lane for plain http, aiohttp otherwise): keep-alive that never reuses a closed connection,
one repeat of a request only where repeating cannot run anything twice, bounded answers.

A real uvicorn server on 127.0.0.1 (``tests.orchestrator_fixture.serving``).
"""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI, Request

from orchestrator import hop as hop_module
from orchestrator.hop import KEEPALIVE_S, Hop, HopError, HopTooLarge
from tests.orchestrator_fixture import serving


@pytest.fixture(params=["lane", "aiohttp"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each hop test on both of the hop's paths: its own lane (plain http) and aiohttp (the rest)."""
    if request.param == "aiohttp":
        monkeypatch.setattr(hop_module, "_plain_request", lambda *args: None)
    return str(request.param)


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


async def test_a_connection_idle_past_the_servers_keep_alive_is_not_reused(path: str) -> None:
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


async def test_requests_after_the_server_closed_idle_connections_still_run_exactly_once(path: str) -> None:
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


async def test_answers_over_the_limit_are_refused_and_dead_servers_are_hop_errors(path: str) -> None:
    app, _ = counting_app()
    hop = Hop(10.0, connect_s=2.0)
    async with serving(app) as url:
        with pytest.raises(HopTooLarge, match="limit"):
            await hop.request("GET", f"{url}/big", max_bytes=10_000)
        assert len((await hop.request("GET", f"{url}/big", max_bytes=200_000)).content) > 100_000
    with pytest.raises(HopError, match="cannot connect" if path == "lane" else "ClientConnectorError"):
        await hop.request("GET", f"{url}/x")  # the server is gone
    await hop.aclose()


async def _raw_server(answers: dict[bytes, bytes]) -> tuple[asyncio.AbstractServer, str]:
    """A loopback server answering each request line's path with canned bytes (then closing when
    the answer says so)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            path = head.split(b" ", 2)[1]
            writer.write(answers[path])
            await writer.drain()
            if b"Connection: close" in answers[path]:
                writer.close()
                return

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


async def test_the_lane_reads_chunked_unsized_and_compressed_answers() -> None:
    import gzip

    packed = gzip.compress(b'{"z": 1}')
    answers = {
        b"/chunked": b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n4\r\n: 1}\r\n0\r\n\r\n',
        b"/unsized": b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"b": 2}',
        b"/gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed)
        + packed,
        b"/garbage": b"HTTP/9 what\r\n\r\n",
    }
    server, url = await _raw_server(answers)
    hop = Hop(5.0, connect_s=2.0)
    try:
        for _ in range(2):  # the chunked answer's connection is reused
            assert (await hop.request("POST", f"{url}/chunked", json={"x": 1})).json() == {"a": 1}
        assert (await hop.request("GET", f"{url}/unsized")).json() == {"b": 2}
        assert (await hop.request("GET", f"{url}/gzip")).json() == {"z": 1}
        with pytest.raises(HopTooLarge):
            await hop.request("GET", f"{url}/gzip", max_bytes=4)  # 8 bytes once decompressed
        with pytest.raises(HopError):
            await hop.request("GET", f"{url}/garbage")
    finally:
        await hop.aclose()
        server.close()
        await server.wait_closed()


def test_only_plain_requests_take_the_lane() -> None:
    from orchestrator.hop import _plain_request

    plain = _plain_request("POST", "http://svc:8000/t/x?a=1", {"k": "é"}, {"X-Call-Id": "1.0.ab"})
    assert plain is not None
    host, port, head, body = plain
    assert (host, port) == ("svc", 8000) and body == '{"k": "é"}'.encode()
    assert (
        head.startswith(b"POST /t/x?a=1 HTTP/1.1\r\nHost: svc:8000\r\n") and b"X-Call-Id: 1.0.ab\r\n" in head
    )
    assert b"Content-Length: 11\r\n" in head
    for method, url, headers in [
        ("POST", "https://svc/t", {}),  # TLS: aiohttp
        ("POST", "http://u:p@svc/t", {}),  # credentials
        ("POST", "http://svc/a b", {}),  # a path aiohttp would quote
        ("POST", "http://svc/é", {}),
        ("POST", "http://svc/t", {"X-A": "x\r\nInjected: 1"}),  # a header that is not one line
        ("POST", "http://svc/t", {"Bad Name": "x"}),
        ("HEAD", "http://svc/t", {}),
    ]:
        assert _plain_request(method, url, None, headers) is None, (method, url, headers)


async def test_a_redirect_is_followed_as_aiohttp_follows_it() -> None:
    app, _ = counting_app()

    @app.get("/old")
    async def old() -> object:
        from fastapi.responses import RedirectResponse

        return RedirectResponse("/x", status_code=307)

    hop = Hop(10.0, connect_s=5.0)
    async with serving(app) as url:
        assert (await hop.request("GET", f"{url}/old")).json() == {"n": 1}
    await hop.aclose()


async def test_callers_beyond_the_lanes_connections_wait_for_one(path: str) -> None:
    app, _ = counting_app()
    hop = Hop(10.0, connect_s=5.0, max_connections=3)
    async with serving(app) as url:
        answers = await asyncio.gather(*(hop.request("POST", f"{url}/x", json={"i": i}) for i in range(30)))
        assert sorted(a.json()["echo"]["i"] for a in answers) == list(range(30))
        assert sum(len(v) for v in hop._lane._idle.values()) <= 3  # (none on aiohttp's path)
    await hop.aclose()
