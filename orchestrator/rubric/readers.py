"""A StateReader over in-process ServiceRuntimes (task generation, verification, the embedded mesh).

Whole-state reads are the costly part of grading (a dump reads every table). An episode
forked from the seed differs from it only in tables a successful write touched, and the
runtime's write log says which those were, so ``tables`` and ``state_hash`` re-read only
those and take every other table's rows and canonical text from a ``SeedCache``
(``orchestrator.rubric.seedcache``) shared across a whole run. The hash is the runtime's own
(``canonical_hash`` of every table), and the tests compare the two.

Typed state is a function of the seed, the frozen day and the writes made: two episodes of
one service whose write logs list the same calls (tool, arguments, outcome) on the same day
hold the same rows. So a changed table is read once per *write history* and the rows are kept
(bounded) in the cache: the gold run, its reordered variant and a solution that adds a read
read it once between them; so is the state hash, whose changed tables are encoded row by row
with the seed's own rows' text kept. A history with a simulated write (a world model that may
answer differently) is never shared.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from compoworld.runtime.service import ServiceRuntime
from orchestrator.rubric.base import CriterionError
from orchestrator.rubric.seedcache import ACTION_LOG, Bounded, SeedCache, write_history

__all__ = ["ACTION_LOG", "Bounded", "RuntimeStateReader", "SeedCache", "dirty_tables", "write_history"]


def dirty_tables(runtime: ServiceRuntime, episode_id: str) -> set[str]:
    """Tables an episode forked from the seed may have changed: those its successful writes touched.

    An implemented write changes its entity's table, a simulated one the action log, an action
    (``compoworld.runtime.actions``) its tool's table and its target entity's (a clear deletes the
    target's rows); anything else may touch more, so it marks every table.
    """
    dirty: set[str] = set()
    everything = {*runtime.store.tables, ACTION_LOG}
    for entry in runtime.write_log(episode_id):
        if not entry.get("success"):
            continue
        bound = runtime.tools.get(str(entry.get("tool")))
        backend = entry.get("backend")
        if bound is not None and backend == "implemented" and bound.table is not None:
            dirty.add(bound.table.name)
        elif bound is not None and backend == "action" and bound.table is not None and bound.defn.action:
            dirty.add(bound.table.name)
            target = runtime.store.by_entity.get(bound.defn.action.target)
            if target is not None:
                dirty.add(target.name)
        elif backend == "simulated":
            dirty.add(ACTION_LOG)
        else:
            return everything
    return dirty


class RuntimeStateReader:
    """Reads one episode's state (or the seed view, for ``episode_id=None``) across several services.

    A service the episode never forked (a session forks lazily) is read as its seed, which
    is what it would hold: nothing was written there. A reader is one grading pass: the
    episode does not change under it, so each changed table is read once and kept.
    """

    #: Reads are in-process: diffing tables is cheaper than hashing them first.
    remote = False

    def __init__(
        self,
        runtimes: Mapping[str, ServiceRuntime],
        episode_id: str | None,
        cache: SeedCache | None = None,
        *,
        elsewhere: Mapping[str, str] | None = None,
    ) -> None:
        """``elsewhere``: services whose state this episode shares with another episode's fork (read there)."""
        self.runtimes = runtimes
        self.episode_id = episode_id
        self.elsewhere = dict(elsewhere or {})
        self.cache = cache or SeedCache()
        self._tables: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self._hashes: dict[str, str] = {}
        self._histories: dict[str, str | None] = {}

    def _runtime(self, service: str) -> ServiceRuntime:
        runtime = self.runtimes.get(service)
        if runtime is None:
            raise CriterionError(f"unknown service '{service}'")
        return runtime

    def _episode(self, runtime: ServiceRuntime) -> str | None:
        eid = self.elsewhere.get(runtime.name, self.episode_id)
        return eid if eid is not None and runtime.has_episode(eid) else None

    def _check(self, runtime: ServiceRuntime, service: str, table: str, where: dict[str, Any]) -> None:
        if table == ACTION_LOG:
            return
        if table not in runtime.store.tables:
            raise CriterionError(f"service '{service}' has no table '{table}'")
        columns = runtime.store.tables[table].column_set
        if not set(where) <= columns:
            raise CriterionError(
                f"table '{table}' of '{service}' has no column {sorted(set(where) - columns)}"
            )

    async def select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        runtime = self._runtime(service)
        self._check(runtime, service, table, where)
        if not where:
            return list((await self.tables(service))[table])
        return runtime.select(self._episode(runtime), table, where)

    async def seed_select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        runtime = self._runtime(service)
        self._check(runtime, service, table, where)
        if not where:
            return list(self.cache.rows(runtime, table))
        return runtime.select(None, table, where)

    def seed_keys(self, service: str, table: str, pk: str, key: Callable[[Any], Hashable]) -> frozenset[Any]:
        """What ``{key(r[pk]) for r in seed_select(service, table, {})}`` is, from the run's cache."""
        runtime = self._runtime(service)
        self._check(runtime, service, table, {})
        return self.cache.keys(runtime, table, pk, key)

    def untouched(self, service: str) -> bool:
        """Whether no write of the episode touched ``service``, so every table is the seed's own list.

        Answered without loading a service a lazy library (``ServicePool``) does not hold: an unloaded
        runtime holds no episode. An unknown service is not untouched (reading it raises).
        """
        if service not in self.runtimes:
            return False
        resident = getattr(self.runtimes, "is_resident", None)
        if resident is not None and not resident(service):
            return True
        return not self._dirty(self._runtime(service))[1]

    def _dirty(self, runtime: ServiceRuntime) -> tuple[str | None, set[str]]:
        eid = self._episode(runtime)
        return eid, dirty_tables(runtime, eid) if eid is not None else set()

    async def state_hash(self, service: str) -> str:
        """The runtime's state hash; kept per reader and (like changed tables) by write history."""
        if service in self._hashes:
            return self._hashes[service]
        runtime = self._runtime(service)
        eid, dirty = self._dirty(runtime)
        if not dirty:
            return self.cache.state_hash(runtime)
        history = self._history(runtime, eid)
        key = (runtime.name, history, None)
        value = self.cache.states.get(key) if history is not None else None
        if value is None:
            tables = await self.tables(service)
            changed = {t: self.cache.rows_text(runtime, t, tables[t]) for t in dirty if t in tables}
            value = self.cache.hash_with(runtime, changed) if changed else self.cache.state_hash(runtime)
            if history is not None:
                self.cache.states[key] = value
        self._hashes[service] = value
        return value

    async def tables(self, service: str) -> dict[str, list[dict[str, Any]]]:
        """Every table; those no write touched are the cached seed lists themselves (compare by identity)."""
        if service not in self._tables:
            runtime = self._runtime(service)
            eid, dirty = self._dirty(runtime)
            seed = self.cache.tables(runtime)
            self._tables[service] = {
                t: self._read(runtime, eid, t) if t in dirty else rows for t, rows in seed.items()
            }
        return self._tables[service]

    def _history(self, runtime: ServiceRuntime, episode_id: str | None) -> str | None:
        """``write_history`` of the episode in this service, once per reader (it does not change under it)."""
        if episode_id is None or not self.cache.by_history:
            return None
        if runtime.name not in self._histories:
            self._histories[runtime.name] = self.cache.history(runtime, episode_id)
        return self._histories[runtime.name]

    def _read(self, runtime: ServiceRuntime, episode_id: str | None, table: str) -> list[dict[str, Any]]:
        """A changed table's rows; a row still stored exactly as in the seed is the seed's own dict."""
        history = self._history(runtime, episode_id)
        key = (runtime.name, history, table)
        if history is not None:
            kept = self.cache.states.get(key)
            if kept is not None:
                return list(kept)
        spec = runtime.store.tables.get(table)
        if spec is None or episode_id is None:
            rows = runtime.select(episode_id, table, None)
        else:
            at, seed = self.cache.by_key(runtime, table)
            raw = runtime.store.get(episode_id).conn.execute(spec.sql_all).fetchall()
            rows = []
            for r in raw:
                found = seed.get(r[at])
                rows.append(found[1] if found is not None and found[0] == r else spec.decode(r))
        if history is not None:
            self.cache.states[key] = rows
        return list(rows)

    async def seed_tables(self, service: str) -> dict[str, list[dict[str, Any]]]:
        return self.cache.tables(self._runtime(service))

    async def dump(self, service: str) -> dict[str, Any]:
        return self._runtime(service).dump(self.elsewhere.get(service, self.episode_id))
