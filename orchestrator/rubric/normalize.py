"""Value comparison for grading: case, whitespace and number formatting never decide a verdict.

An agent that answers "The total is $1,234.50" for an expected ``1234.5``, or writes
"ADA.CHEN@example.com" for ``ada.chen@example.com``, has the value right.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from typing import Any

__all__ = ["answer_contains", "normalize_text", "numbers_in", "same_value", "value_text"]

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ISO_DATETIME = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$"
)


def normalize_text(text: str) -> str:
    """NFKC, case-folded, typographic quotes straightened, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return _SPACES.sub(" ", text).strip()


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (thousands separators allowed)."""
    out: list[float] = []
    for match in _NUMBER.findall(text):
        try:
            out.append(float(match.replace(",", "")))
        except ValueError:
            continue
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.005)


def same_value(expected: Any, actual: Any) -> bool:
    """Equality for state checks: numbers numerically, strings up to case and spacing, the rest exactly."""
    if _is_number(expected) and _is_number(actual):
        return _close(float(expected), float(actual))
    if isinstance(expected, str) and isinstance(actual, str):
        return normalize_text(expected) == normalize_text(actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same_value(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same_value(a, b) for a, b in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def value_text(value: Any) -> str:
    """How a value is written into an answer or an instruction."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _date_variants(value: str) -> list[str]:
    match = _ISO_DATE.match(value)
    if not match:
        return []
    try:
        day = dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return []
    month = day.strftime("%B")
    return [
        f"{month} {day.day}, {day.year}",
        f"{day.day} {month} {day.year}",
        f"{month} {day.day} {day.year}",
    ]


def answer_contains(answer: str, value: Any) -> bool:
    """Whether a free-text answer states ``value`` (numbers by value, dates in common spellings)."""
    text = normalize_text(answer)
    if _is_number(value):
        return any(_close(float(value), n) for n in numbers_in(answer))
    if isinstance(value, bool):
        words = {"yes", "true"} if value else {"no", "false"}
        return any(re.search(rf"\b{w}\b", text) for w in words)
    if value is None:
        return False
    needle = normalize_text(value_text(value))
    if not needle:
        return False
    if needle in text:
        return True
    if isinstance(value, str):
        stamp = _ISO_DATETIME.match(value)
        if stamp:
            return stamp[1] in text and stamp[2] in text
        return any(normalize_text(v) in text for v in _date_variants(value))
    return False
