"""Rubric criteria (registered by kind), the StateReader protocols, and ``evaluate``."""

from orchestrator.rubric.answers import is_dump, kind_of, states
from orchestrator.rubric.base import (
    Check,
    Criterion,
    CriterionError,
    CriterionRegistry,
    DumpingStateReader,
    SeedStateReader,
    StateReader,
    WholeStateReader,
    criterion_registry,
    register_criterion,
)
from orchestrator.rubric.evaluate import Rubric, complete, evaluate, rubric_score
from orchestrator.rubric.normalize import answer_contains, covers, normalize_text, same_value
from orchestrator.rubric.readers import RuntimeStateReader, SeedCache

__all__ = [
    "Check",
    "Criterion",
    "CriterionError",
    "CriterionRegistry",
    "DumpingStateReader",
    "Rubric",
    "RuntimeStateReader",
    "SeedCache",
    "SeedStateReader",
    "StateReader",
    "WholeStateReader",
    "answer_contains",
    "complete",
    "covers",
    "criterion_registry",
    "evaluate",
    "is_dump",
    "kind_of",
    "normalize_text",
    "register_criterion",
    "rubric_score",
    "same_value",
    "states",
]
