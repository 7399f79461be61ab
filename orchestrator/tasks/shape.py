"""What the user asks of a walk: which values the answer must state, and an optional branch.

An answer field is chosen to discriminate: a value stated nowhere in the instruction and
rare in its seed table (an invoice's amount, not its currency), so an agent that looked
at the wrong row gives a different answer. A branch makes the last write conditional on
a value found upstream; when the condition does not hold, the write must not happen.
"""

from __future__ import annotations

import math
import random
from typing import Any

from orchestrator.models import StepCondition
from orchestrator.rubric.normalize import normalize_text, value_text
from orchestrator.tasks.paths import parse_step_ref, step_ref
from orchestrator.tasks.seeds import SeedIndex
from orchestrator.tasks.walkstate import Walk

__all__ = ["add_condition", "choose_answers", "given_values", "prune_unused_reads"]


def given_values(walk: Walk) -> set[str]:
    """Normalised text of every argument value a walk used (stated or looked up): never an answer."""
    out: set[str] = set()
    for step in walk.steps:
        stack: list[Any] = [step.arguments]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif item is not None:
                out.add(normalize_text(value_text(item)))
    return out


def _field_candidates(walk: Walk, index: int, seeds: SeedIndex, used: set[str]) -> list[tuple[float, str]]:
    node = walk.nodes[index]
    entity = seeds.entity(node.service, node.entity)
    semantics = {o.path: o.semantic for o in node.outputs}
    out: list[tuple[float, str]] = []
    for spath, (path, value) in sorted(walk.pools[index].items()):
        if isinstance(value, bool) or value is None:
            continue
        text = normalize_text(value_text(value))
        if not text or len(text) > 80 or text in used:
            continue
        name = path.rsplit(".", 1)[-1]
        column = entity.column(name) if entity else None
        sem = semantics.get(spath) or (column.semantic if column else None)
        if column is not None and (column.primary_key or column.ref or column.read_only):
            continue  # keys and service-set stamps say nothing a wrong lookup would not also say
        weight = 1.0
        if sem:
            weight *= 2.0
        if (
            column is not None
            and entity is not None
            and seeds.count(node.service, entity.table, name, value) <= 1
        ):
            weight *= 3.0
        if sem in ("status", "currency", "country", "language", "timezone"):
            weight *= 0.3
        out.append((weight, step_ref(index, path)))
    return out


def _pick(rng: random.Random, weighted: list[tuple[float, str]]) -> str | None:
    if not weighted:
        return None
    total = sum(w for w, _ in weighted)
    pick = rng.random() * total
    for weight, item in weighted:
        pick -= weight
        if pick <= 0:
            return item
    return weighted[-1][1]


def _aggregate(rng: random.Random, walk: Walk, seeds: SeedIndex) -> str:
    index = len(walk.steps) - 1
    node = walk.nodes[index]
    entity = seeds.entity(node.service, node.entity)
    tool = seeds.tool(node.service, node.tool)
    fields = tool.shape.fields if tool is not None else {}
    numeric = [
        fields.get(c.name, c.source_name or c.name)  # the key the column travels under in the body
        for c in (entity.columns if entity else [])
        if c.type == "number" and not c.primary_key and not c.read_only and (not fields or c.name in fields)
    ]
    if numeric and rng.random() < 0.5:
        return f"sum:{index}:{rng.choice(numeric)}"
    return f"count:{index}"


def choose_answers(rng: random.Random, walk: Walk, seeds: SeedIndex, extra_rate: float = 0.35) -> list[str]:
    """Sources of the values the final answer must state (``step:i:path``, ``count:i``, ``sum:i:field``)."""
    if walk.aggregate:
        return [_aggregate(rng, walk, seeds)]
    used = given_values(walk)
    last = len(walk.steps) - 1
    readable = [
        i
        for i, s in enumerate(walk.steps)
        if s.kind == "read" and walk.pools[i] and not walk.rewritten_after(i)
    ]
    writes = any(s.kind == "write" for s in walk.steps)
    if last in readable:
        pick = _pick(rng, _field_candidates(walk, last, seeds, used))
        if pick:
            return [pick]
    if readable and (not writes or rng.random() < extra_rate):
        index = rng.choice(readable)
        pick = _pick(rng, _field_candidates(walk, index, seeds, used))
        if pick:
            return [pick]
    return []


def _numeric_threshold(value: float, above: bool) -> float:
    delta = max(1.0, abs(value) * 0.2)
    return float(math.ceil(value + delta)) if above else float(math.floor(value - delta))


def add_condition(rng: random.Random, walk: Walk, seeds: SeedIndex, answers: list[str], rate: float) -> bool:
    """Maybe guard the walk's last write with a condition on an upstream value; True if one was added."""
    last = walk.steps[-1]
    if last.kind != "write" or len(walk.steps) < 2 or rng.random() >= rate:
        return False
    bound = {p for p in last.bindings.values() if parse_step_ref(p)}
    options: list[tuple[str, Any, list[Any] | None]] = []
    for index in range(len(walk.steps) - 1):
        if walk.steps[index].kind != "read" or walk.rewritten_after(index):
            continue  # a branch tests a fact the agent looks up, not a value the task itself states
        node = walk.nodes[index]
        entity = seeds.entity(node.service, node.entity)
        for path, value in sorted(walk.pools[index].values()):
            column = entity.column(path.rsplit(".", 1)[-1]) if entity else None
            if (
                column is None
                or column.primary_key
                or column.ref
                or column.read_only
                or step_ref(index, path) in bound
            ):
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                options.append((step_ref(index, path), value, None))
            elif isinstance(value, str) and column.enum and len(column.enum) >= 2:
                options.append((step_ref(index, path), value, list(column.enum)))
    if not options:
        return False
    source, value, enum = rng.choice(options)
    other_fail = any(s.kind == "write" for s in walk.steps[:-1]) or bool(answers)
    taken = rng.random() < 0.6 or not other_fail
    if enum is not None:
        alternatives = [e for e in enum if e != value]
        last.condition = StepCondition(
            source=source, op="eq", value=value if taken else rng.choice(alternatives), taken=taken
        )
    else:
        op = rng.choice(["gt", "lt"])
        above = (op == "lt") == taken
        threshold: float | int = _numeric_threshold(float(value), above)
        if isinstance(value, int):
            threshold = int(threshold)
        last.condition = StepCondition(source=source, op=op, value=threshold, taken=taken)  # type: ignore[arg-type]
    last.executed = taken
    return True


def _reindex(ref: str, mapping: dict[int, int]) -> str:
    kind, _, rest = ref.partition(":")
    index, sep, tail = rest.partition(":")
    return f"{kind}:{mapping[int(index)]}{sep}{tail}" if index.isdigit() else ref


def prune_unused_reads(walk: Walk, sources: list[str]) -> list[str]:
    """Drop read steps nothing depends on (no binding, condition or answer uses them): a lookup whose
    result goes nowhere cannot be checked, so it would only lengthen the task. Returns re-indexed sources."""
    while True:
        used = {int(s.split(":")[1]) for s in sources}
        for step in walk.steps:
            refs = [*step.bindings.values(), *([step.condition.source] if step.condition else [])]
            used |= {r[0] for r in map(parse_step_ref, refs) if r is not None}
        drop = [i for i, s in enumerate(walk.steps) if s.kind == "read" and i not in used]
        if not drop:
            return sources
        keep = [i for i in range(len(walk.steps)) if i not in drop]
        mapping = {old: new for new, old in enumerate(keep)}
        for name in ("steps", "nodes", "results", "pools", "rows"):
            items = getattr(walk, name)
            setattr(walk, name, [items[i] for i in keep])
        for step in walk.steps:
            step.bindings = {
                a: _reindex(p, mapping) if parse_step_ref(p) else p for a, p in step.bindings.items()
            }
            if step.condition is not None:
                step.condition.source = _reindex(step.condition.source, mapping)
        sources = [_reindex(s, mapping) for s in sources]
