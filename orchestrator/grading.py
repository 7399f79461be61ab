"""Grading at ``finish``: the rubric's ``evaluate`` over the episode's final state and answer.

The grader reads state only through a ``StateReader`` (targeted selects over the services'
admin routes, or in-process for embedded services), so it never needs full dumps. Scores
are the rubric's own (importance-weighted fraction; complete = every criterion passed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from orchestrator.models import CriterionSpec, Verdict
from orchestrator.rubric import StateReader, complete, evaluate
from orchestrator.rubric import rubric_score as weighted_score

__all__ = ["Grader", "StateReader", "default_grader", "rubric_score"]

Grader = Callable[[list[CriterionSpec], StateReader, str], Awaitable[list[Verdict]]]


def default_grader() -> Grader:
    """``orchestrator.rubric.evaluate`` with the built-in criterion registry."""
    return evaluate


def rubric_score(criteria: list[CriterionSpec], verdicts: list[Verdict]) -> tuple[float, bool]:
    """(importance-weighted fraction passed, whether every criterion passed)."""
    return weighted_score(verdicts, criteria), complete(verdicts)
