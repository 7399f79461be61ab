"""Value comparison for grading: case, whitespace, number and date formatting never decide a verdict.

An agent that writes "ADA.CHEN@example.com" for ``ada.chen@example.com``, ``120`` for
``120.0`` or ``2025-05-01T00:00:00Z`` into a date column for ``2025-05-01`` has the value
right. Free-text answers are read by ``orchestrator.rubric.answers``.
"""

from __future__ import annotations

import math
from typing import Any

from orchestrator.rubric.answers import kind_of, normalize, parse_stamp, states
from orchestrator.rubric.answers import numbers_in as _typed_numbers

__all__ = ["answer_contains", "covers", "normalize_text", "numbers_in", "same_value", "value_text"]


def normalize_text(text: str) -> str:
    """NFKC, case-folded, typographic quotes straightened, whitespace collapsed."""
    return normalize(text)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (thousands separators allowed; codes and dates are not numbers)."""
    return [value for value, _ in _typed_numbers(text)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.005)


def _same_stamp(expected: str, actual: str) -> bool | None:
    """Dates by the day they name, date-times by instant; None when either is not a date."""
    want, got = parse_stamp(expected), parse_stamp(actual)
    if want is None or got is None:
        return None
    if want[1] is None or got[1] is None:
        return want[0] == got[0]
    return want[1] == got[1]


def same_value(expected: Any, actual: Any) -> bool:
    """Equality for state checks: numbers numerically, dates by what they denote, strings up to case and
    spacing, containers element-wise, the rest exactly."""
    if _is_number(expected) and _is_number(actual):
        return _close(float(expected), float(actual))
    if isinstance(expected, str) and isinstance(actual, str):
        if normalize(expected) == normalize(actual):
            return True
        both_dates = expected[:1].isdigit() and actual[:1].isdigit()
        return bool(_same_stamp(expected, actual)) if both_dates else False
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same_value(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same_value(a, b) for a, b in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def covers(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` holds at least ``expected``: every key of a dict (recursively), the value otherwise.

    A call with an extra sensible field covers the call it was expected to be."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and covers(v, actual[k]) for k, v in expected.items()
        )
    return same_value(expected, actual)


def value_text(value: Any) -> str:
    """How a value is written into an answer or an instruction."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def answer_contains(answer: str, value: Any) -> bool:
    """Whether a free-text answer states ``value``, read by its type (see ``answers.states``)."""
    return states(answer, value, kind_of(value))
