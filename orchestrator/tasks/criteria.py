"""Turn a gold solution's effect into rubric criteria that cannot be gamed.

The criteria are read off the *difference* between the gold replay's final state and the
seed, service by service, never off what the tools were supposed to do, so a state
transition or a side-effect row is graded like any other write:

- a new row: ``row_created`` with the values the task determines (the fields its calls set),
  passing only for a key the seed does not hold;
- a changed row: ``row_updated`` with the new values, guarding every other field;
- a deleted row: ``row_absent``; a simulated write: ``action_logged``;
- one ``state_guard`` over every mounted service, distractors included, allowing exactly
  these changes;
- a write a business rule said not to make: a guard that it did not happen;
- the report: ``answer_value`` / ``answer_row_field``, read by type.

Guards pass when the agent does nothing, so together they weigh ``GUARD_SHARE`` of the
criteria that fail then: a do-nothing rollout scores that share, never more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import EntityDef, ServiceManifest, ToolDef
from orchestrator.models import CriterionLabel, CriterionSpec
from orchestrator.rubric.answer_kinds import AnswerRowField, AnswerValue
from orchestrator.rubric.answers import AnswerKind, CodeType
from orchestrator.rubric.base import Criterion
from orchestrator.rubric.guard import (
    ActionAllowance,
    RowAllowance,
    ServiceExpectation,
    StateGuard,
    TableAllowance,
    key_of,
    table_changes,
)
from orchestrator.rubric.kinds import ActionAbsent, ActionLogged, RowAbsent, RowUnchanged
from orchestrator.rubric.normalize import same_value
from orchestrator.rubric.readers import ACTION_LOG, RuntimeStateReader
from orchestrator.rubric.rows import RowCreated, RowUpdated
from orchestrator.tasks.seeds import value_key

__all__ = ["GUARD_SHARE", "AnswerSpec", "GoldWrite", "SkippedWrite", "build_rubric", "set_columns"]

#: Total importance of the collateral guards, as a share of the criteria doing nothing fails.
GUARD_SHARE = 0.1


@dataclass
class GoldWrite:
    """One executed write of the gold solution."""

    service: str
    tool: ToolDef
    entity: EntityDef | None
    args: dict[str, Any]
    result: Any


@dataclass
class SkippedWrite:
    """A write a rule of the task said not to make (the branch not taken)."""

    service: str
    tool: ToolDef
    entity: EntityDef | None
    args: dict[str, Any]


@dataclass
class AnswerSpec:
    """One value the final report must state."""

    what: str
    kind: AnswerKind = "text"
    value: Any = None
    code_type: CodeType | None = None
    rivals: list[Any] = field(default_factory=list)
    source: str | None = None
    #: for a value the service produces (a new record's number): (service, table, pk, where, field)
    row: tuple[str, str, str, dict[str, Any], str] | None = None


def _checkable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or (isinstance(value, (list, dict)) and bool(value))


def set_columns(tool: ToolDef, entity: EntityDef, args: dict[str, Any]) -> dict[str, Any]:
    """Columns a create/update call sets, and their values (as the runtime maps arguments to columns)."""
    values: dict[str, Any] = {}
    body = args.get(tool.body_arg) if tool.body_arg else None
    if isinstance(body, dict):
        for key, value in body.items():
            column = entity.column(key) or next((c for c in entity.columns if c.source_name == key), None)
            if column is not None:
                values[column.name] = value
    for arg, column_name in tool.arg_columns.items():
        column = entity.column(column_name)
        if arg in args and column is not None and arg != tool.pk_arg:
            values[column.name] = args[arg]
    return {k: v for k, v in values.items() if not entity.column(k).read_only}  # type: ignore[union-attr]


class _Builder:
    def __init__(self) -> None:
        self.specs: list[CriterionSpec] = []

    def add(self, criterion: Criterion, label: CriterionLabel, service: str | None) -> None:
        params = criterion.model_dump(mode="json")
        if any(s.kind == criterion.kind and s.service == service and s.params == params for s in self.specs):
            return
        self.specs.append(
            CriterionSpec(
                id=f"c{len(self.specs)}",
                kind=criterion.kind,
                label=label,
                service=service,
                params=params,
                description=criterion.describe(service),
            )
        )

    def weigh_guards(self) -> None:
        fails = sum(s.importance for s in self.specs if s.label == "no_op_fail")
        guards = [s for s in self.specs if s.label == "no_op_pass"]
        for spec in guards:
            spec.importance = round(GUARD_SHARE * max(fails, 1.0) / len(guards), 6)


def _stamps(entity: EntityDef | None) -> list[str]:
    return sorted(c.name for c in entity.columns if c.read_only and not c.primary_key) if entity else []


def _created_key(write: GoldWrite) -> Any:
    """The key of the row a create returned: at the top of its result, or where its response shape puts the row."""
    entity, result = write.entity, write.result
    if entity is None or not isinstance(result, dict):
        return None
    if result.get(entity.pk) is not None:
        return result[entity.pk]
    shape = write.tool.response
    rows = shape.rows(result) if shape is not None else None
    if rows:
        return rows[0][1].get(shape.key_of(entity.pk)) if shape is not None else None
    return None


def _creates(writes: Sequence[GoldWrite], service: str, table: str) -> list[dict[str, Any]]:
    """The column values each create call of this table set, in call order."""
    return [
        set_columns(w.tool, w.entity, w.args)
        for w in writes
        if w.service == service
        and w.entity is not None
        and w.entity.table == table
        and w.tool.operation == "create"
    ]


def _claim(unclaimed: list[dict[str, Any]], row: dict[str, Any]) -> set[str]:
    """The columns of the first create whose values the new row holds (a result that hides the new key)."""
    for i, values in enumerate(unclaimed):
        if all(same_value(v, row.get(k)) for k, v in values.items() if _checkable(v)):
            return set(unclaimed.pop(i))
    return set()


def _created_fields(writes: Sequence[GoldWrite], service: str, table: str) -> dict[str, set[str]]:
    """Key of each row a create made -> the columns the task's calls set on it (later updates included)."""
    out: dict[str, set[str]] = {}
    for w in writes:
        if w.service != service or w.entity is None or w.entity.table != table:
            continue
        key = _created_key(w) if w.tool.operation == "create" else None
        if key is not None:
            out.setdefault(value_key(key), set()).update(set_columns(w.tool, w.entity, w.args))
        elif w.tool.operation == "update":
            key = w.args.get(w.tool.pk_arg or "")
            if key is not None and value_key(key) in out:
                out[value_key(key)].update(set_columns(w.tool, w.entity, w.args))
    return out


async def _service_changes(
    b: _Builder,
    reader: RuntimeStateReader,
    manifest: ServiceManifest,
    writes: Sequence[GoldWrite],
) -> ServiceExpectation:
    svc = manifest.name
    final, seed = await reader.tables(svc), await reader.seed_tables(svc)
    expect = ServiceExpectation(
        hash=await reader.state_hash(svc), seed_hash=reader.cache.state_hash(reader.runtimes[svc])
    )
    by_table = {e.table: e for e in manifest.entities}
    for table in sorted(final):
        rows, before = final[table], seed.get(table, [])
        if rows is before or rows == before:
            continue
        if table == ACTION_LOG:
            seen = {r.get("seq") for r in before}
            for entry in rows:
                if entry.get("seq") not in seen:
                    raw = entry.get("arguments")
                    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
                    expect.actions.append(ActionAllowance(tool=str(entry.get("tool")), arguments=args))
                    b.add(ActionLogged(tool=str(entry.get("tool")), arguments=args), "no_op_fail", svc)
            continue
        entity = by_table.get(table)
        if entity is None:
            continue
        stamps = _stamps(entity)
        created, deleted, changed = table_changes(rows, before, entity.pk, set(stamps))
        allow = TableAllowance(pk=entity.pk, creates=len(created), deletes=deleted, stamps=stamps)
        fields = _created_fields(writes, svc, table)
        unclaimed = _creates(writes, svc, table)
        for row in created:
            set_fields = fields.get(value_key(row.get(entity.pk))) or _claim(unclaimed, row)
            where = {f: row[f] for f in sorted(set_fields) if _checkable(row.get(f))}
            b.add(RowCreated(table=table, pk=entity.pk, where=where), "no_op_fail", svc)
        for key in deleted:
            b.add(RowAbsent(table=table, where={entity.pk: key}), "no_op_fail", svc)
        after = {key_of(r.get(entity.pk)): r for r in rows}
        for key, cols in sorted(changed.items(), key=lambda kv: str(kv[0])):
            row = after[key]
            allow.updates.append(RowAllowance(key=row[entity.pk], columns=cols))
            values = {c: row.get(c) for c in cols}
            b.add(
                RowUpdated(table=table, pk=entity.pk, key=row[entity.pk], set=values, stamps=stamps),
                "no_op_fail",
                svc,
            )
        expect.tables[table] = allow
    return expect


async def _skipped(b: _Builder, reader: RuntimeStateReader, skip: SkippedWrite) -> None:
    """A guard that a write the rule ruled out did not happen (the state guard catches it too)."""
    tool, entity, svc = skip.tool, skip.entity, skip.service
    if tool.backend != "implemented" or entity is None:
        b.add(ActionAbsent(tool=tool.name, arguments=skip.args), "no_op_pass", svc)
        return
    if tool.operation == "create":
        where = {
            k: v
            for k, v in sorted(set_columns(tool, entity, skip.args).items())
            if isinstance(v, (str, int, float))
        }
        if (
            where
            and not await reader.seed_select(svc, entity.table, where)
            and not await reader.select(svc, entity.table, where)
        ):
            b.add(RowAbsent(table=entity.table, where=where), "no_op_pass", svc)
        return
    key = skip.args.get(tool.pk_arg or "")
    seed = await reader.seed_select(svc, entity.table, {entity.pk: key}) if key is not None else []
    if seed:
        b.add(RowUnchanged(table=entity.table, pk=entity.pk, key=key, expected=seed[0]), "no_op_pass", svc)


async def build_rubric(
    reader: RuntimeStateReader,
    manifests: Mapping[str, ServiceManifest],
    services: Sequence[str],
    distractors: Sequence[str],
    writes: Sequence[GoldWrite],
    answers: Sequence[AnswerSpec],
    skipped: Sequence[SkippedWrite] = (),
) -> list[CriterionSpec]:
    """The task's criteria, read from the gold replay's final state (``reader``) against the seed."""
    b = _Builder()
    expectations: dict[str, ServiceExpectation] = {}
    for svc in sorted(services):
        expectations[svc] = await _service_changes(b, reader, manifests[svc], writes)
    for svc in sorted(set(distractors) - set(services)):
        seed_hash = reader.cache.seed_hash(svc, reader.runtimes)
        expectations[svc] = ServiceExpectation(hash=seed_hash, seed_hash=seed_hash)
    asked = max(1, len(answers))
    for a in answers:
        if a.row is not None:
            service, table, pk, where, column = a.row
            b.add(
                AnswerRowField(
                    table=table, pk=pk, where=where, field=column, read_as=a.kind, asked=asked, what=a.what
                ),
                "no_op_fail",
                service,
            )
        else:
            b.add(
                AnswerValue(
                    value=a.value,
                    read_as=a.kind,
                    code_type=a.code_type,
                    rivals=a.rivals,
                    asked=asked,
                    source=a.source,
                    what=a.what,
                ),
                "no_op_fail",
                None,
            )
    for skip in skipped:
        await _skipped(b, reader, skip)
    b.add(StateGuard(services=expectations), "no_op_pass", None)
    b.weigh_guards()
    return b.specs
