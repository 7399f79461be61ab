"""Turn an executed walk into rubric criteria: state checks per write, answer checks, collateral guards.

State checks compare each row the walk wrote against the seed: a created row must exist
with the fields the walk set, a deleted row must be gone, an updated field must hold its
new value (only fields that really changed, so doing nothing fails them). Guards pin rows
of the same tables the walk had no business touching. Every check is built from the
*final* state of the replay, so a row created and then updated is checked once, as it ends.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import EntityDef, ToolDef
from compoworld.runtime.service import ServiceRuntime
from orchestrator.graph.model import ToolNode
from orchestrator.models import CriterionLabel, CriterionSpec, WalkStep
from orchestrator.rubric.base import Criterion
from orchestrator.rubric.kinds import (
    ActionAbsent,
    ActionLogged,
    AnswerContains,
    FieldEquals,
    RowAbsent,
    RowExists,
    RowUnchanged,
)
from orchestrator.tasks.execute import Session
from orchestrator.tasks.replay import ReplayResult
from orchestrator.tasks.seeds import SeedIndex, value_key
from orchestrator.tasks.walkstate import coerce_key

__all__ = ["build_rubric", "set_columns"]

MAX_GUARDS = 2


@dataclass
class _Touched:
    service: str
    entity: EntityDef
    key: Any
    fields: set[str] = field(default_factory=set)


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _checkable(value: Any) -> bool:
    """Values a row check can match on: scalars, and JSON values (stored canonically, so equal text)."""
    return _scalar(value) or (isinstance(value, (list, dict)) and bool(value))


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


def _touched_rows(
    steps: Sequence[WalkStep],
    nodes: Sequence[ToolNode],
    replayed: ReplayResult,
    runtimes: Mapping[str, ServiceRuntime],
) -> list[_Touched]:
    touched: dict[tuple[str, str, str], _Touched] = {}
    for i, node in enumerate(nodes):
        args, data = replayed.args[i], replayed.results[i]
        if args is None or node.kind != "write" or node.backend != "implemented":
            continue
        manifest = runtimes[node.service].manifest
        tool, entity = manifest.tool(node.tool), manifest.entity(node.entity or "")
        if tool is None or entity is None:
            continue
        if node.operation == "create":
            key = data.get(entity.pk) if isinstance(data, dict) else None
        else:
            key = coerce_key(entity, args.get(tool.pk_arg or ""))
        if key is None:
            continue
        row = touched.setdefault(
            (node.service, entity.table, value_key(key)), _Touched(node.service, entity, key)
        )
        if node.operation in ("create", "update"):
            row.fields |= set(set_columns(tool, entity, args))
    return list(touched.values())


def _state_checks(b: _Builder, rows: list[_Touched], session: Session, seeds: SeedIndex) -> None:
    for t in rows:
        entity = t.entity
        final = session.select(t.service, entity.table, {entity.pk: t.key})
        seed = seeds.row(t.service, entity, t.key)
        if final and seed is None:
            where = {f: final[0][f] for f in sorted(t.fields) if _checkable(final[0].get(f))} or {
                entity.pk: t.key
            }
            expected = len(session.select(t.service, entity.table, where))
            if len(session.runtimes[t.service].select(None, entity.table, where)) < expected:
                b.add(RowExists(table=entity.table, where=where, min_count=expected), "no_op_fail", t.service)
        elif not final and seed is not None:
            b.add(RowAbsent(table=entity.table, where={entity.pk: t.key}), "no_op_fail", t.service)
        elif final and seed is not None:
            for f in sorted(t.fields):
                # a field set to the value it already had is a guard: doing nothing keeps it, a wrong value breaks it
                label: CriterionLabel = "no_op_fail" if final[0].get(f) != seed.get(f) else "no_op_pass"
                b.add(
                    FieldEquals(table=entity.table, pk=entity.pk, key=t.key, field=f, value=final[0].get(f)),
                    label,
                    t.service,
                )


def _skipped_branch(
    b: _Builder,
    step: WalkStep,
    node: ToolNode,
    session: Session,
    seeds: SeedIndex,
    runtimes: Mapping[str, ServiceRuntime],
) -> None:
    """Guards for a conditional write whose condition did not hold: it must not have happened."""
    manifest = runtimes[node.service].manifest
    tool, entity = manifest.tool(node.tool), manifest.entity(node.entity or "")
    if node.backend != "implemented" or tool is None or entity is None:
        b.add(ActionAbsent(tool=node.tool, arguments=step.arguments), "no_op_pass", node.service)
    elif node.operation == "create":
        where = {k: v for k, v in sorted(set_columns(tool, entity, step.arguments).items()) if _scalar(v)}
        seeded = session.runtimes[node.service].select(None, entity.table, where) if where else [None]
        if where and not seeded and not session.select(node.service, entity.table, where):
            b.add(RowAbsent(table=entity.table, where=where), "no_op_pass", node.service)
    else:
        key = coerce_key(entity, step.arguments.get(tool.pk_arg or ""))
        final = session.select(node.service, entity.table, {entity.pk: key})
        if final and final[0] == seeds.row(node.service, entity, key):
            b.add(
                RowUnchanged(table=entity.table, pk=entity.pk, key=key, expected=final[0]),
                "no_op_pass",
                node.service,
            )


def _guards(
    b: _Builder,
    rng: random.Random,
    rows: list[_Touched],
    nodes: Sequence[ToolNode],
    session: Session,
    seeds: SeedIndex,
    runtimes: Mapping[str, ServiceRuntime],
) -> None:
    """Collateral guards: untouched seed rows of written tables (or, for read-only walks, the rows read)."""
    touched = {(t.service, t.entity.table, value_key(t.key)) for t in rows}
    tables: list[tuple[str, EntityDef]] = []
    for t in rows:
        if (t.service, t.entity) not in tables:
            tables.append((t.service, t.entity))
    if not tables:
        for node in nodes[:1]:
            entity = runtimes[node.service].manifest.entity(node.entity or "")
            if entity is not None:
                tables.append((node.service, entity))
    per_table = max(1, MAX_GUARDS // max(1, len(tables)))
    count = 0
    for service, entity in tables:
        seed_rows = [
            r
            for r in seeds.rows(service, entity.table)
            if (service, entity.table, value_key(r.get(entity.pk))) not in touched
        ]
        for row in rng.sample(seed_rows, min(per_table, len(seed_rows))):
            if count >= MAX_GUARDS:
                return
            final = session.select(service, entity.table, {entity.pk: row[entity.pk]})
            if final and final[0] == row:
                b.add(
                    RowUnchanged(table=entity.table, pk=entity.pk, key=row[entity.pk], expected=row),
                    "no_op_pass",
                    service,
                )
                count += 1


def build_rubric(
    rng: random.Random,
    steps: Sequence[WalkStep],
    nodes: Sequence[ToolNode],
    replayed: ReplayResult,
    answers: Sequence[tuple[str, Any]],
    session: Session,
    seeds: SeedIndex,
    runtimes: Mapping[str, ServiceRuntime],
) -> list[CriterionSpec]:
    """The task's criteria, from the replay's final state (``session``) and the chosen answer sources."""
    b = _Builder()
    rows = _touched_rows(steps, nodes, replayed, runtimes)
    _state_checks(b, rows, session, seeds)
    for i, node in enumerate(nodes):
        args = replayed.args[i]
        if args is not None and node.kind == "write" and node.backend == "simulated":
            b.add(ActionLogged(tool=node.tool, arguments=args), "no_op_fail", node.service)
        elif args is None and steps[i].condition is not None and not steps[i].condition.taken:  # type: ignore[union-attr]
            _skipped_branch(b, steps[i], node, session, seeds, runtimes)
    for source, value in answers:
        b.add(AnswerContains(value=value, source=source), "no_op_fail", None)
    _guards(b, rng, rows, nodes, session, seeds, runtimes)
    return b.specs
