"""The episode store's per-turn Lua scripts on connections of their own (``ScriptLane``).

A turn makes two script calls. Through ``redis.asyncio.Redis`` each also pays for the pool's
lock, the retry wrapper, metrics hooks and response callbacks, and through a connection's own
``send_packed_command`` / ``read_response`` for a ``wait_for`` around the write, a timeout
context and redis-py's general RESP parser around the read: more CPU than the round trip itself
on loopback (docs/performance.md). The lane keeps redis-py's connections (made by the client's
pool: the URL's host, database, password, TLS, the handshake) and its retry policy, writes the
packed command on the connection's stream and reads the one reply a script gives (a bulk string,
an integer, a status or an error) straight off its reader.

A connection whose call failed or was cancelled mid-way (a reply may still be on the wire) is
disconnected, so the next call on it reconnects and never reads a stale reply; an error reply
leaves it in step and is raised as redis-py's exception for it (``NoScriptError`` for a script
Redis has not cached: the lane then sends ``EVAL`` with the source). I/O failures are redis-py's
``ConnectionError`` / ``TimeoutError``, so its retry policy and ``store_errors`` see what they
saw before.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import Any

__all__ = ["Script", "ScriptLane"]


class Script:
    """A Lua script by its SHA1 (what ``EVALSHA`` names) and its source (``EVAL`` once it is not cached)."""

    __slots__ = ("sha", "source")

    def __init__(self, source: str) -> None:
        self.source = source.encode()
        self.sha = hashlib.sha1(self.source).hexdigest().encode()  # how Redis names scripts


def _arg(value: Any) -> bytes:
    """One argument as Redis gets it (redis-py's own encoding: numbers by ``repr``, text as UTF-8)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return repr(value).encode()


def _packed(*parts: bytes) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        out += (b"$%d\r\n" % len(part), part, b"\r\n")
    return b"".join(out)


class _ErrorReply:
    """An error reply, read whole: raised once the connection is known to be in step again."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ScriptLane:
    """The store's scripts sent on connections of its own (see the module docstring).

    It holds at most the pool's ``max_connections``; beyond them a call waits for one up to a
    ``BlockingConnectionPool``'s ``timeout`` (as the store's own pool does), or fails at once over
    a plain pool. ``calls`` counts the script calls made (a turn's round trips).
    """

    def __init__(self, client: Any) -> None:
        self.pool = client.connection_pool
        self.limit = int(getattr(self.pool, "max_connections", 0) or 256)
        self.wait_s: float | None = getattr(self.pool, "timeout", None)  # None: a plain pool's refusal
        self._idle: list[Any] = []
        self._slots = asyncio.Semaphore(self.limit)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.calls = 0

    async def _take(self) -> Any:
        from redis.exceptions import ConnectionError, MaxConnectionsError

        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections (and waiters) belong to the loop they were made in
            self._idle, self._slots, self._loop = [], asyncio.Semaphore(self.limit), loop
        if not self._slots.locked():
            await self._slots.acquire()  # free: taken without waiting
        elif self.wait_s is None:
            raise MaxConnectionsError("Too many connections")
        else:
            try:
                async with asyncio.timeout(self.wait_s):
                    await self._slots.acquire()
            except TimeoutError:
                raise ConnectionError("No connection available.") from None
        return self._idle.pop() if self._idle else self.pool.make_connection()

    def _give(self, conn: Any) -> None:
        if asyncio.get_running_loop() is self._loop:
            self._idle.append(conn)
            self._slots.release()

    async def __call__(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """``EVALSHA`` (``EVAL`` when Redis has not cached the script): the reply as bytes, an int,
        or None (a nil reply)."""
        from redis.exceptions import NoScriptError

        tail = [str(len(keys)).encode(), *(k.encode() for k in keys), *(_arg(a) for a in args)]
        conn = await self._take()
        self.calls += 1
        try:
            try:
                return await self._send(conn, _packed(b"EVALSHA", script.sha, *tail))
            except NoScriptError:  # a restarted or flushed Redis: EVAL caches it again
                return await self._send(conn, _packed(b"EVAL", script.source, *tail))
        finally:
            self._give(conn)

    async def _send(self, conn: Any, packed: bytes) -> Any:
        async def once() -> Any:
            if not conn.is_connected:
                await conn.connect_check_health(check_health=False)  # socket, TLS, AUTH/HELLO, SELECT
            reply = await _exchange(conn, packed)
            if isinstance(reply, _ErrorReply):  # the connection is in step: only this call failed
                raise conn._parser.parse_error(reply.text)
            return reply

        async def failed(error: Exception) -> None:
            await conn.disconnect()

        return await conn.retry.call_with_retry(once, failed)

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.disconnect()


async def _exchange(conn: Any, packed: bytes) -> bytes | int | _ErrorReply | None:
    """Write one command and read its one reply; any failure mid-way disconnects ``conn``."""
    from redis.exceptions import ConnectionError
    from redis.exceptions import TimeoutError as StoreTimeout

    try:
        if conn.socket_timeout:
            async with asyncio.timeout(conn.socket_timeout):
                return await _round_trip(conn._reader, conn._writer, packed)
        return await _round_trip(conn._reader, conn._writer, packed)
    except TimeoutError:
        await conn.disconnect(nowait=True)
        raise StoreTimeout("Timeout reading from the episode store") from None
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
        await conn.disconnect(nowait=True)
        raise ConnectionError(f"episode store connection failed: {type(exc).__name__}: {exc}") from exc
    except BaseException:  # cancelled mid-call: its reply may still come; never read by another call
        await conn.disconnect(nowait=True)
        raise


async def _round_trip(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, packed: bytes
) -> bytes | int | _ErrorReply | None:
    writer.write(packed)
    await writer.drain()
    line = await reader.readuntil(b"\r\n")
    kind, rest = line[:1], line[1:-2]
    if kind == b"$":
        size = int(rest)
        if size < 0:
            return None
        return (await reader.readexactly(size + 2))[:-2]
    if kind == b":":
        return int(rest)
    if kind == b"+":
        return rest
    if kind == b"-":
        return _ErrorReply(rest.decode("utf-8", "replace"))
    if kind == b"_":  # RESP3 null
        return None
    raise ValueError(f"a script reply of a kind the lane does not read ({line[:16]!r})")
