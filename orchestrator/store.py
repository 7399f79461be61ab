"""Where the orchestrator keeps its episodes: records, their step logs, and each episode's turn lock.

One interface, two stores:

- ``InMemoryEpisodeStore``: one orchestrator process (the embedded default, a laptop, CI). Records
  are kept as objects; nothing is serialised.
- ``RedisEpisodeStore`` (``orchestrator/store_redis.py``): several orchestrator replicas behind one
  Redis; any replica serves any request of any episode.

The handlers take ``lock(id)`` around a turn and ``put`` after every change.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

from orchestrator.errors import EpisodeBusy
from orchestrator.lifecycle import EpisodeRecord

__all__ = ["EpisodeStore", "InMemoryEpisodeStore", "store_errors", "store_from_url"]


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


def store_from_url(url: str | None, **kwargs: Any) -> EpisodeStore:
    """``redis://...`` -> a Redis store (``kwargs`` go to it); empty -> in memory."""
    if not url:
        return InMemoryEpisodeStore()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from orchestrator.store_redis import RedisEpisodeStore

        return RedisEpisodeStore.from_url(url, **kwargs)
    raise ValueError(f"unsupported episode store URL {url!r} (expected redis://host:port/db)")
