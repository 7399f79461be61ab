"""The runtime's state hash of an episode, recomputing only the tables a walk wrote.

``ServiceRuntime.state_hash`` dumps and hashes every table (tens of milliseconds for a
service with a few hundred seed rows), and a task needs one per service it touches. The
hash is the sha256 of the canonical JSON of ``{table: rows}``, so the canonical text of
a table the walk never wrote is the seed's, computed once per run. ``tasks check`` and
the tests compare against the runtime's own ``state_hash``, so the two cannot drift apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from compoworld.runtime.service import ServiceRuntime

__all__ = ["StateHasher"]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class StateHasher:
    """Caches each table's canonical seed text; hashes an episode from it plus the written tables."""

    def __init__(self) -> None:
        self._seed: dict[tuple[str, str], str] = {}

    def _seed_text(self, runtime: ServiceRuntime, table: str) -> str:
        key = (runtime.name, table)
        if key not in self._seed:
            self._seed[key] = _canonical(runtime.select(None, table, None))
        return self._seed[key]

    def state_hash(self, runtime: ServiceRuntime, episode_id: str, written: Iterable[str]) -> str:
        """Equal to ``runtime.state_hash(episode_id)`` when only ``written`` tables (and the action log) changed."""
        changed = {*written, "action_log"}
        parts = []
        for table in sorted([*runtime.store.tables, "action_log"]):
            text = (
                _canonical(runtime.select(episode_id, table, None))
                if table in changed
                else self._seed_text(runtime, table)
            )
            parts.append(f"{_canonical(table)}:{text}")
        return hashlib.sha256(("{" + ",".join(parts) + "}").encode()).hexdigest()
