"""Replay a walk's steps on a session: the gold replay, the plan replay, and mutated replays.

With ``resolve=True`` an argument bound to an earlier step (``step:<i>:<path>``) is read
again from that step's result in *this* replay, so a replay that went wrong upstream (a
mutated id) carries its mistake downstream the way an agent would. A step whose inputs
do not resolve, or whose condition does not hold, is not called.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld.contracts import ToolResult
from orchestrator.models import CriterionSpec, StepCondition, WalkStep
from orchestrator.rubric.normalize import same_value, value_text
from orchestrator.tasks.execute import Session
from orchestrator.tasks.paths import MISSING, get_path, parse_step_ref, resolve_source, set_arg

__all__ = ["Mutation", "ReplayResult", "answer_text", "condition_holds", "replay"]


@dataclass(frozen=True)
class Mutation:
    """One perturbed argument of one step: what a slightly wrong agent would have sent."""

    step: int
    arg: str
    value: Any
    kind: str = "value"


@dataclass
class ReplayResult:
    """Per step: the arguments sent (None if not called), the tool result, and the data (MISSING on failure)."""

    args: list[dict[str, Any] | None] = field(default_factory=list)
    outcomes: list[ToolResult | None] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)

    @property
    def failed(self) -> list[int]:
        return [i for i, out in enumerate(self.outcomes) if out is not None and not out.success]


def condition_holds(condition: StepCondition, results: Sequence[Any]) -> bool:
    """Whether an upstream value satisfies the step's condition (a value that does not resolve: no)."""
    actual = resolve_source(condition.source, results)
    if actual is MISSING:
        return False
    if condition.op == "eq":
        return same_value(condition.value, actual)
    if condition.op == "ne":
        return not same_value(condition.value, actual)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (actual, condition.value)):
        return False
    return actual > condition.value if condition.op == "gt" else actual < condition.value


def _arguments(step: WalkStep, results: Sequence[Any], resolve: bool) -> dict[str, Any] | None:
    args = copy.deepcopy(step.arguments)
    if not resolve:
        return args
    for arg, provenance in sorted(step.bindings.items()):
        ref = parse_step_ref(provenance)
        if ref is None:
            continue
        index, path = ref
        value = get_path(results[index], path) if index < len(results) else MISSING
        if value is MISSING:
            return None
        set_arg(args, arg, value)
    return args


async def replay(
    steps: Sequence[WalkStep], session: Session, *, resolve: bool = False, mutation: Mutation | None = None
) -> ReplayResult:
    """Call each step in order on ``session``; the result lists align with ``steps``."""
    out = ReplayResult()
    for i, step in enumerate(steps):
        args = _arguments(step, out.results, resolve or mutation is not None)
        if args is not None and mutation is not None and mutation.step == i:
            set_arg(args, mutation.arg, mutation.value)
        runs = args is not None and (
            condition_holds(step.condition, out.results) if step.condition is not None else step.executed
        )
        if not runs or args is None:
            out.args.append(None)
            out.outcomes.append(None)
            out.results.append(MISSING)
            continue
        result = await session.call(step.service, step.tool, args)
        out.args.append(args)
        out.outcomes.append(result)
        out.results.append(result.data if result.success else MISSING)
    return out


def answer_text(rubric: Sequence[CriterionSpec], results: Sequence[Any]) -> str:
    """The answer a replay would give: each asked-for value, found at its source in these results."""
    parts: list[str] = []
    for spec in rubric:
        source = spec.params.get("source") if spec.kind == "answer_contains" else None
        if isinstance(source, str):
            value = resolve_source(source, results)
            if value is not MISSING:
                parts.append(value_text(value))
    return "; ".join(parts)
