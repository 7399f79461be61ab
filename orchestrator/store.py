"""Where the orchestrator keeps its episode records: one small interface.

In memory for one orchestrator process (a laptop, CI, a single replica). Several
orchestrator replicas sharing the load would implement the same protocol over a real
database, keyed by episode id; the handlers call ``put`` after every change for that reason.
"""

from __future__ import annotations

from typing import Protocol

from orchestrator.lifecycle import EpisodeRecord

__all__ = ["EpisodeStore", "InMemoryEpisodeStore"]


class EpisodeStore(Protocol):
    """Episode records by id."""

    async def get(self, episode_id: str) -> EpisodeRecord | None: ...
    async def put(self, record: EpisodeRecord) -> None: ...
    async def pop(self, episode_id: str) -> EpisodeRecord | None: ...
    async def ids(self) -> list[str]: ...
    async def count_live(self) -> int: ...


class InMemoryEpisodeStore:
    """A dict of records; the live set is kept on every ``put`` so opening stays O(1)."""

    def __init__(self) -> None:
        self._records: dict[str, EpisodeRecord] = {}
        self._live: set[str] = set()

    async def get(self, episode_id: str) -> EpisodeRecord | None:
        return self._records.get(episode_id)

    async def put(self, record: EpisodeRecord) -> None:
        self._records[record.id] = record
        if record.terminal:
            self._live.discard(record.id)
        else:
            self._live.add(record.id)

    async def pop(self, episode_id: str) -> EpisodeRecord | None:
        self._live.discard(episode_id)
        return self._records.pop(episode_id, None)

    async def ids(self) -> list[str]:
        return sorted(self._records)

    async def count_live(self) -> int:
        return len(self._live)
