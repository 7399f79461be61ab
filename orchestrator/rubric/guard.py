"""The whole-state guard: across every mounted service, distractors included, only the expected writes.

A task's gold solution changes a known set of rows: so many new rows in these tables,
these columns of these rows, these rows deleted, these simulated actions logged. The
guard allows exactly that and nothing else, so extra deletes, a clobbered field, an
edited row instead of a created one, or a write in a distractor service fail it.

It is cheap in the common case: over the network, a service whose state hash is the
expected one (or the seed's: nothing was written there) passes without reading a row, and
only a service whose hash differs is read table by table and compared with its seed. An
in-process reader (``remote = False``) skips the hash: it hands back untouched tables as
the seed's own lists, so comparing is cheaper than hashing.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.rubric.base import Check, Criterion, StateReader, register_criterion, whole_state_reader
from orchestrator.rubric.normalize import covers

__all__ = [
    "ActionAllowance",
    "RowAllowance",
    "ServiceExpectation",
    "StateGuard",
    "TableAllowance",
    "key_of",
    "table_changes",
]

ACTION_LOG = "action_log"


class RowAllowance(BaseModel):
    """An existing row the solution may change, and which of its columns."""

    model_config = ConfigDict(extra="forbid")

    key: Any = Field(description="The row's key.")
    columns: list[str] = Field(description="Columns that may change.")


class TableAllowance(BaseModel):
    """What may change in one table."""

    model_config = ConfigDict(extra="forbid")

    pk: str = Field(description="Key column of the table.")
    creates: int = Field(default=0, description="How many new rows it may gain.")
    updates: list[RowAllowance] = Field(default_factory=list, description="Rows that may change.")
    deletes: list[Any] = Field(default_factory=list, description="Keys of rows that may be deleted.")
    stamps: list[str] = Field(default_factory=list, description="Service-set columns (updated_at) to ignore.")


class ActionAllowance(BaseModel):
    """A simulated write that may be logged (arguments: at least these values)."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ServiceExpectation(BaseModel):
    """One mounted service: its expected and seed hashes, and what may differ from the seed."""

    model_config = ConfigDict(extra="forbid")

    hash: str = Field(default="", description="State hash after the gold solution ('' for a distractor).")
    seed_hash: str = Field(description="State hash of the seed (nothing written).")
    tables: dict[str, TableAllowance] = Field(default_factory=dict, description="Tables the task writes.")
    actions: list[ActionAllowance] = Field(default_factory=list, description="Simulated writes it makes.")


def key_of(value: Any) -> Any:
    """A hashable identity for a key value (keys are almost always strings or integers)."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (type(value).__name__, value)
    return json.dumps(value, sort_keys=True, default=str)


def table_changes(
    final: list[dict[str, Any]], seed: list[dict[str, Any]], pk: str, stamps: set[str] | None = None
) -> tuple[list[dict[str, Any]], list[Any], dict[Any, list[str]]]:
    """(new rows, deleted keys, key -> changed columns) of one table relative to its seed.

    Rows that are the seed's own objects (how an in-process reader hands back unchanged
    rows) are skipped without comparing them, and so are their keys: a table holds a key once,
    so only the seed rows missing from ``final`` can be deleted or have been changed.
    """
    same = {id(r) for r in seed}
    candidates = [r for r in final if id(r) not in same]
    if any(r.get(pk) is None for r in candidates):  # keyless rows may repeat a key: compare them all
        kept: set[int] = set()
        before = {key_of(r.get(pk)): r for r in seed}
    else:
        kept = {id(r) for r in final} if candidates or len(final) != len(seed) else same
        before = {key_of(r.get(pk)): r for r in seed if id(r) not in kept}
    created = [r for r in candidates if key_of(r.get(pk)) not in before]
    deleted: list[Any] = []
    if before and len(final) - len(created) < len(seed):
        after = {key_of(r.get(pk)) for r in (candidates if kept else final)}
        deleted = [r.get(pk) for k, r in before.items() if k not in after]
    skip = stamps or set()
    changed: dict[Any, list[str]] = {}
    for row in candidates:
        k = key_of(row.get(pk))
        old = before.get(k)
        if old is None or old == row:
            continue
        cols = sorted(c for c in {*old, *row} if c not in skip and old.get(c) != row.get(c))
        if cols:
            changed[k] = cols
    return created, deleted, changed


def _actions(
    final: list[dict[str, Any]], seed: list[dict[str, Any]], allowed: list[ActionAllowance]
) -> list[str]:
    seen = {key_of(r.get("seq")) for r in seed}
    free = list(allowed)
    problems: list[str] = []
    for entry in final:
        if key_of(entry.get("seq")) in seen:
            continue
        raw = entry.get("arguments")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        match = next(
            (a for a in free if a.tool == entry.get("tool") and covers(a.arguments, args)),
            None,
        )
        if match is None:
            problems.append(f"unexpected call {entry.get('tool')}({', '.join(sorted(args))})")
        else:
            free.remove(match)
    return problems


def _table(
    service: str, table: str, final: list[dict[str, Any]], seed: list[dict[str, Any]], allow: TableAllowance
) -> list[str]:
    created, deleted, changed = table_changes(final, seed, allow.pk, set(allow.stamps))
    problems: list[str] = []
    if len(created) > allow.creates:
        problems.append(f"{service}.{table}: {len(created)} new row(s), expected at most {allow.creates}")
    allowed_deletes = {key_of(k) for k in allow.deletes}
    problems += [f"{service}.{table}: row {k!r} deleted" for k in deleted if key_of(k) not in allowed_deletes]
    allowed_updates = {key_of(r.key): set(r.columns) for r in allow.updates}
    for key, cols in changed.items():
        extra = [c for c in cols if c not in allowed_updates.get(key, set())]
        if extra:
            shown = key[1] if isinstance(key, tuple) else key
            problems.append(f"{service}.{table}: row {shown!r} changed {', '.join(extra)}")
    return problems


@register_criterion("state_guard")
class StateGuard(Criterion):
    """Collateral guard over whole states: every mounted service changed only as the task expects."""

    needs_service = False
    services: dict[str, ServiceExpectation]

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        whole = whole_state_reader(reader)
        problems: list[str] = []
        hash_first = getattr(whole, "remote", True)
        untouched = getattr(whole, "untouched", None)  # in-process: no write of the episode touched it,
        for svc, expect in sorted(self.services.items()):
            if untouched is not None and untouched(svc):  # so its tables are the seed's: nothing changed
                continue
            if hash_first and await whole.state_hash(svc) in (expect.hash, expect.seed_hash):
                continue
            final, seed = await whole.tables(svc), await whole.seed_tables(svc)
            for table in sorted({*final, *seed}):
                rows, before = final.get(table, []), seed.get(table, [])
                if rows is before or rows == before:
                    continue
                if table == ACTION_LOG:
                    problems += [f"{svc}: {p}" for p in _actions(rows, before, expect.actions)]
                elif table not in expect.tables:
                    problems.append(f"{svc}.{table} changed (the task writes nothing there)")
                else:
                    problems += _table(svc, table, rows, before, expect.tables[table])
        if problems:
            more = f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
            return Check(False, "unexpected writes: " + "; ".join(problems[:4]) + more)
        return Check(True, f"only the expected writes in {len(self.services)} mounted service(s)")

    def describe(self, service: str | None) -> str:
        return f"nothing but the expected writes in {', '.join(sorted(self.services))}"
