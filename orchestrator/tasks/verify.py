"""Verifying the verifiers: a task is kept only if its rubric tells a solution from doing nothing.

For each task: the gold calls replayed on fresh forks must reproduce the recorded results
and state hashes and pass every criterion; an empty episode must fail at least one
``no_op_fail`` criterion and pass every ``no_op_pass`` guard. The mutation check perturbs
one gold call (another existing id, another value), replays with the mistake carried
downstream, and asks whether any criterion notices.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from compoworld.runtime.service import ServiceRuntime
from orchestrator.models import Task, WalkStep
from orchestrator.rubric.base import CriterionError, criterion_registry
from orchestrator.rubric.evaluate import evaluate
from orchestrator.rubric.readers import RuntimeStateReader
from orchestrator.tasks.arguments import arguments_read
from orchestrator.tasks.execute import Session
from orchestrator.tasks.paths import MISSING, get_arg
from orchestrator.tasks.replay import Mutation, answer_text, replay
from orchestrator.tasks.seeds import SeedIndex

__all__ = ["TaskCheck", "check_task", "choose_mutation", "task_steps"]


class TaskCheck(BaseModel):
    """The verification outcome of one task."""

    task_id: str = Field(description="Task id.")
    valid: bool = Field(
        description="Gold passes everything, doing nothing fails, hashes and results reproduce."
    )
    reasons: list[str] = Field(default_factory=list, description="Why the task is invalid, if it is.")
    mutation: str | None = Field(default=None, description="The perturbation tried, in words.")
    mutation_caught: bool | None = Field(
        default=None, description="Whether a criterion failed on the mutated replay."
    )


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def task_steps(task: Task) -> list[WalkStep]:
    """The task's walk, or (for a task without one) its gold calls as unconditional steps."""
    if task.meta.walk:
        return list(task.meta.walk)
    return [WalkStep(service=g.service, tool=g.tool, arguments=g.arguments) for g in task.gold_calls]


def _structure(task: Task, runtimes: Mapping[str, ServiceRuntime]) -> list[str]:
    reasons: list[str] = []
    for svc in task.services:
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


def _alternative(value: Any, pool: list[Any], rng: random.Random) -> Any:
    others = sorted({_canon(v): v for v in pool if _canon(v) != _canon(value) and v is not None}.items())
    if others:
        return rng.choice(others)[1]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return round(value * 1.1 + 1, 2)
    if isinstance(value, str):
        return f"x{value}"
    return MISSING


def choose_mutation(task: Task, runtimes: Mapping[str, ServiceRuntime], seeds: SeedIndex) -> Mutation | None:
    """One perturbed argument of one executed step, chosen by a rng seeded from the task id."""
    rng = random.Random(int.from_bytes(hashlib.sha256(f"mutate:{task.id}".encode()).digest()[:8], "big"))
    steps = task_steps(task)
    options: list[tuple[int, str]] = []
    for i, step in enumerate(steps):
        runtime = runtimes.get(step.service)
        tool = runtime.manifest.tool(step.tool) if runtime else None
        if not step.executed or tool is None or runtime is None:
            continue
        read = arguments_read(tool, runtime.manifest, runtime.tools[tool.name].backend)
        options += [
            (i, a) for a in sorted(step.arguments) if a in read and not isinstance(step.arguments[a], dict)
        ]
    rng.shuffle(options)
    for i, arg in options:
        step = steps[i]
        runtime = runtimes[step.service]
        tool = runtime.manifest.tool(step.tool)
        entity = runtime.manifest.entity(tool.entity or "") if tool else None
        value = get_arg(step.arguments, arg)
        pool: list[Any] = []
        kind = "value"
        if tool is not None and entity is not None:
            if arg == tool.pk_arg:
                pool, kind = [r.get(entity.pk) for r in seeds.rows(step.service, entity.table)], "id"
            elif arg in tool.arg_columns:
                column = entity.column(tool.arg_columns[arg])
                if column is not None:
                    pool = list(column.enum or []) or [
                        r.get(column.name) for r in seeds.rows(step.service, entity.table)
                    ]
                    kind = "id" if column.ref else "value"
        if tool is not None and not pool:
            schema = (tool.input_schema.get("properties") or {}).get(arg) or {}
            pool = list(schema.get("enum") or [])
        new = _alternative(value, pool, rng)
        if new is not MISSING:
            return Mutation(step=i, arg=arg, value=new, kind=kind)
    return None


async def check_task(
    task: Task,
    runtimes: Mapping[str, ServiceRuntime],
    seeds: SeedIndex,
    *,
    mutate: bool = True,
    hashes: bool = True,
) -> TaskCheck:
    """Re-verify one task against a library (fresh forks; nothing is left behind).

    ``hashes=False`` skips the full-state hash comparison (the generator's own plan replay
    recorded them moments before); ``tasks check`` always compares.
    """
    reasons = _structure(task, runtimes)
    if reasons:
        return TaskCheck(task_id=task.id, valid=False, reasons=reasons)
    steps = task_steps(task)
    with Session(runtimes, f"verify:{task.id}:gold", task.today).open(task.services) as session:
        replayed = await replay(steps, session)
        for i, env in enumerate(replayed.envelopes):
            if env is not None and not env.get("success"):
                reasons.append(
                    f"gold step {i} ({steps[i].tool}) failed: {env.get('error', {}).get('message', '')}"
                )
        results = [r for r, a in zip(replayed.results, replayed.args, strict=True) if a is not None]
        if len(results) != len(task.gold_calls) or any(
            _canon(r) != _canon(g.result) for r, g in zip(results, task.gold_calls, strict=False)
        ):
            reasons.append("replayed gold calls return different results than recorded")
        verdicts = await evaluate(task.rubric, session.reader(), answer_text(task.rubric, replayed.results))
        reasons += [f"gold replay fails {v.id} ({v.kind}): {v.detail}" for v in verdicts if not v.passed]
        for svc, expected in sorted(task.expected_state_hash.items()) if hashes else ():
            if svc in runtimes and session.state_hash(svc) != expected:
                reasons.append(f"state hash of '{svc}' after the gold calls differs from the recorded one")
    noop = await evaluate(task.rubric, RuntimeStateReader(runtimes, None), "")
    if all(v.passed for v in noop if v.label == "no_op_fail"):
        reasons.append("doing nothing passes every no_op_fail criterion")
    reasons += [
        f"doing nothing fails guard {v.id} ({v.kind}): {v.detail}"
        for v in noop
        if v.label == "no_op_pass" and not v.passed
    ]
    check = TaskCheck(task_id=task.id, valid=not reasons, reasons=reasons)
    if mutate and check.valid:
        mutation = choose_mutation(task, runtimes, seeds)
        if mutation is not None:
            with Session(runtimes, f"verify:{task.id}:mutant", task.today).open(task.services) as session:
                mutated = await replay(steps, session, mutation=mutation)
                verdicts = await evaluate(
                    task.rubric, session.reader(), answer_text(task.rubric, mutated.results)
                )
            check.mutation = (
                f"step {mutation.step} {steps[mutation.step].tool}.{mutation.arg} -> {mutation.value!r}"
            )
            check.mutation_caught = not all(v.passed for v in verdicts)
    return check
