"""Where the orchestrator keeps its episodes: records, their step logs, and each episode's turn lock.

One interface, two stores:

- ``InMemoryEpisodeStore``: one orchestrator process (the embedded default, a laptop, CI). Records
  are kept as objects; nothing is serialised.
- ``RedisEpisodeStore``: several orchestrator replicas behind one Redis; any replica serves any
  request of any episode. Keys (prefix ``p``, default ``cw``)::

      p:ep:{id}     hash: v = the record's version, r = the record as JSON without its messages
      p:log:{id}    list: the step log (messages), appended turn by turn
      p:live        zset id -> last activity (wall clock) of live episodes
      p:done        zset id -> last activity of terminal ones, until they are forgotten
      p:lock:{id}   the episode's turn lock: leased, renewed while held, so a replica that dies
                    holding it blocks the episode for one lease at most

  Every write is one Lua script that checks the record's ``version`` (a fencing token: a replica
  whose lease ran out cannot overwrite a newer turn), then sets the record, appends the new
  messages and moves the id between the indexes, atomically.

  The step log only grows (``RPUSH``), so a replica keeps the decoded log of the episodes it
  served lately (bounded, least recently used first out) and a read fetches the record and only
  the messages past the ones it holds, in one script: a turn's cost does not grow with the
  episode. A log shorter than the cached one (deleted, then reused) is read whole.

The handlers take ``lock(id)`` around a turn and ``put`` after every change.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

from orchestrator.errors import EpisodeBusy, EpisodeConflict
from orchestrator.lifecycle import EpisodeRecord, record_from_json, record_to_json

__all__ = ["EpisodeStore", "InMemoryEpisodeStore", "RedisEpisodeStore", "store_errors", "store_from_url"]

log = logging.getLogger(__name__)


class EpisodeStore(Protocol):
    """Episode records by id, their indexes by last activity, and one turn lock per episode."""

    shared: bool  # other orchestrator processes use the same records

    async def get(self, episode_id: str) -> EpisodeRecord | None: ...
    async def put(self, record: EpisodeRecord) -> None: ...
    async def pop(self, episode_id: str) -> EpisodeRecord | None: ...
    async def ids(self) -> list[str]: ...
    async def count_live(self) -> int: ...
    async def count_held(self) -> int: ...
    async def idle(self, live_before: float, done_before: float, limit: int) -> list[str]: ...
    def lock(self, episode_id: str, wait_s: float) -> contextlib.AbstractAsyncContextManager[None]: ...
    async def aclose(self) -> None: ...


class InMemoryEpisodeStore:
    """A dict of records; the live set is kept on every ``put`` so opening stays O(1)."""

    shared = False  # this process owns every record: closing the orchestrator releases them

    def __init__(self) -> None:
        self._records: dict[str, EpisodeRecord] = {}
        self._live: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, episode_id: str) -> EpisodeRecord | None:
        return self._records.get(episode_id)

    async def put(self, record: EpisodeRecord) -> None:
        record.version += 1
        record.logged = len(record.messages)
        self._records[record.id] = record
        if record.terminal:
            self._live.discard(record.id)
        else:
            self._live.add(record.id)

    async def pop(self, episode_id: str) -> EpisodeRecord | None:
        self._live.discard(episode_id)
        lock = self._locks.get(episode_id)
        if lock is not None and not lock.locked():
            del self._locks[episode_id]
        return self._records.pop(episode_id, None)

    async def ids(self) -> list[str]:
        return sorted(self._records)

    async def count_live(self) -> int:
        return len(self._live)

    async def count_held(self) -> int:
        """Every episode held, live or ended (what capacity counts)."""
        return len(self._records)

    async def idle(self, live_before: float, done_before: float, limit: int) -> list[str]:
        out = []
        for rec in self._records.values():
            if rec.last_active < (done_before if rec.terminal else live_before):
                out.append(rec.id)
                if len(out) >= limit:
                    break
        return out

    @contextlib.asynccontextmanager
    async def lock(self, episode_id: str, wait_s: float) -> AsyncIterator[None]:
        lock = self._locks.setdefault(episode_id, asyncio.Lock())
        if not lock.locked():
            await lock.acquire()  # free: taken at once, without a waiting task
        elif wait_s <= 0:
            raise EpisodeBusy("the episode is handling another request")
        else:
            try:
                await asyncio.wait_for(lock.acquire(), timeout=wait_s)
            except TimeoutError:
                raise EpisodeBusy(f"the episode stayed busy for {wait_s:g} s") from None
        try:
            yield
        finally:
            lock.release()
            if episode_id not in self._records and not lock.locked():
                self._locks.pop(episode_id, None)

    async def aclose(self) -> None:
        return None


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """A Redis failure is the environment's, not the request's: EpisodeBusy (503), so callers retry."""
    from redis.exceptions import LockError, RedisError

    try:
        yield
    except LockError:
        raise
    except RedisError as exc:
        raise EpisodeBusy(f"the episode store did not answer ({type(exc).__name__}: {exc}); retry") from exc


# KEYS: ep, log, live, done.  ARGV: expected version, record JSON, terminal (0/1), score, messages...
_PUT = """
local version = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if version ~= tonumber(ARGV[1]) then return {0, version} end
redis.call('HSET', KEYS[1], 'v', version + 1, 'r', ARGV[2])
if #ARGV > 4 then redis.call('RPUSH', KEYS[2], unpack(ARGV, 5)) end
local id = string.match(KEYS[1], ':ep:(.*)$')
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[3], id)
  redis.call('ZADD', KEYS[4], ARGV[4], id)
else
  redis.call('ZADD', KEYS[3], ARGV[4], id)
end
return {1, version + 1}
"""


# KEYS: ep, log.  ARGV: messages the reader holds.  -> {record JSON or false, log length, new tail}
_GET = """
local raw = redis.call('HGET', KEYS[1], 'r')
if not raw then return {false, 0, {}} end
local held = tonumber(ARGV[1])
local n = redis.call('LLEN', KEYS[2])
if n < held then held = 0 end
return {raw, n, redis.call('LRANGE', KEYS[2], held, -1)}
"""

#: Decoded step logs a replica keeps (episodes it served lately); each entry is the log's prefix.
LOG_CACHE = 4096


class RedisEpisodeStore:
    """Records in Redis, shared by every orchestrator replica (see the module docstring).

    ``lease_s`` bounds how long a dead replica's turn lock blocks its episode; a live holder
    renews it every third of the lease.
    """

    shared = True  # other replicas serve these episodes: closing one replica releases nothing

    def __init__(
        self, client: Any, *, prefix: str = "cw", lease_s: float = 30.0, turn_limit_s: float = 300.0
    ) -> None:
        self.redis = client
        self.prefix = prefix
        self.lease_s = lease_s
        self.turn_limit_s = turn_limit_s
        self._put = client.register_script(_PUT)
        self._get = client.register_script(_GET)
        self._logs: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisEpisodeStore:
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError, TimeoutError

        retry = Retry(ExponentialBackoff(cap=1.0, base=0.05), 6, (ConnectionError, TimeoutError))
        client = aioredis.Redis.from_url(url, max_connections=256, socket_connect_timeout=10, retry=retry)
        return cls(client, **kwargs)

    def _key(self, kind: str, episode_id: str = "") -> str:
        return f"{self.prefix}:{kind}:{episode_id}" if episode_id else f"{self.prefix}:{kind}"

    async def get(self, episode_id: str) -> EpisodeRecord | None:
        held = self._logs.get(episode_id, [])
        with store_errors():
            raw, length, tail = await self._get(
                keys=[self._key("ep", episode_id), self._key("log", episode_id)], args=[len(held)]
            )
        if not raw:
            self._logs.pop(episode_id, None)
            return None
        start = length - len(tail)  # len(held), or 0 when the log was read whole
        log_ = [*held[:start], *(json.loads(m) for m in tail)]
        self._remember(episode_id, log_)
        rec = record_from_json(raw, list(log_))
        rec.logged = len(rec.messages)
        return rec

    def _remember(self, episode_id: str, log_: list[dict[str, Any]]) -> None:
        self._logs[episode_id] = log_
        self._logs.move_to_end(episode_id)
        while len(self._logs) > LOG_CACHE:
            self._logs.popitem(last=False)

    async def put(self, record: EpisodeRecord) -> None:
        new = [json.dumps(m, ensure_ascii=False, default=str) for m in record.messages[record.logged :]]
        expected = record.version
        record.version += 1
        keys = [self._key("ep", record.id), self._key("log", record.id), self._key("live"), self._key("done")]
        args = [
            expected,
            record_to_json(record, with_messages=False),
            int(record.terminal),
            record.last_active,
        ]
        with store_errors():
            ok, stored = await self._put(keys=keys, args=[*args, *new])
        if not ok:
            record.version = expected
            raise EpisodeConflict(
                f"episode changed on another replica (version {stored}, this turn started at {expected}); retry"
            )
        record.logged = len(record.messages)
        self._remember(record.id, list(record.messages))

    async def pop(self, episode_id: str) -> EpisodeRecord | None:
        with store_errors():
            rec = await self.get(episode_id)
            self._logs.pop(episode_id, None)
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.delete(self._key("ep", episode_id), self._key("log", episode_id))
                pipe.zrem(self._key("live"), episode_id)
                pipe.zrem(self._key("done"), episode_id)
                await pipe.execute()
            return rec

    async def ids(self) -> list[str]:
        with store_errors():
            live = await self.redis.zrange(self._key("live"), 0, -1)
            done = await self.redis.zrange(self._key("done"), 0, -1)
            return sorted(x.decode() for x in [*live, *done])

    async def count_live(self) -> int:
        with store_errors():
            return int(await self.redis.zcard(self._key("live")))

    async def count_held(self) -> int:
        with store_errors():
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zcard(self._key("live"))
                pipe.zcard(self._key("done"))
                live, done = await pipe.execute()
            return int(live) + int(done)

    async def idle(self, live_before: float, done_before: float, limit: int) -> list[str]:
        with store_errors():
            live = await self.redis.zrangebyscore(self._key("live"), "-inf", live_before, start=0, num=limit)
            done = await self.redis.zrangebyscore(self._key("done"), "-inf", done_before, start=0, num=limit)
            return [x.decode() for x in [*live, *done]][:limit]

    @contextlib.asynccontextmanager
    async def lock(self, episode_id: str, wait_s: float) -> AsyncIterator[None]:
        from redis.exceptions import LockError

        lock = self.redis.lock(
            self._key("lock", episode_id),
            timeout=self.lease_s,
            blocking=wait_s > 0,
            blocking_timeout=wait_s if wait_s > 0 else None,
            sleep=0.005,
        )
        with store_errors():
            acquired = await lock.acquire()
        if not acquired:
            raise EpisodeBusy(f"the episode stayed busy for {wait_s:g} s (another replica holds its turn)")
        held = asyncio.Event()
        held.set()
        renew = asyncio.create_task(self._renew(lock, held))
        try:
            async with asyncio.timeout(self.turn_limit_s):  # a turn stuck here must not hold the lock forever
                yield
        except TimeoutError:
            log.exception(
                "a turn of episode %s held its lock for %g s; released", episode_id[:8], self.turn_limit_s
            )
            raise EpisodeBusy(f"the turn did not finish within {self.turn_limit_s:g} s; retry") from None
        finally:
            held.clear()  # the renewer stops at its next wake-up even if the cancel below is lost
            renew.cancel()
            await asyncio.wait({renew}, timeout=1.0)
            with contextlib.suppress(LockError):  # the lease ran out: the version check fenced us
                await lock.release()

    async def _renew(self, lock: Any, held: asyncio.Event) -> None:
        from redis.exceptions import LockError

        while held.is_set():
            await asyncio.sleep(self.lease_s / 3)
            if not held.is_set():
                return
            try:
                await lock.reacquire()
            except LockError:
                log.warning("lost the turn lock %s; the version check fences this turn", lock.name)
                return

    async def aclose(self) -> None:
        await self.redis.aclose()


def store_from_url(url: str | None, **kwargs: Any) -> EpisodeStore:
    """``redis://...`` -> a Redis store (``kwargs`` go to it); empty -> in memory."""
    if not url:
        return InMemoryEpisodeStore()
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisEpisodeStore.from_url(url, **kwargs)
    raise ValueError(f"unsupported episode store URL {url!r} (expected redis://host:port/db)")
