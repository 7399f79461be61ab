"""The run's cache of seed state and of everything a write history decides (task generation, grading).

The seed never changes during a run, so its rows, their canonical text and the state hash are read
once per (service, table). Typed state is a function of the seed, the frozen day and the writes
made, so the rows of a changed table, the state hash, and (for ``orchestrator.tasks.execute``) the
results of reads and writes are kept, bounded, by write history. ``RuntimeStateReader``
(``orchestrator.rubric.readers``) and ``Session`` (``orchestrator.tasks.execute``) share one.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, cast

from compoworld.runtime.service import ServiceRuntime

__all__ = ["ACTION_LOG", "Bounded", "SeedCache", "canonical", "write_history"]

ACTION_LOG = "action_log"


def canonical(value: Any) -> str:
    """The canonical JSON text state hashes are taken of (``compoworld.runtime.state.canonical_hash``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class Bounded:
    """A dict that forgets its least recently used entries past ``size`` (a cache a long run can share)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def write_history(runtime: ServiceRuntime, episode_id: str) -> str | None:
    """The day and the write calls of an episode in one service, canonical; None when a simulated write
    (whose effect a world model decides) is among them, or the episode is not there."""
    episode = runtime.store.episodes.get(episode_id)
    if episode is None:
        return None
    calls = []
    for entry in episode.write_log:
        if entry.get("backend") == "simulated":
            return None
        calls.append([entry.get("tool"), entry.get("arguments"), bool(entry.get("success"))])
    return canonical([episode.today, calls])


class SeedCache:
    """Seed rows and their canonical text per (service, table): the seed never changes during a run.

    It also keeps (bounded) the rows of changed tables by write history (module docstring).
    """

    def __init__(self, by_history: bool = True, seed_hashes: Mapping[str, str] | None = None) -> None:
        """``seed_hashes``: services' seed state hashes known already (a library indexed by streaming
        hashed each seed while it was loaded), so a distractor's hash needs no runtime."""
        #: keep changed tables by write history (False: the reference that re-reads them every time)
        self.by_history = by_history
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._by_raw: dict[tuple[str, str], dict[tuple[Any, ...], dict[str, Any]]] = {}
        self._by_key: dict[tuple[str, str], tuple[int, dict[Any, tuple[tuple[Any, ...], Any]]]] = {}
        self._text: dict[tuple[str, str], str] = {}
        self._tables: dict[str, dict[str, list[dict[str, Any]]]] = {}
        #: canonical text of a seed row, by ``id`` (seed rows live as long as the cache, so ids are theirs)
        self._row_text: dict[int, str] = {}
        self._texted: set[tuple[str, str]] = set()
        self._keys: dict[tuple[str, str, str, Callable[[Any], Hashable]], frozenset[Any]] = {}
        self._hash: dict[str, str] = dict(seed_hashes or {})
        self._parts: dict[str, list[bytes]] = {}
        self._prefix: dict[tuple[str, int], Any] = {}
        #: results of implemented read tools on a service nobody has written to yet in the episode, by
        #: (service, tool, today, canonical arguments): the same call on the same seed returns the same data
        self.reads: Bounded = Bounded(200_000)
        #: results of implemented writes by (service, today, write history before it, tool, canonical
        #: arguments), and the open sessions whose forks hold a known history (``orchestrator.tasks.execute``)
        self.writes: Bounded = Bounded(50_000)
        #: id -> (item, its JSON text) of dumped results (the item is held, so the id stays its own)
        self._items: Bounded = Bounded(4_096)
        #: id(episode) -> (episode, (log length, day), its write history)
        self._histories: Bounded = Bounded(4_096)
        self.live: list[Any] = []
        #: rows of a changed table by (service, write history, table); the state hash by (service, history, None)
        self.states: Bounded = Bounded(20_000)

    def rows(self, runtime: ServiceRuntime, table: str) -> list[dict[str, Any]]:
        key = (runtime.name, table)
        if key not in self._rows:
            self._rows[key] = runtime.select(None, table, None)
        return self._rows[key]

    def by_raw(self, runtime: ServiceRuntime, table: str) -> dict[tuple[Any, ...], dict[str, Any]]:
        """Stored (undecoded) row -> the cached decoded seed row, for an entity table."""
        key = (runtime.name, table)
        if key not in self._by_raw:
            spec = runtime.store.tables[table]
            raw = runtime.store.seed_view().conn.execute(spec.sql_all).fetchall()
            self._by_raw[key] = dict(zip(raw, self.rows(runtime, table), strict=True))
        return self._by_raw[key]

    def by_key(
        self, runtime: ServiceRuntime, table: str
    ) -> tuple[int, dict[Any, tuple[tuple[Any, ...], Any]]]:
        """(the key's position in a stored row, stored key -> (stored seed row, its decoded row)).

        Finding a seed row by its key and comparing the stored tuples is the same test as looking the
        whole tuple up, without hashing every value of every row.
        """
        key = (runtime.name, table)
        if key not in self._by_key:
            spec = runtime.store.tables[table]
            at = spec.column_names.index(spec.pk)
            self._by_key[key] = (
                at,
                {raw[at]: (raw, row) for raw, row in self.by_raw(runtime, table).items()},
            )
        return self._by_key[key]

    def keys(
        self, runtime: ServiceRuntime, table: str, pk: str, key: Callable[[Any], Hashable]
    ) -> frozenset[Any]:
        """``key`` of the ``pk`` value of every seed row of ``table`` (what "new" is relative to)."""
        memo = (runtime.name, table, pk, key)
        if memo not in self._keys:
            self._keys[memo] = frozenset(key(r.get(pk)) for r in self.rows(runtime, table))
        return self._keys[memo]

    def text(self, runtime: ServiceRuntime, table: str) -> str:
        key = (runtime.name, table)
        if key not in self._text:
            self._text[key] = canonical(self.rows(runtime, table))
        return self._text[key]

    def tables(self, runtime: ServiceRuntime) -> dict[str, list[dict[str, Any]]]:
        """Every seed table's rows (a new dict of the cached lists: graders ask for it on every pass)."""
        if runtime.name not in self._tables:
            names = [*sorted(runtime.store.tables), ACTION_LOG]
            self._tables[runtime.name] = {t: self.rows(runtime, t) for t in names}
        return dict(self._tables[runtime.name])

    def rows_text(self, runtime: ServiceRuntime, table: str, rows: list[dict[str, Any]]) -> str:
        """``canonical(rows)`` of a changed table, the seed's own rows among them encoded once per run.

        The canonical text of a list is its items' texts joined by commas in brackets (no spaces), so
        only the rows a write made or changed are encoded again.
        """
        known = self._row_text
        if (runtime.name, table) not in self._texted:
            self._texted.add((runtime.name, table))
            for row in self.rows(runtime, table):
                known[id(row)] = canonical(row)
        return "[" + ",".join(known.get(id(r)) or canonical(r) for r in rows) + "]"

    def hash_with(self, runtime: ServiceRuntime, changed: Mapping[str, str]) -> str:
        """The state hash of the seed with these tables' canonical texts in place of theirs.

        The same sha256 as over the whole text (``{"table":[rows],...}``), fed in pieces: the seed's
        own pieces are encoded once per run, and the hash of the part before the first changed table
        is kept and copied instead of recomputed.
        """
        names = sorted(self.tables(runtime))
        if runtime.name not in self._parts:
            self._parts[runtime.name] = [f"{canonical(t)}:{self.text(runtime, t)}".encode() for t in names]
        parts = self._parts[runtime.name]
        first = min(names.index(t) for t in changed)
        key = (runtime.name, first)
        if key not in self._prefix:
            prefix = hashlib.sha256(b"{")
            for part in parts[:first]:
                prefix.update(part)
                prefix.update(b",")
            self._prefix[key] = prefix
        digest = self._prefix[key].copy()
        last = len(names) - 1
        for i in range(first, len(names)):
            text = changed.get(names[i])
            digest.update(parts[i] if text is None else f"{canonical(names[i])}:{text}".encode())
            digest.update(b"," if i < last else b"}")
        return digest.hexdigest()

    def history(self, runtime: ServiceRuntime, episode_id: str) -> str | None:
        """``write_history``, kept per episode while its write log does not grow (the gold run's forks are
        read by every solution that shares them)."""
        episode = runtime.store.episodes.get(episode_id)
        if episode is None:
            return None
        kept = self._histories.get(id(episode))
        if kept is not None and kept[0] is episode and kept[1] == (len(episode.write_log), episode.today):
            return cast(str | None, kept[2])
        text = write_history(runtime, episode_id)
        self._histories[id(episode)] = (episode, (len(episode.write_log), episode.today), text)
        return text

    def dump_text(self, value: Any) -> str:
        """``json.dumps(value, default=str)``; of a list, its items' texts joined, each kept by identity.

        Tool results are shared (and never changed) across the runs of a task and across tasks, so a
        dump of one run's results mostly re-joins texts already written.
        """
        if not isinstance(value, list):
            return json.dumps(value, default=str)
        out = []
        for item in value:
            kept = self._items.get(id(item))
            if kept is None or kept[0] is not item:
                kept = (item, json.dumps(item, default=str))
                self._items[id(item)] = kept
            out.append(kept[1])
        return "[" + ", ".join(out) + "]"

    def seed_hash(self, service: str, runtimes: Mapping[str, ServiceRuntime]) -> str:
        """The seed state hash of ``service``: a known one without loading it, else ``state_hash``."""
        known = self._hash.get(service)
        return known if known is not None else self.state_hash(runtimes[service])

    def state_hash(self, runtime: ServiceRuntime) -> str:
        if runtime.name not in self._hash:
            parts = [f"{canonical(t)}:{self.text(runtime, t)}" for t in sorted(self.tables(runtime))]
            self._hash[runtime.name] = hashlib.sha256(("{" + ",".join(parts) + "}").encode()).hexdigest()
        return self._hash[runtime.name]
