"""Grade an episode: criteria in, one verdict per criterion out, plus the static-weight score.

``evaluate`` is the one entry point every grader calls (the task verifier in-process, the
orchestrator over HTTP). A criterion that cannot be checked as written fails with a
reason; a reader that cannot reach its service raises (an infrastructure failure).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

from orchestrator.models import CriterionSpec, Verdict
from orchestrator.rubric.base import (
    Criterion,
    CriterionError,
    CriterionRegistry,
    StateReader,
    criterion_registry,
)

__all__ = ["Rubric", "complete", "evaluate", "rubric_score"]


async def _one(
    spec: CriterionSpec,
    reader: StateReader,
    answer: str,
    registry: CriterionRegistry,
    built: Criterion | None = None,
) -> Verdict:
    try:
        criterion = built if built is not None else registry.build(spec)
        passed, detail = await criterion.check(reader, spec.service, answer)
    except (CriterionError, LookupError) as exc:
        passed, detail = False, f"cannot be checked: {exc}"
    return Verdict(
        id=spec.id, kind=spec.kind, label=spec.label, passed=passed, detail=detail, importance=spec.importance
    )


async def evaluate(
    criteria: list[CriterionSpec],
    reader: StateReader,
    answer: str,
    *,
    registry: CriterionRegistry | None = None,
    built: Sequence[Criterion] | None = None,
) -> list[Verdict]:
    """One verdict per criterion, in order; checks run concurrently when the reader is remote (they
    overlap their reads), one after another in-process (nothing to overlap, and a task per check
    costs more than most checks). ``built``: the criteria already built from these specs, in order
    (a verifier grading many runs of one task builds them once)."""
    reg = registry or criterion_registry
    objs: Sequence[Criterion | None] = built if built is not None else [None] * len(criteria)
    if len(criteria) == 1 or not getattr(reader, "remote", True):
        return [await _one(c, reader, answer, reg, b) for c, b in zip(criteria, objs, strict=True)]
    return list(
        await asyncio.gather(*(_one(c, reader, answer, reg, b) for c, b in zip(criteria, objs, strict=True)))
    )


def rubric_score(verdicts: Sequence[Verdict]) -> float:
    """Importance-weighted fraction of criteria passed (static weights: the n = 1 case of the reward).

    Each verdict carries its criterion's importance s_c, so the verdicts alone are the input.
    """
    total = math.fsum(v.importance for v in verdicts)
    if not verdicts or total <= 0:
        return 0.0
    return math.fsum(v.importance for v in verdicts if v.passed) / total


def complete(verdicts: Sequence[Verdict]) -> bool:
    """Whether every criterion passed (an empty rubric completes nothing)."""
    return bool(verdicts) and all(v.passed for v in verdicts)


class Rubric:
    """A task's criteria as one container: evaluate, then score and gate on completion (STYLE #8)."""

    def __init__(self, criteria: Sequence[CriterionSpec], registry: CriterionRegistry | None = None) -> None:
        self.criteria = list(criteria)
        self.registry = registry or criterion_registry

    async def evaluate(self, reader: StateReader, answer: str) -> list[Verdict]:
        return await evaluate(self.criteria, reader, answer, registry=self.registry)

    def score(self, verdicts: Sequence[Verdict]) -> float:
        return rubric_score(verdicts)

    @staticmethod
    def complete(verdicts: Sequence[Verdict]) -> bool:
        return complete(verdicts)
