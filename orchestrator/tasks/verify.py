"""Verifying the verifiers: a task is kept only if its rubric tells right work from wrong work.

For each task: the gold calls replayed on fresh forks must reproduce the recorded results
and state hashes and complete; an empty episode must fail a ``no_op_fail`` criterion and
pass every guard; every valid variant (``solutions``) must complete and every wrong
solution must not. Outcomes are kept per kind, so ``tasks check`` reports the rates.

The gold run stays open while the solutions run: calls are deterministic on a fork (the gold
replay proves it by reproducing the recorded results), so a solution whose calls are exactly
the gold calls (one that differs only in its answer) is graded on the gold run's final state,
and one that makes the gold calls and then more (an extra delete, a clobbered field) starts
from a fork of that state and runs only the rest. Every other solution runs from the seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from compoworld.runtime.service import ServiceRuntime
from orchestrator.models import Task, Verdict, WalkStep
from orchestrator.rubric.base import Criterion, CriterionError, criterion_registry
from orchestrator.rubric.evaluate import complete, evaluate
from orchestrator.rubric.readers import RuntimeStateReader, SeedCache
from orchestrator.tasks.execute import Session
from orchestrator.tasks.replay import replay
from orchestrator.tasks.seeds import SeedIndex
from orchestrator.tasks.solutions import SOLUTION_KINDS, Call, Solution, SolutionContext, answer_for, rng_for

__all__ = [
    "KindRate",
    "SolutionOutcome",
    "SolutionRates",
    "TaskCheck",
    "check_task",
    "run_solution",
    "task_steps",
]


class SolutionOutcome(BaseModel):
    """How the rubric judged one valid variant or wrong solution of a task."""

    kind: str = Field(description="Solution kind (reordered, extra_delete...).")
    family: str = Field(description="valid: must complete; wrong: must not.")
    completed: bool = Field(description="Whether every criterion passed.")
    detail: str = Field(default="", description="The first failing criterion, or what the solution did.")

    @property
    def as_expected(self) -> bool:
        return self.completed == (self.family == "valid")


class KindRate(BaseModel):
    """How often one solution kind was judged as it should be."""

    family: str = Field(description="valid | wrong.")
    applied: int = Field(default=0, description="Tasks the kind applied to.")
    as_expected: int = Field(default=0, description="Of those: valid ones completed, wrong ones did not.")

    @property
    def rate(self) -> float:
        return self.as_expected / self.applied if self.applied else 1.0


class SolutionRates(BaseModel):
    """Per-kind rates over many tasks, and the do-nothing rubric fraction."""

    kinds: dict[str, KindRate] = Field(default_factory=dict, description="Kind -> its rate.")
    noop_tasks: int = Field(default=0, description="Tasks with a do-nothing run graded.")
    noop_score_sum: float = Field(default=0.0, description="Sum of their do-nothing rubric fractions.")

    def add(self, check: TaskCheck) -> None:
        for outcome in check.outcomes:
            rate = self.kinds.setdefault(outcome.kind, KindRate(family=outcome.family))
            rate.applied += 1
            rate.as_expected += int(outcome.as_expected)
        if check.noop_score is not None:
            self.noop_tasks += 1
            self.noop_score_sum += check.noop_score

    def _family(self, family: str) -> tuple[int, int]:
        rates = [r for r in self.kinds.values() if r.family == family]
        return sum(r.as_expected for r in rates), sum(r.applied for r in rates)

    @property
    def valid_rate(self) -> float:
        ok, n = self._family("valid")
        return ok / n if n else 1.0

    @property
    def wrong_caught_rate(self) -> float:
        ok, n = self._family("wrong")
        return ok / n if n else 1.0

    @property
    def noop_mean(self) -> float:
        return self.noop_score_sum / self.noop_tasks if self.noop_tasks else 0.0


class TaskCheck(BaseModel):
    """The verification outcome of one task."""

    task_id: str = Field(description="Task id.")
    valid: bool = Field(description="Gold completes, doing nothing fails, every solution judged as expected.")
    reasons: list[str] = Field(default_factory=list, description="Why the task is invalid, if it is.")
    outcomes: list[SolutionOutcome] = Field(
        default_factory=list, description="Valid variants and wrong solutions."
    )
    noop_score: float | None = Field(default=None, description="Rubric fraction a do-nothing run gets.")


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def task_steps(task: Task) -> list[WalkStep]:
    """The task's walk, or (for a task without one) its gold calls as unconditional steps."""
    if task.meta.walk:
        return list(task.meta.walk)
    return [WalkStep(service=g.service, tool=g.tool, arguments=g.arguments) for g in task.gold_calls]


def _structure(task: Task, runtimes: Mapping[str, ServiceRuntime]) -> list[str]:
    reasons: list[str] = []
    for svc in [*task.services, *task.distractors]:
        if svc not in runtimes:
            reasons.append(f"service '{svc}' is not in the library")
    steps = task_steps(task)
    executed = [s for s in steps if s.executed]
    if len(executed) != len(task.gold_calls):
        reasons.append(
            f"walk has {len(executed)} executed steps but there are {len(task.gold_calls)} gold calls"
        )
    for i, (step, gold) in enumerate(zip(executed, task.gold_calls, strict=False)):
        if (step.service, step.tool, _canon(step.arguments)) != (
            gold.service,
            gold.tool,
            _canon(gold.arguments),
        ):
            reasons.append(f"gold call {i} does not match its walk step")
    for step in steps:
        runtime = runtimes.get(step.service)
        if runtime is not None and step.tool not in runtime.tools:
            reasons.append(f"service '{step.service}' has no tool '{step.tool}'")
    for spec in task.rubric:
        try:
            criterion_registry.build(spec)
        except CriterionError as exc:
            reasons.append(str(exc))
    if not any(c.label == "no_op_fail" for c in task.rubric):
        reasons.append("no criterion fails when the agent does nothing")
    return reasons


def _first_failure(verdicts: Sequence[Verdict]) -> str:
    failed = next((v for v in verdicts if not v.passed), None)
    return f"{failed.id} ({failed.kind}): {failed.detail}" if failed else "every criterion passed"


@dataclass
class GoldRun:
    """The gold replay, still open: the calls it sent, their data, its session and its grading view."""

    session: Session
    calls: list[Call]
    results: list[Any]
    reader: RuntimeStateReader


def _same_calls(a: Sequence[Call], b: Sequence[Call]) -> bool:
    return len(a) == len(b) and all(
        (x.service, x.tool, _canon(x.args)) == (y.service, y.tool, _canon(y.args))
        for x, y in zip(a, b, strict=True)
    )


async def run_solution(
    task: Task,
    solution: Solution,
    runtimes: Mapping[str, ServiceRuntime],
    cache: SeedCache,
    ctx: SolutionContext,
    base: GoldRun | None = None,
    *,
    lazy: bool = True,
    built: Sequence[Criterion] | None = None,
) -> SolutionOutcome:
    """Run a solution's calls on forks and grade its final state and answer.

    With ``base`` (the open gold run), calls that repeat the gold calls are not run again: the
    solution starts from the gold run's final state (see the module docstring).
    """
    shared = base is not None and _same_calls(solution.calls[: len(base.calls)], base.calls)
    if base is not None and shared and len(solution.calls) == len(base.calls):
        reader = base.reader
        answer = await answer_for(
            task.rubric, reader, solution.answer, ctx.rng, dump=list(base.results), encode=cache.dump_text
        )
        verdicts = await evaluate(task.rubric, reader, answer, built=built)
    else:
        parent = base.session if base is not None and shared else None
        rest = solution.calls[len(base.calls) :] if base is not None and shared else solution.calls
        results = list(base.results) if base is not None and shared else []
        with Session(
            runtimes, f"verify:{task.id}:{solution.kind}", task.today, cache, parent=parent, lazy=lazy
        ) as session:
            for call in rest:
                out = await session.call(call.service, call.tool, call.args)
                results.append(out.data if out.success else {"code": out.code, "message": out.message})
            reader = session.reader()
            answer = await answer_for(
                task.rubric, reader, solution.answer, ctx.rng, dump=results, encode=cache.dump_text
            )
            verdicts = await evaluate(task.rubric, reader, answer, built=built)
    done = complete(verdicts)
    detail = _first_failure(verdicts) if not done else (solution.note or "completed")
    return SolutionOutcome(kind=solution.kind, family=solution.family, completed=done, detail=detail)


async def _gold(
    task: Task,
    session: Session,
    runtimes: Mapping[str, ServiceRuntime],
    hashes: bool,
    built: Sequence[Criterion] | None = None,
) -> tuple[list[str], GoldRun]:
    reasons: list[str] = []
    steps = task_steps(task)
    replayed = await replay(steps, session)
    for i, outcome in enumerate(replayed.outcomes):
        if outcome is not None and not outcome.success:
            reasons.append(f"gold step {i} ({steps[i].tool}) failed: {outcome.message}")
    sent = [
        (s, a, r) for s, a, r in zip(steps, replayed.args, replayed.results, strict=True) if a is not None
    ]
    results = [r for _, _, r in sent]
    if len(results) != len(task.gold_calls) or any(
        r is not g.result and _canon(r) != _canon(g.result)
        for r, g in zip(results, task.gold_calls, strict=False)
    ):
        reasons.append("replayed gold calls return different results than recorded")
    reader = session.reader()
    verdicts = await evaluate(task.rubric, reader, await answer_for(task.rubric, reader), built=built)
    reasons += [f"gold replay fails {v.id} ({v.kind}): {v.detail}" for v in verdicts if not v.passed]
    for svc, expected in sorted(task.expected_state_hash.items()) if hashes else ():
        if svc in runtimes and await reader.state_hash(svc) != expected:
            reasons.append(f"state hash of '{svc}' after the gold calls differs from the recorded one")
    calls = [Call(s.service, s.tool, a) for s, a, _ in sent]
    return reasons, GoldRun(session, calls, results, reader)


async def check_task(
    task: Task,
    runtimes: Mapping[str, ServiceRuntime],
    seeds: SeedIndex,
    *,
    cache: SeedCache | None = None,
    solutions: bool = True,
    hashes: bool = True,
    reuse: bool = True,
) -> TaskCheck:
    """Re-verify one task against a library (forks are deleted; nothing is left behind).

    ``reuse=False`` runs every solution from the seed (the slower reference the bench compares).
    """
    cache = cache or SeedCache()
    reasons = _structure(task, runtimes)
    if reasons:
        return TaskCheck(task_id=task.id, valid=False, reasons=reasons)
    built = [criterion_registry.build(spec) for spec in task.rubric]  # once for all the task's runs
    with Session(
        runtimes, f"verify:{task.id}:gold", task.today, cache, lazy=reuse, skip_known_writes=False
    ) as session:  # the gold replay runs every write: it must reproduce the recorded results itself
        reasons, gold = await _gold(task, session, runtimes, hashes, built)
        noop = await evaluate(task.rubric, RuntimeStateReader(runtimes, None, cache), "", built=built)
        if all(v.passed for v in noop if v.label == "no_op_fail"):
            reasons.append("doing nothing passes every no_op_fail criterion")
        reasons += [
            f"doing nothing fails guard {v.id} ({v.kind}): {v.detail}"
            for v in noop
            if v.label == "no_op_pass" and not v.passed
        ]
        weights = {c.id: c.importance for c in task.rubric}
        total = sum(weights.values()) or 1.0
        check = TaskCheck(
            task_id=task.id, valid=False, noop_score=sum(weights[v.id] for v in noop if v.passed) / total
        )
        if solutions and not reasons:
            steps = task_steps(task)
            for kind in SOLUTION_KINDS.ordered():
                if kind == "gold":
                    continue
                ctx = SolutionContext(task, steps, runtimes, seeds, rng_for(task, kind))
                solution = SOLUTION_KINDS.get(kind).maker(ctx)
                if solution is None:
                    continue
                outcome = await run_solution(
                    task, solution, runtimes, cache, ctx, gold if reuse else None, lazy=reuse, built=built
                )
                check.outcomes.append(outcome)
                if not outcome.as_expected:
                    verb = "does not complete" if outcome.family == "valid" else "completes"
                    reasons.append(f"{outcome.family} solution '{kind}' {verb}: {outcome.detail}")
    check.reasons = reasons
    check.valid = not reasons
    return check
