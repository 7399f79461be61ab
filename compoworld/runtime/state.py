"""Per-episode SQLite state: a seed database and cheap forks of it, keyed by episode id.

A fork is one ``sqlite3`` backup of the source database into a new in-memory
connection (tens of microseconds for a small service). Forks are made only when asked
(the orchestrator's admin fork call), never behind a call's back: an id the store does not
hold is ``EpisodeStateLost``, never a fresh copy of the seed. Episodes are reaped after a TTL
of inactivity (the orchestrator keeps its live episodes' forks fresh with ``touch``); a live
fork is never evicted to make room: at ``max_episodes`` a new fork is refused instead.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from compoworld.canonical_json import dumps_compact
from compoworld.errors import EpisodeError, EpisodeStateLost, ServiceUnavailable
from compoworld.runtime.tables import ACTION_LOG_DDL, SEQ_DDL, EntityTable, quote

__all__ = ["Episode", "StateStore", "canonical_hash"]

SEED_VIEW = "__seed__"


def canonical_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``: the state hash tasks and graders compare.

    The text is ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    default=str)``, written by orjson where that gives the same bytes (``dumps_compact``): a read
    check hashes a whole episode's rows, and the standard encoder was half of a dump.
    """
    return hashlib.sha256(dumps_compact(obj)).hexdigest()


def change_mark(conn: sqlite3.Connection) -> tuple[int, int]:
    """Rows written on the connection (``total_changes``) and its ``schema_version``.

    An in-memory database is private to its connection, so while the mark stands still no row
    and no table changed: a hash taken at one mark holds for as long as the mark does.
    """
    return conn.total_changes, int(conn.execute("PRAGMA schema_version").fetchone()[0])


def _connect() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    return conn


@dataclass
class Episode:
    """One episode's private copy of a service's state."""

    id: str
    conn: sqlite3.Connection
    today: str
    last_used: float
    read_only: bool = False
    frozen: bool = False  # its episode ended: reads only, until it is deleted
    write_log: list[dict[str, Any]] = field(default_factory=list)
    sim_cache: dict[str, Any] = field(default_factory=dict)
    # call id -> the envelope answered: a retried call (an orchestrator replica died mid-turn)
    # gets the first answer instead of running twice
    replies: dict[str, Any] = field(default_factory=dict)  # call id -> ToolResult
    # (the seed's change mark, this copy's) when it was forked from the seed: while both still
    # hold, the copy is the seed row for row, and so is its hash
    origin: tuple[tuple[int, int], tuple[int, int]] | None = None
    hashed: tuple[tuple[int, int], str] | None = None  # the change mark the hash was taken at, the hash

    @property
    def now(self) -> str:
        """The frozen 'now' of the episode (noon UTC of its day)."""
        return f"{self.today}T12:00:00Z"


class StateStore:
    """The seed database of one service and the episodes forked from it."""

    def __init__(
        self,
        tables: list[EntityTable],
        seed_rows: dict[str, list[dict[str, Any]]],
        *,
        ddl: list[str] | None = None,
        default_today: str = "2026-01-15",
        ttl_s: float = 1800.0,
        max_episodes: int = 20000,
        name: str = "service",
    ) -> None:
        self.name = name
        self.tables = {t.name: t for t in tables}
        self.by_entity = {t.entity.name: t for t in tables}
        self.default_today = default_today
        self.ttl_s = ttl_s
        self.max_episodes = max_episodes
        self.episodes: OrderedDict[str, Episode] = OrderedDict()
        self._ops_since_reap = 0
        self.seed = self._build_seed(ddl or [t.ddl() for t in tables], seed_rows)
        self._seed_episode = Episode(SEED_VIEW, self.seed, default_today, time.monotonic(), read_only=True)

    def _build_seed(self, ddl: list[str], seed_rows: dict[str, list[dict[str, Any]]]) -> sqlite3.Connection:
        conn = _connect()
        conn.execute("BEGIN")
        for statement in [*ddl, SEQ_DDL, ACTION_LOG_DDL]:
            conn.execute(statement)
        for name, table in self.tables.items():
            rows = seed_rows.get(name, [])
            names = table.column_names
            # one INSERT per run of rows that carry the same columns, each row encoded as sqlite
            # takes it: the same statements in the same order as one ``execute`` per row
            for cols, run in groupby(rows, key=lambda row: tuple(c for c in names if c in row)):
                plan = table.encoders(cols)
                conn.executemany(table.insert_sql(cols), ([enc(row[c]) for c, enc in plan] for row in run))
            conn.execute("INSERT INTO _cw_seq (tbl, next) VALUES (?, ?)", (name, len(rows) + 1))
        conn.execute("COMMIT")
        return conn

    # -- episodes ---------------------------------------------------------------------

    def seed_view(self) -> Episode:
        """The read-only view used by calls without an episode id."""
        return self._seed_episode

    def fork(self, episode_id: str, source: str | None = None, today: str | None = None) -> Episode:
        """Create (or replace) an episode as a copy of the seed or of another episode."""
        if not episode_id or episode_id == SEED_VIEW:
            raise EpisodeError(f"invalid episode id {episode_id!r}")
        if source is not None and source not in self.episodes:
            raise EpisodeError(f"cannot fork from unknown episode '{source}'")
        if episode_id not in self.episodes and len(self.episodes) >= self.max_episodes:
            self.reap()
            if len(self.episodes) >= self.max_episodes:
                raise ServiceUnavailable(
                    self.name,
                    f"it holds {len(self.episodes)} live episode states, its limit (COMPOWORLD_MAX_EPISODES); "
                    "finish or delete episodes first",
                )
        src = self.seed if source is None else self.episodes[source].conn
        conn = _connect()
        src.backup(conn)
        old = self.episodes.pop(episode_id, None)
        if old is not None:
            old.conn.close()
        day = today or (self.episodes[source].today if source else self.default_today)
        episode = Episode(episode_id, conn, day, time.monotonic())
        if source is None:
            episode.origin = (change_mark(src), change_mark(conn))
        else:
            parent = self.episodes[source]
            episode.write_log = [dict(e) for e in parent.write_log]
            episode.sim_cache = dict(parent.sim_cache)
        self.episodes[episode_id] = episode
        self._maybe_reap()
        return episode

    def get(self, episode_id: str | None) -> Episode:
        """The episode for a call: the seed view for no id; ``EpisodeStateLost`` for an id not held."""
        if not episode_id:
            return self._seed_episode
        episode = self.episodes.get(episode_id)
        if episode is None:
            raise EpisodeStateLost(
                f"episode state lost: '{self.name}' holds no state for episode '{episode_id[:64]}' "
                "(never forked here, or lost to a restart or expiry); open an episode with POST /episodes"
            )
        episode.last_used = time.monotonic()
        return episode

    def touch(self, episode_ids: list[str]) -> list[str]:
        """Mark episodes in use (their orchestrator keeps them alive); returns the ids not held."""
        now = time.monotonic()
        missing = []
        for eid in episode_ids:
            episode = self.episodes.get(eid)
            if episode is None:
                missing.append(eid)
            else:
                episode.last_used = now
        return missing

    def delete(self, episode_id: str) -> bool:
        episode = self.episodes.pop(episode_id, None)
        if episode is None:
            return False
        episode.conn.close()
        return True

    def reap(self, now: float | None = None) -> int:
        """Drop episodes idle longer than the TTL (forks nobody keeps alive); never a live one for room."""
        now = time.monotonic() if now is None else now
        stale = [eid for eid, ep in self.episodes.items() if now - ep.last_used > self.ttl_s]
        for eid in stale:
            self.delete(eid)
        return len(stale)

    def _maybe_reap(self) -> None:
        self._ops_since_reap += 1
        if self._ops_since_reap >= 256:
            self._ops_since_reap = 0
            self.reap()

    # -- typed state ------------------------------------------------------------------

    def dump(self, episode: Episode) -> dict[str, Any]:
        """Every table's rows (sorted by key) and the action log, plus their hash."""
        mark = change_mark(episode.conn)  # before reading: a write meanwhile leaves a mark nobody matches
        tables: dict[str, list[dict[str, Any]]] = {}
        for name in sorted(self.tables):
            table = self.tables[name]
            tables[name] = [table.decode(r) for r in episode.conn.execute(table.sql_all)]
        tables["action_log"] = self.action_log(episode)
        episode.hashed = (mark, canonical_hash(tables))
        return {"tables": tables, "hash": episode.hashed[1]}

    def state_hash(self, episode: Episode) -> str:
        """``dump(episode)["hash"]``, dumping only where a row may have changed since the last hash.

        A fork of the seed that nothing has written to since (a read, a refused call) hashes as the
        seed does. Decoding and re-encoding every row was a tenth of verifying a service: its read
        checks compare an episode's hash with the seed's after each call.
        """
        mark = change_mark(episode.conn)
        if episode.hashed is not None and episode.hashed[0] == mark:
            return episode.hashed[1]
        seed = self._seed_episode
        if episode.origin is not None and episode.origin == (change_mark(seed.conn), mark):
            episode.hashed = (mark, self.state_hash(seed))
            return episode.hashed[1]
        return str(self.dump(episode)["hash"])

    def action_log(self, episode: Episode) -> list[dict[str, Any]]:
        rows = episode.conn.execute(
            "SELECT seq, tool, operation, arguments, response, time FROM action_log ORDER BY seq"
        )
        return [
            {
                "seq": s,
                "tool": t,
                "operation": o,
                "arguments": json.loads(a),
                "response": json.loads(r),
                "time": tm,
            }
            for s, t, o, a, r, tm in rows
        ]

    def select(
        self, episode: Episode, table: str, where: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Rows of one table matching equality filters (the grader's targeted read)."""
        if table == "action_log":
            log = self.action_log(episode)
            return [r for r in log if all(r.get(k) == v for k, v in (where or {}).items())]
        spec = self.tables.get(table)
        if spec is None:
            raise EpisodeError(f"unknown table '{table}'")
        where = where or {}
        if set(where) == {spec.pk}:
            row = episode.conn.execute(spec.sql_get, (where[spec.pk],)).fetchone()
            return [spec.decode(row)] if row else []
        clauses, params = [], []
        for key, value in sorted(where.items()):
            if key not in spec.column_set:
                raise EpisodeError(f"unknown column '{key}' of table '{table}'")
            clauses.append(f"{quote(key)} IS ?")
            params.append(spec.encode_value(key, value))
        sql = (
            spec.sql_select
            + (" WHERE " + " AND ".join(clauses) if clauses else "")
            + f" ORDER BY {quote(spec.pk)}"
        )
        return [spec.decode(r) for r in episode.conn.execute(sql, params)]

    def next_id(self, episode: Episode, table: str) -> int:
        """Deterministic row counter of a table in this episode (ids don't depend on timing)."""
        row = episode.conn.execute("SELECT next FROM _cw_seq WHERE tbl = ?", (table,)).fetchone()
        value = int(row[0]) if row else 1
        episode.conn.execute("UPDATE _cw_seq SET next = ? WHERE tbl = ?", (value + 1, table))
        return value
