"""Row criteria that cannot be gamed: a create needs a new row, an update leaves the rest of its row alone.

``row_created`` passes only for rows whose key the seed does not hold, so renaming an
existing record into the expected values does not count as creating one. ``row_updated``
checks the fields the task sets *and* that every other field of the row still has its
seed value (service-set stamps aside), so wiping a contact's e-mails while fixing its
phone fails. Values compare by type (``same_value``): a date written as a midnight
timestamp, an amount as an integer, an e-mail in capitals are the same value.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, cast

from orchestrator.rubric.base import Check, Criterion, StateReader, register_criterion, seed_reader
from orchestrator.rubric.normalize import same_value

__all__ = ["RowCreated", "RowUpdated", "new_rows", "row_matches"]


def _key(value: Any) -> str:
    return repr(value) if not isinstance(value, str) else value


def _fmt(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(values.items()))


def row_matches(row: dict[str, Any], where: dict[str, Any]) -> bool:
    """Whether a row holds every value of ``where`` (typed comparison)."""
    return all(k in row and same_value(v, row[k]) for k, v in where.items())


async def new_rows(reader: StateReader, service: str, table: str, pk: str) -> list[dict[str, Any]]:
    """Rows of ``table`` whose key the seed does not hold."""
    seeded = await _seed_keys(reader, service, table, pk)
    return [r for r in await reader.select(service, table, {}) if _key(r.get(pk)) not in seeded]


async def _seed_keys(reader: StateReader, service: str, table: str, pk: str) -> Collection[str]:
    """The keys the seed holds; a reader that keeps the seed (``seed_keys``) answers them from its cache."""
    kept = getattr(reader, "seed_keys", None)
    if kept is not None:
        return cast(Collection[str], kept(service, table, pk, _key))
    return {_key(r.get(pk)) for r in await seed_reader(reader).seed_select(service, table, {})}


@register_criterion("row_created")
class RowCreated(Criterion):
    """At least ``count`` rows of ``table`` that are new (key not in the seed) hold the ``where`` values."""

    table: str
    pk: str
    where: dict[str, Any]
    count: int = 1

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        created = await new_rows(reader, service or "", self.table, self.pk)
        matching = [r for r in created if row_matches(r, self.where)]
        if len(matching) >= self.count:
            return Check(True, f"{len(matching)} new {self.table} row(s) with {_fmt(self.where)}")
        renamed = [
            r
            for r in await reader.select(service or "", self.table, {})
            if row_matches(r, self.where) and r not in created
        ]
        why = f" ({len(renamed)} existing row(s) were edited to match instead)" if renamed else ""
        return Check(
            False,
            f"{len(matching)} new {self.table} row(s) with {_fmt(self.where)}, expected {self.count}{why}",
        )

    def describe(self, service: str | None) -> str:
        many = f"{self.count} new {self.table} rows" if self.count > 1 else f"a new {self.table}"
        return f"{service}: {many} with {_fmt(self.where)}"


@register_criterion("row_updated")
class RowUpdated(Criterion):
    """Row ``key`` of ``table`` has the ``set`` values and every other field as in the seed (``stamps`` aside)."""

    table: str
    pk: str
    key: Any
    set: dict[str, Any]
    stamps: list[str] = []

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        svc = service or ""
        rows = await reader.select(svc, self.table, {self.pk: self.key})
        if not rows:
            return Check(False, f"{self.table} {self.key!r} does not exist")
        seed = await seed_reader(reader).seed_select(svc, self.table, {self.pk: self.key})
        row = rows[0]
        wrong = [
            f"{f} is {row.get(f)!r}, expected {v!r}"
            for f, v in sorted(self.set.items())
            if not same_value(v, row.get(f))
        ]
        if wrong:
            return Check(False, f"{self.table} {self.key!r}: " + "; ".join(wrong))
        skip = {*self.set, *self.stamps, self.pk}
        before = seed[0] if seed else {}
        clobbered = sorted(c for c in before if c not in skip and row.get(c) != before.get(c))
        if clobbered:
            return Check(
                False,
                f"{self.table} {self.key!r}: fields it was not meant to change changed: {', '.join(clobbered)}",
            )
        return Check(True, f"{self.table} {self.key!r} has {_fmt(self.set)}, other fields untouched")

    def describe(self, service: str | None) -> str:
        return f"{service}: {self.table} {self.key!r} has {_fmt(self.set)} and nothing else changed"
