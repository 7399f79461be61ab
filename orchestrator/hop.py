"""The orchestrator's hop to remote services: one pooled aiohttp session per event loop.

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

A session belongs to the event loop it was made in; ``Hop`` makes one lazily in the running
loop (the orchestrator app is built before uvicorn starts its loop) and a new one if it is used
from another loop (tests that run each case in a fresh loop).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

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


#: A pooled connection the server had closed: cut before the answer, or while the request was written.
_CUT = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


class Hop:
    """``request(method, url, json=..., headers=...)`` over a pooled keep-alive session."""

    def __init__(self, timeout_s: float, connect_s: float, max_connections: int = 512) -> None:
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, connect=connect_s)
        self._limit = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

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
            return await self._once(method, url, json, headers, max_bytes)
        except HopError as exc:
            if not (repeatable and isinstance(exc.__cause__, _CUT)):
                raise
        return await self._once(method, url, json, headers, max_bytes)

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
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()
