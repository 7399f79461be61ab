"""The built-in criterion kinds: state checks on one service's final state, and the answer check.

Each is labelled by the task generator: ``no_op_fail`` (doing nothing fails it) or
``no_op_pass`` (a collateral guard doing nothing passes). Every check is a targeted
``select``, so grading costs a handful of indexed reads, not a dump.
"""

from __future__ import annotations

from typing import Any

from orchestrator.rubric.base import Check, Criterion, StateReader, register_criterion
from orchestrator.rubric.normalize import answer_contains, covers, same_value

__all__ = [
    "ActionAbsent",
    "ActionLogged",
    "AnswerContains",
    "FieldEquals",
    "RowAbsent",
    "RowExists",
    "RowUnchanged",
]


def _fmt(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(values.items()))


def _svc(service: str | None) -> str:
    return service or ""


@register_criterion("row_exists")
class RowExists(Criterion):
    """At least ``min_count`` rows of ``table`` have these field values (a created record).

    ``min_count`` is one more than the seed already holds, so a copy of an existing row
    still has to be created.
    """

    table: str
    where: dict[str, Any]
    min_count: int = 1

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = await reader.select(_svc(service), self.table, self.where)
        if len(rows) >= self.min_count:
            return Check(True, f"{len(rows)} {self.table} row(s) with {_fmt(self.where)}")
        return Check(
            False, f"{len(rows)} {self.table} row(s) with {_fmt(self.where)}, expected {self.min_count}+"
        )

    def describe(self, service: str | None) -> str:
        extra = f" (at least {self.min_count})" if self.min_count > 1 else ""
        return f"{service}: a {self.table} exists with {_fmt(self.where)}{extra}"


@register_criterion("field_equals")
class FieldEquals(Criterion):
    """The row ``key`` of ``table`` has ``field`` set to ``value``."""

    table: str
    pk: str
    key: Any
    field: str
    value: Any

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = await reader.select(_svc(service), self.table, {self.pk: self.key})
        if not rows:
            return Check(False, f"{self.table} {self.key!r} does not exist")
        actual = rows[0].get(self.field)
        if same_value(self.value, actual):
            return Check(True, f"{self.table} {self.key!r}.{self.field} = {actual!r}")
        return Check(False, f"{self.table} {self.key!r}.{self.field} is {actual!r}, expected {self.value!r}")

    def describe(self, service: str | None) -> str:
        return f"{service}: {self.table} {self.key!r} has {self.field} = {self.value!r}"


@register_criterion("row_absent")
class RowAbsent(Criterion):
    """No row of ``table`` matches ``where`` (a deleted record, or one that must not be created)."""

    table: str
    where: dict[str, Any]

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = await reader.select(_svc(service), self.table, self.where)
        if rows:
            return Check(False, f"{len(rows)} {self.table} row(s) still match {_fmt(self.where)}")
        return Check(True, f"no {self.table} row matches {_fmt(self.where)}")

    def describe(self, service: str | None) -> str:
        return f"{service}: no {self.table} with {_fmt(self.where)}"


@register_criterion("row_unchanged")
class RowUnchanged(Criterion):
    """Collateral guard: the row ``key`` of ``table`` still has exactly its ``expected`` fields."""

    table: str
    pk: str
    key: Any
    expected: dict[str, Any]

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = await reader.select(_svc(service), self.table, {self.pk: self.key})
        if not rows:
            return Check(False, f"{self.table} {self.key!r} was deleted")
        changed = sorted(k for k, v in self.expected.items() if rows[0].get(k) != v)
        if changed:
            return Check(False, f"{self.table} {self.key!r} changed: {', '.join(changed)}")
        return Check(True, f"{self.table} {self.key!r} untouched")

    def describe(self, service: str | None) -> str:
        return f"{service}: {self.table} {self.key!r} is left untouched"


def _matches(logged: Any, expected: dict[str, Any]) -> bool:
    return isinstance(logged, dict) and covers(expected, logged)


@register_criterion("action_logged")
class ActionLogged(Criterion):
    """A simulated write ``tool`` was called with (at least) these arguments: it is in the action_log."""

    tool: str
    arguments: dict[str, Any]

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = await reader.select(_svc(service), "action_log", {"tool": self.tool})
        if any(_matches(r.get("arguments"), self.arguments) for r in rows):
            return Check(True, f"{self.tool} was called with {_fmt(self.arguments)}")
        return Check(False, f"no {self.tool} call with {_fmt(self.arguments)} ({len(rows)} other call(s))")

    def describe(self, service: str | None) -> str:
        return f"{service}: {self.tool} called with {_fmt(self.arguments)}"


@register_criterion("action_absent")
class ActionAbsent(Criterion):
    """Guard for a branch not taken: no ``tool`` call with these arguments is in the action_log."""

    tool: str
    arguments: dict[str, Any]

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = await reader.select(_svc(service), "action_log", {"tool": self.tool})
        if any(_matches(r.get("arguments"), self.arguments) for r in rows):
            return Check(False, f"{self.tool} was called with {_fmt(self.arguments)}")
        return Check(True, f"no {self.tool} call with {_fmt(self.arguments)}")

    def describe(self, service: str | None) -> str:
        return f"{service}: {self.tool} not called with {_fmt(self.arguments)}"


@register_criterion("answer_contains")
class AnswerContains(Criterion):
    """The final answer states ``value`` (a value produced upstream); ``source`` says where it came from."""

    needs_service = False
    value: Any
    source: str | None = None

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        if answer_contains(answer, self.value):
            return Check(True, f"answer states {self.value!r}")
        return Check(False, f"answer does not state {self.value!r}")

    def describe(self, service: str | None) -> str:
        return f"the answer states {self.value!r}"
