"""uvicorn's HTTP protocol with a response's head and body sent in one write.

uvicorn (0.55, httptools) writes the status line and headers when the app sends
``http.response.start`` and the body when it sends ``http.response.body``: two ``send`` calls on
the socket, two TCP segments, and on loopback the peer may wake for the first alone. Every tool
call crosses at least one such response (a service's), a call through the orchestrator two or
three. ``coalescing_protocol`` wraps each connection's transport so that a lone write (the head)
is held until the next one (the body), and the two leave at once in one ``write``; a write that
nothing follows in the same turn of the event loop is sent by a ``call_soon`` callback. The body
is sent the moment it is written, not at the end of the turn: the work a server does after its
answer (middleware unwinding, the request's cleanup) stays off the answer's path. Order is kept
(at most one write is held, and it leaves before anything after it); a close sends it first; an
abort drops it, as the transport itself would. Flow control is the transport's own.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["CoalescingTransport", "coalescing_protocol"]


class CoalescingTransport:
    """A write transport that holds a lone write until the next one (see the module docstring)."""

    __slots__ = ("_held", "_loop", "_scheduled", "transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._scheduled = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if self._held is not None:  # the next piece (a body after its head): both leave now, together
            held, self._held = self._held, None
            self.transport.write(held + bytes(data))
            return
        self._held = bytes(data)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        """Send the held write now (nothing followed it in this loop turn)."""
        self._scheduled = False
        held, self._held = self._held, None
        if held is not None and not self.transport.is_closing():
            self.transport.write(held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def abort(self) -> None:
        self._held = None
        self.transport.abort()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size() + len(self._held or b"")

    def __getattr__(self, name: str) -> Any:  # is_closing, get_extra_info, pause_reading, ...
        return getattr(self.transport, name)


def coalescing_protocol() -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol (``uvicorn[standard]`` installs httptools) over ``CoalescingTransport``."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class CoalescingHttpToolsProtocol(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.transport = CoalescingTransport(transport, self.loop)  # type: ignore[assignment]

    return CoalescingHttpToolsProtocol
