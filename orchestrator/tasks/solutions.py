"""Verifying the verifiers against behaviour: solutions a rubric must accept, and ones it must reject.

Every task is run, besides its gold calls, as a family of **valid variants** (independent
steps reordered, extra harmless reads, a list/search instead of a direct read, creates
carrying extra sensible fields, the report in other words and formats), each of which
must complete, and a family of **wrong solutions** (an extra delete, a clobbered field, an
existing row edited instead of a new one created, the rule ignored, every value dumped
into the answer, one value off), each of which must not. A kind that does not apply to a
task (no create to rename, no rule to ignore) makes nothing for it.

Kinds are registered by name (``register_solution``, into the ``SOLUTION_KINDS`` registry),
so a new way of being right or wrong is one function; a package outside this tree adds one
through the ``compoworld.solutions`` entry-point group (its value names a ``SolutionKind``).
They run in registration order (built-ins first). Each gets its own rng, seeded from the task
id and the kind.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from compoworld.manifest import EntityDef, ServiceManifest, ToolDef
from compoworld.registry import Registry
from compoworld.runtime.service import ServiceRuntime
from compoworld.seeding import seeded_rng
from orchestrator.models import CriterionSpec, Task, WalkStep
from orchestrator.rubric.answers import decimals_needed, parse_stamp
from orchestrator.rubric.base import StateReader
from orchestrator.rubric.normalize import value_text
from orchestrator.rubric.rows import new_rows, row_matches
from orchestrator.tasks.criteria import set_columns
from orchestrator.tasks.paths import page_size
from orchestrator.tasks.seeds import SeedIndex, value_key

__all__ = [
    "SOLUTION_KINDS",
    "Call",
    "Family",
    "Solution",
    "SolutionContext",
    "SolutionKind",
    "answer_for",
    "register_solution",
]

Family = Literal["valid", "wrong"]
#: the step index a binding or condition source reads (``step:3:path``, ``sum:3:amount@email=x``)
_SOURCE_STEP = re.compile(r"^(?:step|count|sum|max|min):(\d+)")
AnswerStyle = Literal["plain", "paraphrase", "dump", "off"]


@dataclass(frozen=True)
class Call:
    """One tool call of a solution."""

    service: str
    tool: str
    args: dict[str, Any]


@dataclass
class Solution:
    """A way of doing the task: its calls, and how its final answer is written."""

    kind: str
    family: Family
    calls: list[Call]
    answer: AnswerStyle = "plain"
    note: str = ""


@dataclass
class SolutionContext:
    """What a solution maker may look at: the task, its walk, the library and the seed."""

    task: Task
    steps: list[WalkStep]
    runtimes: Mapping[str, ServiceRuntime]
    seeds: SeedIndex
    rng: random.Random = field(default_factory=random.Random)

    def manifest(self, service: str) -> ServiceManifest:
        return self.runtimes[service].manifest

    def tool(self, service: str, name: str) -> ToolDef | None:
        """The manifest's tool of that name (through the runtime's index: names are unique in a service)."""
        bound = self.runtimes[service].tools.get(name)
        return bound.defn if bound is not None else None

    def entity(self, service: str, tool: ToolDef | None) -> EntityDef | None:
        """The manifest's entity a tool works on (through the runtime's index of its tables)."""
        if not tool or not tool.entity:
            return None
        table = self.runtimes[service].store.by_entity.get(tool.entity)
        return table.entity if table is not None else None

    def gold(self) -> list[Call]:
        return [Call(g.service, g.tool, copy.deepcopy(g.arguments)) for g in self.task.gold_calls]

    def implemented(self, service: str, tool: ToolDef | None) -> bool:
        return (
            tool is not None
            and service in self.runtimes
            and self.runtimes[service].tools[tool.name].backend == "implemented"
        )

    def implemented_creates(self, calls: list[Call]) -> Iterator[tuple[int, Call, ToolDef, EntityDef]]:
        """The calls that create a row of an entity on typed state, with their index, tool and entity."""
        for i, call in enumerate(calls):
            tool = self.tool(call.service, call.tool)
            entity = self.entity(call.service, tool)
            if (
                tool is not None
                and entity is not None
                and tool.operation == "create"
                and self.implemented(call.service, tool)
            ):
                yield i, call, tool, entity


Maker = Callable[[SolutionContext], Solution | None]


@dataclass(frozen=True)
class SolutionKind:
    """One kind of solution: whether it must complete (valid) or fail (wrong), and its maker."""

    family: Family
    maker: Maker


def _is_solution_kind(value: object) -> SolutionKind:
    if not isinstance(value, SolutionKind) or value.family not in ("valid", "wrong"):
        raise TypeError(f"expected a SolutionKind with family 'valid' or 'wrong', got {value!r}")
    return value


#: kind name -> SolutionKind; ``ordered()`` gives registration order, the order checks run in.
SOLUTION_KINDS: Registry[SolutionKind] = Registry(
    "solution kind", entry_points="compoworld.solutions", check=_is_solution_kind
)


def register_solution(kind: str, family: Family) -> Callable[[Maker], Maker]:
    """Decorator: a maker of one kind of solution (None when the kind does not apply to a task)."""

    def deco(maker: Maker) -> Maker:
        SOLUTION_KINDS.register(kind, SolutionKind(family, maker))
        return maker

    return deco


def rng_for(task: Task, kind: str) -> random.Random:
    return seeded_rng("solution", task.id, kind)


# -- answers ------------------------------------------------------------------------------


def _paraphrase(value: Any, kind: str, code_type: str | None) -> str:
    """The value as a person might write it: "$1,234.50", "1 May 2025", "German"."""
    from orchestrator.rubric.answers import code_labels

    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        places = decimals_needed(float(value))
        return f"{float(value):,.{places}f}" if places else f"{round(float(value)):,}"
    if kind in ("date", "datetime") and isinstance(value, str):
        stamp = parse_stamp(value)
        if stamp is not None:
            day, instant = stamp
            text = f"{day.day} {day.strftime('%B')} {day.year}"
            if kind == "datetime" and instant is not None:
                text += f" at {instant.astimezone(dt.UTC).strftime('%H:%M')} UTC"
            return text
    if kind == "code" and code_type and isinstance(value, str):
        labels = code_labels(value, code_type)  # type: ignore[arg-type]
        if labels:
            return labels[0]
    return value_text(value)


def _off(value: Any, kind: str, rivals: list[Any], rng: random.Random) -> Any:
    if rivals:
        return rng.choice(rivals)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        step = 10 ** -decimals_needed(float(value))
        return round(float(value) + step * rng.choice([-1, 1]) * rng.randint(1, 3), 2)
    if kind in ("date", "datetime") and isinstance(value, str):
        stamp = parse_stamp(value)
        if stamp is not None:
            return (stamp[0] + dt.timedelta(days=rng.choice([-2, -1, 1, 2]))).isoformat()
    return None


async def answer_for(
    rubric: list[CriterionSpec],
    reader: StateReader,
    style: AnswerStyle = "plain",
    rng: random.Random | None = None,
    dump: Any = None,
    encode: Callable[[Any], str] | None = None,
) -> str:
    """The final answer a solution gives: every asked-for value, written in ``style``.

    ``encode`` writes the ``dump`` style's JSON (``json.dumps(dump, default=str)``; a cache may keep the
    text of results it has seen)."""
    parts: list[tuple[str, str]] = []
    specs = [s for s in rubric if s.kind in ("answer_value", "answer_row_field", "answer_contains")]
    off_index = (rng or random.Random(0)).randrange(len(specs)) if specs and style == "off" else -1
    for i, spec in enumerate(specs):
        p = spec.params
        kind = str(p.get("read_as", "text"))
        if spec.kind == "answer_row_field":
            rows = [
                r
                for r in await new_rows(reader, spec.service or "", p["table"], p["pk"])
                if row_matches(r, p["where"])
            ]
            value = rows[0].get(p["field"]) if rows else None
        else:
            value = p.get("value")
        if value is None:
            continue
        if i == off_index:
            value = _off(value, kind, list(p.get("rivals") or []), rng or random.Random(0))
            if value is None:
                continue
        text = _paraphrase(value, kind, p.get("code_type")) if style == "paraphrase" else value_text(value)
        parts.append((str(p.get("what") or ""), text))
    if style == "dump":
        values = "; ".join(t for _, t in parts)
        text = encode(dump) if encode is not None else json.dumps(dump, default=str)
        return text + (f" {values}" if values else "")
    if style == "paraphrase":
        return "All done. " + " ".join(f"{w[:1].upper() + w[1:] if w else 'Value'}: {t}." for w, t in parts)
    return "Done. " + "; ".join(t for _, t in parts) if parts else "Done."


# -- helpers ------------------------------------------------------------------------------


def _row_args(tool: ToolDef, entity: EntityDef, row: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments naming ``row`` for a read/update/delete tool: its key plus any required parent ids."""
    if not tool.pk_arg:
        return None
    args: dict[str, Any] = {tool.pk_arg: row.get(entity.pk)}
    required = [r for r in tool.input_schema.get("required") or [] if isinstance(r, str)]
    for name in required:
        if name in args:
            continue
        column = tool.arg_columns.get(name)
        if column is None or row.get(column) is None:
            return None
        args[name] = row[column]
    return args


def _tools(
    ctx: SolutionContext, service: str, entity: str | None, operations: tuple[str, ...]
) -> list[ToolDef]:
    manifest = ctx.manifest(service)
    return [
        t
        for t in manifest.tools
        if t.entity == entity and t.operation in operations and ctx.implemented(service, t)
    ]


def _written_keys(ctx: SolutionContext) -> set[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    for g in ctx.task.gold_calls:
        tool = ctx.tool(g.service, g.tool)
        entity = ctx.entity(g.service, tool)
        if tool and entity and tool.pk_arg and tool.pk_arg in g.arguments:
            out.add((g.service, entity.table, value_key(g.arguments[tool.pk_arg])))
    return out


def _gold_tables(ctx: SolutionContext) -> list[tuple[str, EntityDef]]:
    out: list[tuple[str, EntityDef]] = []
    for g in ctx.task.gold_calls:
        entity = ctx.entity(g.service, ctx.tool(g.service, g.tool))
        if entity is not None and (g.service, entity) not in out:
            out.append((g.service, entity))
    return out


def _other_value(ctx: SolutionContext, service: str, entity: EntityDef, column: str, current: Any) -> Any:
    col = entity.column(column)
    pool = (
        list(col.enum or [])
        if col and col.enum
        else [r.get(column) for r in ctx.seeds.rows(service, entity.table)]
    )
    others = sorted(
        {value_key(v): v for v in pool if v is not None and value_key(v) != value_key(current)}.items()
    )
    if others:
        return ctx.rng.choice(others)[1]
    if isinstance(current, bool):
        return not current
    if isinstance(current, (int, float)):
        return current + 1
    if isinstance(current, str) and current:
        return current + " (revised)"
    return None


# -- valid variants -----------------------------------------------------------------------


@register_solution("gold", "valid")
def _gold(ctx: SolutionContext) -> Solution:
    return Solution("gold", "valid", ctx.gold())


@register_solution("reordered", "valid")
def _reordered(ctx: SolutionContext) -> Solution | None:
    """Two adjacent calls in different services, the second not using the first, swapped."""
    calls = ctx.gold()
    executed = [s for s in ctx.steps if s.executed]
    if len(executed) != len(calls):
        return None
    index = {id(s): i for i, s in enumerate(ctx.steps)}
    options = []
    for i in range(len(calls) - 1):
        a, b = executed[i], executed[i + 1]
        uses = {
            m.group(1)
            for r in [*b.bindings.values(), *([b.condition.source] if b.condition else [])]
            if (m := _SOURCE_STEP.match(r))
        }
        if a.service != b.service and str(index[id(a)]) not in uses:
            options.append(i)
    if not options:
        return None
    i = ctx.rng.choice(options)
    calls[i], calls[i + 1] = calls[i + 1], calls[i]
    return Solution("reordered", "valid", calls, note=f"calls {i} and {i + 1} swapped")


@register_solution("extra_reads", "valid")
def _extra_reads(ctx: SolutionContext) -> Solution | None:
    """Harmless reads of real rows, in task and distractor services, slipped in between the calls.

    The services are tried in a random order until two offer a read (one each), so a task loads at most
    the few services it tries: on a library of thousands, its distractors are rarely loaded otherwise
    (listing every read of every distractor loaded each one, ~4 services per task)."""
    calls = ctx.gold()
    services = sorted(s for s in {*ctx.task.services, *ctx.task.distractors} if s in ctx.runtimes)
    reads: list[Call] = []
    for service in ctx.rng.sample(services, len(services)):
        read = _a_read(ctx, service)
        if read is not None:
            reads.append(read)
            if len(reads) == 2:
                break
    if not reads:
        return None
    for read in reads:
        calls.insert(ctx.rng.randint(0, len(calls)), read)
    return Solution("extra_reads", "valid", calls)


def _a_read(ctx: SolutionContext, service: str) -> Call | None:
    """A read by key of a real seed row of the service (a random implemented read tool that can name one)."""
    tools = [t for t in ctx.manifest(service).tools if t.operation == "read"]
    for tool in ctx.rng.sample(tools, len(tools)):
        entity = ctx.entity(service, tool)
        if entity is None or not ctx.implemented(service, tool):
            continue
        rows = ctx.seeds.rows(service, entity.table)
        args = _row_args(tool, entity, ctx.rng.choice(rows)) if rows else None
        if args is not None:
            return Call(service, tool.name, args)
    return None


@register_solution("search_instead_of_read", "valid")
def _search_instead(ctx: SolutionContext) -> Solution | None:
    """A direct read by key replaced by a list (or search) over the same entity that includes the row."""
    calls = ctx.gold()
    for i, call in enumerate(calls):
        tool = ctx.tool(call.service, call.tool)
        entity = ctx.entity(call.service, tool)
        if tool is None or entity is None or tool.operation != "read":
            continue
        for lister in _tools(ctx, call.service, entity.name, ("list", "search")):
            required = [r for r in lister.input_schema.get("required") or [] if isinstance(r, str)]
            row = ctx.seeds.row(call.service, entity, call.args.get(tool.pk_arg or ""))
            args: dict[str, Any] = {}
            for name in required:
                column = lister.arg_columns.get(name)
                if row is None or column is None or row.get(column) is None:
                    break
                args[name] = row[column]
            else:
                size = page_size(lister, 500)
                if lister.limit_arg and size is not None:
                    args[lister.limit_arg] = size
                calls[i] = Call(call.service, lister.name, args)
                return Solution(
                    "search_instead_of_read", "valid", calls, note=f"{call.tool} -> {lister.name}"
                )
    return None


_SAFE_TEXT = ("Logged by the operations assistant.", "Handled as requested.", "Recorded for the team.")


@register_solution("extra_fields", "valid")
def _extra_fields(ctx: SolutionContext) -> Solution | None:
    """A create that also fills an optional free-text field the task said nothing about."""
    calls = ctx.gold()
    for i, call, tool, entity in ctx.implemented_creates(calls):
        taken = set(set_columns(tool, entity, call.args))
        props = tool.input_schema.get("properties") or {}
        for arg, column_name in sorted(tool.arg_columns.items()):
            column = entity.column(column_name)
            schema = props.get(arg) or {}
            if (
                column is None
                or column_name in taken
                or column.read_only
                or column.ref
                or column.enum
                or column.semantic != "text"
                or schema.get("type") != "string"
                or any(k in schema for k in ("pattern", "format", "enum"))
                or int(schema.get("maxLength", 64)) < 40
            ):
                continue
            args = dict(call.args)
            args[arg] = ctx.rng.choice(_SAFE_TEXT)
            calls[i] = Call(call.service, call.tool, args)
            return Solution("extra_fields", "valid", calls, note=f"{call.tool}.{arg} filled")
    return None


@register_solution("answer_paraphrase", "valid")
def _answer_paraphrase(ctx: SolutionContext) -> Solution | None:
    if not any(s.kind.startswith("answer_") for s in ctx.task.rubric):
        return None
    return Solution("answer_paraphrase", "valid", ctx.gold(), answer="paraphrase")


# -- wrong solutions ----------------------------------------------------------------------


@register_solution("extra_delete", "wrong")
def _extra_delete(ctx: SolutionContext) -> Solution | None:
    """The work, plus deleting a record nobody asked to delete."""
    written = _written_keys(ctx)
    services = [*ctx.task.services, *ctx.task.distractors]
    for service in services:
        if service not in ctx.runtimes:
            continue
        for tool in ctx.manifest(service).tools:
            entity = ctx.entity(service, tool)
            if tool.operation != "delete" or entity is None or not ctx.implemented(service, tool):
                continue
            rows = [
                r
                for r in ctx.seeds.rows(service, entity.table)
                if (service, entity.table, value_key(r.get(entity.pk))) not in written
            ]
            if not rows:
                continue
            args = _row_args(tool, entity, ctx.rng.choice(rows))
            if args is not None:
                return Solution("extra_delete", "wrong", [*ctx.gold(), Call(service, tool.name, args)])
    return None


@register_solution("clobbered_field", "wrong")
def _clobbered(ctx: SolutionContext) -> Solution | None:
    """The work, plus overwriting a field of an existing record that the task did not ask to change."""
    touched: list[tuple[str, EntityDef, Any]] = []
    for g in ctx.task.gold_calls:
        tool = ctx.tool(g.service, g.tool)
        entity = ctx.entity(g.service, tool)
        if tool and entity and tool.operation == "update" and tool.pk_arg in g.arguments:
            touched.append((g.service, entity, g.arguments[tool.pk_arg or ""]))
    if not touched:
        for service, entity in _gold_tables(ctx):
            rows = ctx.seeds.rows(service, entity.table)
            if rows:
                touched.append((service, entity, ctx.rng.choice(rows).get(entity.pk)))
    for service, entity, key in touched:
        row = ctx.seeds.row(service, entity, key)
        gold_set: set[str] = set()
        for g in ctx.task.gold_calls:
            tool = ctx.tool(g.service, g.tool)
            if tool and tool.entity == entity.name and tool.operation == "update":
                gold_set |= set(set_columns(tool, entity, g.arguments))
        for updater in _tools(ctx, service, entity.name, ("update",)):
            if row is None:
                break
            args = _row_args(updater, entity, row)
            candidates = sorted(
                a
                for a, c in updater.arg_columns.items()
                if a != updater.pk_arg
                and c not in gold_set
                and (col := entity.column(c)) is not None
                and not col.read_only
                and not col.primary_key
                and col.ref is None
                and col.type in ("string", "number", "integer", "boolean")
            )
            if args is None or not candidates:
                continue
            arg = ctx.rng.choice(candidates)
            value = _other_value(
                ctx, service, entity, updater.arg_columns[arg], row.get(updater.arg_columns[arg])
            )
            if value is None:
                continue
            args[arg] = value
            return Solution(
                "clobbered_field",
                "wrong",
                [*ctx.gold(), Call(service, updater.name, args)],
                note=f"{entity.name}.{arg}",
            )
    return None


@register_solution("rename_instead_of_create", "wrong")
def _rename(ctx: SolutionContext) -> Solution | None:
    """An existing record edited into the new one's values instead of creating the new record."""
    calls = ctx.gold()
    for i, call, tool, entity in ctx.implemented_creates(calls):
        values = set_columns(tool, entity, call.args)
        rows = ctx.seeds.rows(call.service, entity.table)
        for updater in _tools(ctx, call.service, entity.name, ("update",)):
            if not rows:
                break
            row = ctx.rng.choice(rows)
            args = _row_args(updater, entity, row)
            if args is None:
                continue
            by_column = {c: a for a, c in updater.arg_columns.items()}
            for column, value in values.items():
                if column in by_column:
                    args[by_column[column]] = value
                elif updater.body_arg:
                    args.setdefault(updater.body_arg, {})[column] = value
            calls[i] = Call(call.service, updater.name, args)
            return Solution("rename_instead_of_create", "wrong", calls, note=f"{call.tool} -> {updater.name}")
    return None


@register_solution("ignored_condition", "wrong")
def _ignored_condition(ctx: SolutionContext) -> Solution | None:
    """The rule's branch flipped: the guarded write made when it should not be, or left out when it should."""
    conditional = [s for s in ctx.steps if s.condition is not None]
    if not conditional:
        return None
    flipped = {id(ctx.rng.choice(conditional))}
    calls = [
        Call(s.service, s.tool, copy.deepcopy(s.arguments))
        for s in ctx.steps
        if (s.executed and id(s) not in flipped) or (not s.executed and id(s) in flipped)
    ]
    return Solution("ignored_condition", "wrong", calls)


@register_solution("answer_dump", "wrong")
def _answer_dump(ctx: SolutionContext) -> Solution | None:
    if not any(s.kind.startswith("answer_") for s in ctx.task.rubric):
        return None
    return Solution("answer_dump", "wrong", ctx.gold(), answer="dump")


@register_solution("value_off", "wrong")
def _value_off(ctx: SolutionContext) -> Solution | None:
    """One value a write sets, changed to another plausible one (another date, amount, option)."""
    calls = ctx.gold()
    options: list[tuple[int, str, str]] = []
    for i, call in enumerate(calls):
        tool = ctx.tool(call.service, call.tool)
        entity = ctx.entity(call.service, tool)
        if tool is None or tool.kind != "write" or tool.operation == "delete":
            continue
        if entity is not None and ctx.implemented(call.service, tool):
            for column, current in sorted(set_columns(tool, entity, call.args).items()):
                arg = next((a for a, c in tool.arg_columns.items() if c == column and a in call.args), None)
                if (
                    arg is not None
                    and isinstance(current, (str, int, float))
                    and not isinstance(current, bool)
                ):
                    options.append((i, arg, column))
        else:
            options += [
                (i, a, "")
                for a, v in sorted(call.args.items())
                if isinstance(v, (str, int, float)) and not isinstance(v, bool)
            ]
    ctx.rng.shuffle(options)
    for i, arg, column in options:
        call = calls[i]
        current = call.args[arg]
        tool = ctx.tool(call.service, call.tool)
        entity = ctx.entity(call.service, tool)
        stamp = parse_stamp(current) if isinstance(current, str) else None
        if stamp is not None:
            shifted = stamp[0] + dt.timedelta(days=ctx.rng.choice([-3, -1, 1, 3]))
            value: Any = shifted.isoformat() + (current[10:] if len(current) > 10 else "")
        elif entity is not None and column:
            value = _other_value(ctx, call.service, entity, column, current)
        elif isinstance(current, (int, float)):
            value = current + 1
        else:
            value = None
        if value is None:
            continue
        args = dict(call.args)
        args[arg] = value
        calls[i] = Call(call.service, call.tool, args)
        return Solution("value_off", "wrong", calls, note=f"{call.tool}.{arg}")
    return None


@register_solution("answer_off", "wrong")
def _answer_off(ctx: SolutionContext) -> Solution | None:
    if not any(s.kind in ("answer_value", "answer_contains") for s in ctx.task.rubric):
        return None
    return Solution("answer_off", "wrong", ctx.gold(), answer="off")
