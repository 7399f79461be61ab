"""Random values that satisfy a JSON schema (the subset tool schemas use), for the random agent."""

from __future__ import annotations

import random
from typing import Any

__all__ = ["random_value"]

_WORDS = ("alpha", "report", "north", "blue", "invoice", "team", "launch", "delta", "notes", "review")


def _type_of(schema: dict[str, Any], rng: random.Random) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        options = [k for k in kind if k != "null"] or ["null"]
        return str(rng.choice(options))
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _string(schema: dict[str, Any], rng: random.Random, name: str, seen: dict[str, list[Any]]) -> str:
    pool = [v for v in seen.get(name, []) if isinstance(v, str)]
    if pool and rng.random() < 0.7:
        return str(rng.choice(pool))
    fmt = schema.get("format")
    if fmt == "email":
        return f"{rng.choice(_WORDS)}{rng.randint(1, 99)}@example.com"
    if fmt == "date":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if fmt == "date-time":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
    text = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}"
    lo, hi = int(schema.get("minLength", 0)), int(schema.get("maxLength", 64))
    text = text.ljust(lo, "x")[: max(hi, lo)]
    return text


def _number(
    schema: dict[str, Any], rng: random.Random, integer: bool, name: str, seen: dict[str, list[Any]]
) -> Any:
    pool = [v for v in seen.get(name, []) if isinstance(v, int | float) and not isinstance(v, bool)]
    if pool and rng.random() < 0.7:
        return rng.choice(pool)
    lo = float(schema.get("minimum", 0))
    hi = float(schema.get("maximum", lo + 20))
    if "exclusiveMinimum" in schema:
        lo = float(schema["exclusiveMinimum"]) + 1
    if "exclusiveMaximum" in schema:
        hi = float(schema["exclusiveMaximum"]) - 1
    lo, hi = min(lo, hi), max(lo, hi)
    if integer:
        return rng.randint(int(lo), int(hi))
    return round(rng.uniform(lo, hi), 2)


def random_value(
    schema: Any,
    rng: random.Random,
    *,
    name: str = "",
    seen: dict[str, list[Any]] | None = None,
    depth: int = 0,
) -> Any:
    """A value valid against ``schema``; ``seen`` maps field names to values observed in earlier results."""
    seen = seen or {}
    if not isinstance(schema, dict) or depth > 4:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return random_value(rng.choice(schema[key]), rng, name=name, seen=seen, depth=depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged.update(part)
        return random_value(merged, rng, name=name, seen=seen, depth=depth + 1)
    kind = _type_of(schema, rng)
    if kind == "object":
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        out = {}
        for key in sorted(props):
            if key in required or rng.random() < 0.4:
                out[key] = random_value(props[key], rng, name=key, seen=seen, depth=depth + 1)
        return out
    if kind == "array":
        lo = int(schema.get("minItems", 0))
        hi = max(lo, min(int(schema.get("maxItems", 3)), 3))
        items = schema.get("items") or {"type": "string"}
        return [
            random_value(items, rng, name=name, seen=seen, depth=depth + 1)
            for _ in range(rng.randint(lo, hi))
        ]
    if kind == "integer":
        return _number(schema, rng, True, name, seen)
    if kind == "number":
        return _number(schema, rng, False, name, seen)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return _string(schema, rng, name, seen)
