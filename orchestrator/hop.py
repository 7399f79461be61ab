"""The orchestrator's hop to remote services: its own keep-alive lane for plain http, aiohttp otherwise.

Every tool call of a remote deployment crosses this hop, so its cost is paid on every step.
Measured on loopback (``bench/bench_hop.py``, side by side in one run), an
``httpx.AsyncClient`` POST costs about twice an aiohttp one, most of it in httpcore and anyio
(see docs/performance.md), so the hop uses aiohttp while the rest of the project (the
orchestrator client, tests, verification) keeps httpx. The departure is written down in
docs/design-notes.md.

Idle keep-alive connections are dropped after ``KEEPALIVE_S`` (3 s), under uvicorn's 5 s: a
connection the server already closed is never reused (aiohttp keeps them 15 s by default, and a
reused dead one fails as ``ServerDisconnectedError``). A request that still meets a connection
cut before its answer (``ServerDisconnectedError``, or ``ClientOSError``:
"Can not write request body") is sent once more when repeating it cannot run anything twice: GET,
DELETE, and tool calls that carry an ``X-Call-Id`` (a service answers a call it already ran from
its memory of it).

Plain ``http://`` requests go out on ``_Lane``: keep-alive connections of the hop's own, the
request written in one piece and its answer parsed by httptools (what uvicorn parses with). On
loopback (``bench/bench_hop.py``, side by side) a tool call through the lane took 0.34 ms p50 and
108 us of the caller's CPU against 0.47 ms and 261 us through aiohttp, and 16 callers made 1.79x
the calls per second (docs/performance.md). The lane keeps the hop's rules: idle connections dropped after
``KEEPALIVE_S``, one repeat of a cut request only where repeating cannot run anything twice,
answers bounded by ``max_bytes``, the same total and connect timeouts, at most
``max_connections`` connections. Everything else (https, credentials in the URL, a path or header
the lane does not write as is, HEAD, a redirect) goes through aiohttp as before.

A session belongs to the event loop it was made in; ``Hop`` makes one lazily in the running
loop (the orchestrator app is built before uvicorn starts its loop) and a new one if it is used
from another loop (tests that run each case in a fresh loop).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import zlib
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httptools

__all__ = ["KEEPALIVE_S", "Hop", "HopError", "HopResponse", "HopTimeout", "HopTooLarge"]

KEEPALIVE_S = 3.0


class HopError(Exception):
    """The request did not get an answer: refused, cut, or not HTTP."""


class HopTimeout(Exception):
    """No answer within the hop's timeout."""


class HopTooLarge(Exception):
    """The answer is bigger than the caller's ``max_bytes`` (declared, or read so far)."""


class HopResponse:
    """What the orchestrator reads of an answer: status and body (read in full)."""

    __slots__ = ("content", "status_code")

    def __init__(self, status_code: int, content: bytes) -> None:
        self.status_code = status_code
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


class _Cut(Exception):
    """The lane's connection closed before the whole answer came (or while the request was written)."""


#: A pooled connection the server had closed: cut before the answer, or while the request was written.
_CUT = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, _Cut)

#: What the lane writes as it is in a request target (anything else: aiohttp, which quotes it)
_PLAIN_TARGET = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*")
_LANE_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection of the lane: one request at a time, httptools parsing."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[tuple[int, bytes, bool]] | None = None
        self._limit: int | None = None
        self._reset()

    def _reset(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._headers: dict[bytes, bytes] = {}
        self._headed = False
        self._until_close = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # bytes nobody asked for (an idle connection): never reuse it
            self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(HopError("the service answered with a protocol upgrade"))
        except httptools.HttpParserError as exc:
            if self._waiter is None or self._waiter.done():  # already failed (too large), or unasked
                self.close()
                return
            self._fail(HopError(f"not an HTTP answer ({exc})"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            if self._headed and self._until_close:  # an answer without a length ends with the connection
                self._done(keep=False)
            else:
                self._waiter.set_exception(_Cut(f"connection closed before the answer ({exc or 'EOF'})"))

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self._headed = True
        status = self.parser.get_status_code()
        length = self._headers.get(b"content-length")
        chunked = b"chunked" in self._headers.get(b"transfer-encoding", b"").lower()
        self._until_close = length is None and not chunked and status not in (204, 304) and status >= 200
        declared = int(length) if length is not None and length.strip().isdigit() else None
        if declared is not None and self._limit is not None and declared > self._limit:
            self._fail(HopTooLarge(f"a result of {declared} bytes (the limit is {self._limit})"))

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._limit is not None and self._size > self._limit:
            self._fail(HopTooLarge(f"a result over {self._limit} bytes (the limit)"))
            return
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        self._done(keep=self.parser.should_keep_alive())

    # -- the lane's side
    def _done(self, *, keep: bool) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is None or waiter.done():
            return
        body = b"".join(self._chunks)
        encoding = self._headers.get(b"content-encoding", b"identity").strip().lower()
        try:
            if encoding in (b"gzip", b"x-gzip"):
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            elif encoding == b"deflate":
                body = zlib.decompress(body)
            elif encoding not in (b"identity", b""):
                raise HopError(
                    f"an answer in an encoding the hop cannot read ({encoding.decode(errors='replace')})"
                )
        except (zlib.error, HopError) as exc:
            waiter.set_exception(
                exc if isinstance(exc, HopError) else HopError(f"a broken {encoding!r} answer")
            )
            self.close()
            return
        if self._limit is not None and len(body) > self._limit:
            waiter.set_exception(HopTooLarge(f"a result over {self._limit} bytes (the limit)"))
            self.close()
            return
        waiter.set_result((self.parser.get_status_code(), body, keep and not self.closed))

    def _fail(self, exc: Exception) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)
        self.close()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def exchange(self, request: bytes, limit: int | None) -> tuple[int, bytes, bool]:
        """Write ``request`` and wait for its whole answer: (status, body, reusable afterwards)."""
        assert self.transport is not None
        if self.closed or self.transport.is_closing():
            raise _Cut("the connection was closed while idle")
        self._reset()
        self._limit = limit
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self._waiter


class _Lane:
    """The hop's own keep-alive connections for plain ``http://`` (see the module docstring)."""

    def __init__(self, timeout_s: float, connect_s: float, max_connections: int) -> None:
        self.timeout_s, self.connect_s = timeout_s, connect_s
        self.limit = max_connections
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._slots = asyncio.Semaphore(max_connections)
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections belong to the loop they were opened in
            self._idle, self._slots, self._loop = {}, asyncio.Semaphore(self.limit), loop

    def _reuse(self, host: str, port: int) -> _Conn | None:
        """An idle connection to ``host:port`` still fresh and open (stale ones are closed)."""
        idle = self._idle.get((host, port))
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if not conn.closed and now - conn.idle_since < KEEPALIVE_S:
                return conn
            conn.close()
        return None

    async def _connect(self, host: str, port: int) -> _Conn:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_s):
                _, conn = await loop.create_connection(_Conn, host, port)
        except OSError as exc:
            raise HopError(f"cannot connect to {host}:{port}: {type(exc).__name__}: {exc}") from exc
        return conn

    def _give(self, host: str, port: int, conn: _Conn, keep: bool) -> None:
        if keep and not conn.closed:
            conn.idle_since = time.monotonic()
            self._idle.setdefault((host, port), []).append(conn)
        else:
            conn.close()

    async def request(
        self, host: str, port: int, head: bytes, body: bytes, url: str, max_bytes: int | None
    ) -> HopResponse:
        self._current()
        try:
            async with asyncio.timeout(self.timeout_s):
                if self._slots.locked():  # all connections busy: wait for one, within the connect time
                    async with asyncio.timeout(self.connect_s):
                        await self._slots.acquire()
                else:
                    await self._slots.acquire()
                try:
                    conn = self._reuse(host, port) or await self._connect(host, port)
                    try:
                        status, content, keep = await conn.exchange(head + body, max_bytes)
                    except BaseException:
                        conn.close()
                        raise
                    self._give(host, port, conn, keep)
                finally:
                    self._slots.release()
        except TimeoutError as exc:
            raise HopTimeout(f"no answer from {url} ({type(exc).__name__})") from exc
        except _Cut as exc:
            raise HopError(f"{type(exc).__name__}: {exc}") from exc
        return HopResponse(status, content)

    def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()


class Hop:
    """``request(method, url, json=..., headers=...)`` over a pooled keep-alive session."""

    def __init__(self, timeout_s: float, connect_s: float, max_connections: int = 512) -> None:
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, connect=connect_s)
        self._limit = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lane = _Lane(timeout_s, connect_s, max_connections)

    def _current(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._limit, limit_per_host=self._limit, ttl_dns_cache=30, keepalive_timeout=KEEPALIVE_S
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                json_serialize=lambda v: json.dumps(v, ensure_ascii=False),
                auto_decompress=True,
            )
            self._loop = loop
        return self._session

    async def request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        max_bytes: int | None = None,
    ) -> HopResponse:
        """The answer, read in full; with ``max_bytes``, refused (``HopTooLarge``) past that size
        without reading the rest."""
        repeatable = method in ("GET", "HEAD", "DELETE") or "X-Call-Id" in (headers or {})
        try:
            return await self._either(method, url, json, headers, max_bytes)
        except HopError as exc:
            if not (repeatable and isinstance(exc.__cause__, _CUT)):
                raise
        return await self._either(method, url, json, headers, max_bytes)

    async def _either(
        self, method: str, url: str, json: Any, headers: dict[str, str] | None, max_bytes: int | None
    ) -> HopResponse:
        """The lane when it can write this request as it is, else aiohttp; a redirect is aiohttp's to follow."""
        plain = _plain_request(method, url, json, headers)
        if plain is None:
            return await self._once(method, url, json, headers, max_bytes)
        answer = await self._lane.request(*plain, url, max_bytes)
        if answer.status_code in _REDIRECTS:
            return await self._once(method, url, json, headers, max_bytes)
        return answer

    async def _once(
        self, method: str, url: str, json: Any, headers: dict[str, str] | None, max_bytes: int | None
    ) -> HopResponse:
        session = self._current()
        try:
            async with session.request(method, url, json=json, headers=headers) as resp:
                if max_bytes is None:
                    return HopResponse(resp.status, await resp.read())
                if resp.content_length is not None and resp.content_length > max_bytes:
                    raise HopTooLarge(f"a result of {resp.content_length} bytes (the limit is {max_bytes})")
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.content.iter_chunked(1 << 16):
                    size += len(chunk)
                    if size > max_bytes:
                        raise HopTooLarge(f"a result over {max_bytes} bytes (the limit)")
                    chunks.append(chunk)
                return HopResponse(resp.status, b"".join(chunks))
        except TimeoutError as exc:
            raise HopTimeout(f"no answer from {url} ({type(exc).__name__})") from exc
        except aiohttp.ClientError as exc:
            raise HopError(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        self._lane.aclose()
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()


_TARGETS: dict[str, tuple[str, int, str, str] | None] = {}  # url -> (host, port, target, netloc)
_TARGETS_MAX = 4096


def _target(url: str) -> tuple[str, int, str, str] | None:
    """Where a plain ``http://`` URL points, or None (https, credentials, a path to quote): cached,
    since an orchestrator sends the same few URLs again and again."""
    found = _TARGETS.get(url, False)
    if found is not False:
        return found  # type: ignore[return-value]
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    out: tuple[str, int, str, str] | None = None
    if parts.scheme == "http" and not (parts.username or parts.password) and parts.hostname:
        try:
            port = parts.port or 80
        except ValueError:
            port = -1
        if port > 0 and _PLAIN_TARGET.fullmatch(target):
            out = (parts.hostname, port, target, parts.netloc)
    if len(_TARGETS) >= _TARGETS_MAX:
        _TARGETS.clear()
    _TARGETS[url] = out
    return out


def _plain_request(
    method: str, url: str, body: Any, headers: dict[str, str] | None
) -> tuple[str, int, bytes, bytes] | None:
    """(host, port, head, body) of a request the lane writes as it is; None for aiohttp's path."""
    if method not in _LANE_METHODS:
        return None
    where = _target(url)
    if where is None:
        return None
    host, port, target, netloc = where
    lines = [f"{method} {target} HTTP/1.1", f"Host: {netloc}", "Accept: */*"]
    for name, value in (headers or {}).items():
        if not _token(name) or any(c in value for c in "\r\n\0"):
            return None
        lines.append(f"{name}: {value}")
    data = b""
    if body is not None:
        data = json.dumps(body, ensure_ascii=False).encode()
        lines.append("Content-Type: application/json")
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(data)}")
    try:
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError:
        return None
    return host, port, head, data


_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def _token(name: str) -> bool:
    return bool(_TOKEN.fullmatch(name))
