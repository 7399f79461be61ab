"""A response's head and body leave in one write (``compoworld.runtime.coalesce``), and nothing
else about the connection changes: order, close, abort, streaming, keep-alive."""

from __future__ import annotations

import asyncio
from asyncio import selector_events
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from compoworld.runtime.coalesce import CoalescingTransport, coalescing_protocol
from tests.orchestrator_fixture import serving


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


async def test_a_lone_write_is_held_until_the_next_and_both_leave_together_in_order() -> None:
    real = FakeTransport()
    t = CoalescingTransport(real, asyncio.get_running_loop())  # type: ignore[arg-type]
    t.write(b"HTTP/1.1 200 OK\r\n\r\n")
    t.write(b"")
    assert real.writes == [] and t.get_write_buffer_size() == 19
    t.write(b"{}")  # the body: sent at once with the head, not at the end of the turn
    assert real.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
    t.writelines([b"a", b"b", b"c"])
    assert real.writes[1:] == [b"ab"]  # "c" is held: nothing followed it yet
    await asyncio.sleep(0)
    assert real.writes[1:] == [b"ab", b"c"]
    t.write(b"next")
    await asyncio.sleep(0)
    assert real.writes[3:] == [b"next"]
    assert t.get_extra_info("peername") == ("127.0.0.1", 1)  # everything else is the transport's


async def test_close_sends_what_is_pending_first_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    real = FakeTransport()
    t = CoalescingTransport(real, loop)  # type: ignore[arg-type]
    t.write(b"last words")
    t.close()
    assert real.writes == [b"last words"] and real.closed
    await asyncio.sleep(0)  # the scheduled flush finds nothing left and a closed transport
    assert real.writes == [b"last words"]
    cut = FakeTransport()
    t = CoalescingTransport(cut, loop)  # type: ignore[arg-type]
    t.write(b"never sent")
    t.abort()
    await asyncio.sleep(0)
    assert cut.writes == [] and cut.aborted


async def _stream(request: Request) -> StreamingResponse:
    async def chunks() -> Any:
        for i in range(3):
            yield f"chunk{i};".encode()
            await asyncio.sleep(0.01)

    return StreamingResponse(chunks(), media_type="text/plain")


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"got": (await request.json())["n"], "pad": "x" * 200_000})


APP = Starlette(routes=[Route("/echo", _echo, methods=["POST"]), Route("/stream", _stream)])


async def test_a_served_app_answers_plain_large_streamed_and_kept_alive_responses() -> None:
    assert issubclass(coalescing_protocol(), asyncio.Protocol)
    async with serving(APP) as base, httpx.AsyncClient(base_url=base) as http:
        for n in range(5):  # one kept-alive connection, each answer whole and in order
            resp = await http.post("/echo", json={"n": n})
            assert resp.status_code == 200 and resp.json()["got"] == n and len(resp.json()["pad"]) == 200_000
        async with http.stream("GET", "/stream") as resp:
            parts = [part async for part in resp.aiter_text()]
        assert "".join(parts) == "chunk0;chunk1;chunk2;"
        missing = await http.get("/nope")
        assert missing.status_code == 404


async def test_an_answers_head_and_body_leave_the_server_in_one_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[bytes] = []
    socket_transport: Any = selector_events._SelectorSocketTransport  # type: ignore[attr-defined]
    original = socket_transport.write

    def write(self: Any, data: Any) -> None:
        sent.append(bytes(data))
        original(self, data)

    monkeypatch.setattr(socket_transport, "write", write)
    async with serving(APP) as base:
        host, port = base.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n")
        writer.write(b'content-length: 8\r\n\r\n{"n": 7}')
        head = await reader.readuntil(b"\r\n\r\n")
        size = next(
            int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
        )
        body = await reader.readexactly(size)
        writer.close()
        await writer.wait_closed()
    assert b'"got":7' in body
    answers = [w for w in sent if w.startswith(b"HTTP/1.1 200")]
    assert len(answers) == 1 and answers[0].endswith(body)  # the status line, headers and body: one write
