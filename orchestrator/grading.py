"""Grading at ``finish``: the rubric's ``evaluate`` over the episode's final state and answer.

The grader reads state only through a ``StateReader`` (targeted selects over the services'
admin routes, or in-process for embedded services), so it never needs full dumps. Scores
are the rubric's own (``orchestrator.rubric.rubric_score`` and ``complete``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from orchestrator.models import CriterionSpec, Verdict
from orchestrator.rubric import StateReader, evaluate

__all__ = ["Grader", "StateReader", "default_grader"]

Grader = Callable[[list[CriterionSpec], StateReader, str], Awaitable[list[Verdict]]]


def default_grader() -> Grader:
    """``orchestrator.rubric.evaluate`` with the built-in criterion registry."""
    return evaluate
