"""Rubric criteria (registered by kind), the StateReader protocol, and ``evaluate``."""

from orchestrator.rubric.base import (
    Check,
    Criterion,
    CriterionError,
    CriterionRegistry,
    DumpingStateReader,
    StateReader,
    criterion_registry,
    register_criterion,
)
from orchestrator.rubric.evaluate import Rubric, complete, evaluate, rubric_score
from orchestrator.rubric.normalize import answer_contains, normalize_text, same_value
from orchestrator.rubric.readers import RuntimeStateReader

__all__ = [
    "Check",
    "Criterion",
    "CriterionError",
    "CriterionRegistry",
    "DumpingStateReader",
    "Rubric",
    "RuntimeStateReader",
    "StateReader",
    "answer_contains",
    "complete",
    "criterion_registry",
    "evaluate",
    "normalize_text",
    "register_criterion",
    "rubric_score",
    "same_value",
]
