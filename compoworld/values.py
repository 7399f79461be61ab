"""Bending plausible generated values to a field's JSON schema, shared by seed data and the world model."""

from __future__ import annotations

import random
from typing import Any

from compoworld.patterns import matches, sample

__all__ = ["fit_string"]


def fit_string(value: str, schema: dict[str, Any], rng: random.Random) -> str:
    """A plausible string made valid: a ``pattern`` it misses is honoured, then the length bounds."""
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and matches(pattern, value) is False:
        drawn = sample(pattern, rng)
        value = value if drawn is None else drawn  # no sample the pattern accepts: keep the plain value
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(high, int) and len(value) > high:
        value = value[: max(high, 0)]
    if isinstance(low, int) and len(value) < low:
        value = value + "x" * (low - len(value))
    return value
