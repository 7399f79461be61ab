"""A scenario being drafted: its steps run at once on a fork, so every value it states is real.

The archetypes (``scenario.recipes``) call these primitives: find a person in a party table by a
natural reference, list the records about them, create, update or delete a row, and guard two
alternative writes with a business rule. Each primitive appends ``WalkStep``s whose arguments are
the ones sent, with ``bindings`` naming the earlier result a value came from (``step:<i>:<path>``),
so the plan is the task's gold solution and a replay that goes wrong upstream carries its mistake
down, as an agent's would.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import ToolDef
from orchestrator.models import StepCondition, WalkStep
from orchestrator.rubric.answers import CodeType, kind_of
from orchestrator.tasks.criteria import AnswerSpec
from orchestrator.tasks.execute import Session
from orchestrator.tasks.paths import MISSING, get_path, list_items, page_size, set_arg, step_ref
from orchestrator.tasks.rejected import DraftRejected
from orchestrator.tasks.scenario.spread import Usage
from orchestrator.tasks.scenario.world import Person, Table, World

__all__ = ["Draft", "Found", "result_rows"]

#: page size asked of every list call, so one page holds every seeded row
PAGE = 200


def result_rows(tool: ToolDef, data: Any) -> list[tuple[str, dict[str, Any]]]:
    """(path prefix, row) of each row a list or read result holds."""
    if tool.response is not None:
        rows = tool.response.rows(data)
        if rows is not None:
            return rows
    items = list_items(data)
    if items is not None:
        prefix = "items." if isinstance(data, dict) and "items" in data else ""
        return [(f"{prefix}{i}.", r) for i, r in enumerate(items) if isinstance(r, dict)]
    return [("", data)] if isinstance(data, dict) else []


def _body_key(tool: ToolDef, column: str) -> str:
    return tool.response.key_of(column) if tool.response is not None else column


@dataclass
class Found:
    """Rows a list step returned, by key: where each sits in that step's result."""

    step: int
    table: Table
    paths: dict[str, str] = field(default_factory=dict)

    def ref(self, row: dict[str, Any], column: str) -> str:
        """``step:<i>:<path>`` of one column of one found row."""
        key = str(row.get(self.table.pk))
        lister = self.table.lister
        name = _body_key(lister, column) if lister is not None else column
        head, _, rest = name.partition(".")
        return step_ref(self.step, self.paths[key] + ".".join([head, *([rest] if rest else [])]))


@dataclass
class Draft:
    """The steps, results and stated facts of one scenario under construction."""

    world: World
    session: Session
    rng: random.Random
    today: str
    steps: list[WalkStep] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    labels: set[str] = field(default_factory=set)
    answers: list[AnswerSpec] = field(default_factory=list)
    hidden: list[Any] = field(default_factory=list)
    stated: list[Any] = field(default_factory=list)
    #: the run's tally of services per kept task, which every draw of a service balances against
    usage: Usage = field(default_factory=Usage)

    @property
    def services(self) -> list[str]:
        return list(dict.fromkeys(s.service for s in self.steps))

    # -- running ------------------------------------------------------------------------

    async def call(
        self,
        service: str,
        tool: ToolDef,
        args: dict[str, Any],
        bindings: dict[str, str] | None = None,
        condition: StepCondition | None = None,
    ) -> Any:
        """Append a step; run it unless a condition says not to. A failed call rejects the draft."""
        run = condition is None or condition.taken
        step = WalkStep(
            service=service,
            tool=tool.name,
            bindings=dict(bindings or {}),
            arguments=args,
            kind=tool.kind,
            operation=tool.operation,
            condition=condition,
            executed=run,
        )
        self.steps.append(step)
        if not run:
            self.results.append(MISSING)
            return MISSING
        result = await self.session.call(service, tool.name, args)
        if not result.success:
            raise DraftRejected(f"{tool.operation} call failed ({result.code})")
        self.results.append(result.data)
        return result.data

    def _scope(self, tool: ToolDef, row: dict[str, Any], args: dict[str, Any]) -> None:
        """Required arguments a call needs besides the key: the row's own scope (account, list), page 1."""
        for name in tool.input_schema.get("required") or []:
            if name in args or name in (tool.pk_arg, tool.limit_arg):
                continue
            column = tool.arg_columns.get(name)
            if column is not None and row.get(column) is not None:
                args[name] = row[column]
            elif name == tool.offset_arg:
                args[name] = 1 if "page" in name.lower() else 0
            else:
                raise DraftRejected(f"cannot fill required argument {name}")

    async def list_rows(
        self,
        table: Table,
        rows: Sequence[dict[str, Any]],
        person: Person | None = None,
        via: str | None = None,
        query: str | None = None,
    ) -> Found:
        """List ``table`` (filtered by the person's e-mail where the service can) and locate ``rows`` in it.

        ``via`` is where the e-mail came from (``step:<i>:<path>``), when an earlier step found it;
        ``query`` a name to search for where the list tool has a free-text search.
        """
        lister = table.lister
        if lister is None or not rows:
            raise DraftRejected("table cannot be listed")
        args: dict[str, Any] = {}
        bindings: dict[str, str] = {}
        size = page_size(lister, PAGE)
        if lister.limit_arg and size is not None:
            args[lister.limit_arg] = size
        self._scope(lister, rows[0], args)
        if person is not None and table.filter_arg:
            args[table.filter_arg] = get_path(rows[0], table.email_path or "")
            if via:
                bindings[table.filter_arg] = via
        if query and lister.search_arg:
            args[lister.search_arg] = query
        data = await self.call(table.service, lister, args, bindings)
        found = Found(len(self.steps) - 1, table)
        pk_key = _body_key(lister, table.pk)
        listed = {str(r.get(pk_key)): prefix for prefix, r in result_rows(lister, data)}
        for row in rows:
            key = str(row.get(table.pk))
            if key not in listed:
                raise DraftRejected("a row is not on the first page of its list")
            found.paths[key] = listed[key]
        self.hidden += [row.get(table.pk) for row in rows]
        self.labels.add("discovery")
        return found

    async def create(
        self,
        table: Table,
        values: dict[str, Any],
        bindings: dict[str, str] | None = None,
        condition: StepCondition | None = None,
        scope_row: dict[str, Any] | None = None,
    ) -> Any:
        """Create a row with these column values (arguments found through the tool's column map)."""
        tool = table.creator
        if tool is None:
            raise DraftRejected("table has no create tool")
        by_column = {c: a for a, c in sorted(tool.arg_columns.items())}
        args: dict[str, Any] = {}
        arg_bindings: dict[str, str] = {}
        for column, value in values.items():
            arg = by_column.get(column)
            if arg is None:
                if not tool.body_arg:
                    raise DraftRejected(f"create cannot set {column}")
                arg = f"{tool.body_arg}.{column}"
            set_arg(args, arg, value)
            for path, ref in (bindings or {}).items():  # a column, or a path inside it (emails.0.email)
                if path == column or path.startswith(column + "."):
                    arg_bindings[arg + path[len(column) :]] = ref
        if scope_row is not None:
            self._scope(tool, scope_row, args)
        missing = [r for r in tool.input_schema.get("required") or [] if r not in args]
        if missing:
            raise DraftRejected("create needs an argument the scenario does not give")
        data = await self.call(table.service, tool, args, arg_bindings, condition)
        if condition is None or condition.taken:
            self.labels.add("write")
        return data

    async def update(
        self,
        table: Table,
        found: Found,
        row: dict[str, Any],
        values: dict[str, Any],
        condition: StepCondition | None = None,
    ) -> Any:
        """Update one found row: its key from the list step, these columns, its own required values."""
        tool = table.updater
        if tool is None or not tool.pk_arg:
            raise DraftRejected("table has no update tool")
        by_column = {c: a for a, c in sorted(tool.arg_columns.items())}
        args: dict[str, Any] = {tool.pk_arg: row.get(table.pk)}
        bindings = {tool.pk_arg: found.ref(row, table.pk)}
        for column, value in values.items():
            if column not in by_column:
                raise DraftRejected(f"update cannot set {column}")
            args[by_column[column]] = value
        for name in tool.input_schema.get("required") or []:
            own = tool.arg_columns.get(name)
            if name not in args and own is not None and row.get(own) is not None:
                args[name] = row[own]
        self._scope(tool, row, args)
        return await self.call(table.service, tool, args, bindings, condition)

    async def delete(self, table: Table, found: Found, row: dict[str, Any]) -> Any:
        tool = table.deleter
        if tool is None or not tool.pk_arg:
            raise DraftRejected("table has no delete tool")
        args: dict[str, Any] = {tool.pk_arg: row.get(table.pk)}
        self._scope(tool, row, args)
        return await self.call(table.service, tool, args, {tool.pk_arg: found.ref(row, table.pk)})

    # -- answers ------------------------------------------------------------------------

    def answer(self, what: str, value: Any, semantic: str | None = None, rivals: Sequence[Any] = ()) -> bool:
        """The final report must state ``value`` (read by its type); False (nothing asked) when the report
        already asks for an equal value of that type: a grader reading values could not tell the two apart."""
        kind = kind_of(value, semantic)
        if any(a.kind == kind and _same(a.value, value) for a in self.answers):
            return False
        code: CodeType | None = semantic if kind == "code" else None  # type: ignore[assignment]
        others = [r for r in dict.fromkeys(rivals) if r != value and isinstance(r, (str, int, float))]
        self.answers.append(AnswerSpec(what=what, kind=kind, value=value, code_type=code, rivals=others[:3]))
        self.hidden.append(value)
        return True


def _same(a: Any, b: Any) -> bool:
    numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)]
    if all(numbers):
        return abs(float(a) - float(b)) < 1e-9
    return not any(numbers) and str(a).strip().casefold() == str(b).strip().casefold()
