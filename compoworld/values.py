"""Bending plausible generated values to a field's JSON schema, shared by seed data and the world model."""

from __future__ import annotations

import random
import re
from typing import Any

import rstr

__all__ = ["fit_string"]


def fit_string(value: str, schema: dict[str, Any], rng: random.Random) -> str:
    """A plausible string made valid: a ``pattern`` it misses is honoured, then the length bounds."""
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, value) is None:
                value = rstr.Rstr(rng).xeger(pattern)
        except (re.error, ValueError, TypeError, IndexError):  # an ECMA-only pattern: keep the plain value
            pass
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(high, int) and len(value) > high:
        value = value[: max(high, 0)]
    if isinstance(low, int) and len(value) < low:
        value = value + "x" * (low - len(value))
    return value
