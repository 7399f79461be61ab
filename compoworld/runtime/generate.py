"""A deterministic, schema-valid value for any JSON schema: the offline world model's generator.

Seeded by the caller (sha256 of the service, tool and arguments), so the same call always gets
the same answer. Enums, consts, oneOf/anyOf/allOf, types, formats, lengths and required fields
are honoured; string values follow the field's name and format (dates, emails, ids, phones).
"""

from __future__ import annotations

import random
from typing import Any

from jsonschema.protocols import Validator

from compoworld import words as W
from compoworld.patterns import SchemaValidator
from compoworld.values import fit_string

__all__ = ["generate_value"]


def _string_for(name: str, schema: dict[str, Any], rng: random.Random, today: str) -> str:
    fmt = (schema.get("format") or "").lower()
    low = name.lower()
    if fmt == "date-time" or low.endswith(("_at", "time", "timestamp")):
        return f"{today}T{rng.randint(8, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}:00Z"
    if fmt == "date" or low.endswith("date"):
        return today
    if fmt == "email" or "email" in low:
        return f"{rng.choice(W.FIRST_NAMES).lower()}.{rng.choice(W.LAST_NAMES).lower()}@example.com"
    if fmt in ("uri", "url") or low.endswith(("url", "link", "href")):
        return f"https://example.com/{rng.choice(W.NOUNS)}/{rng.randint(1, 9999)}"
    if fmt == "uuid" or low == "uuid":
        return str(random.Random(rng.getrandbits(64)).getrandbits(128).to_bytes(16, "big").hex())
    if low == "id" or low.endswith(("_id", "id")):
        return f"{(low.removesuffix('_id').removesuffix('id') or 'obj')[:3]}_{rng.randint(100000, 999999)}"
    if "phone" in low or "mobile" in low:
        return f"+1555{rng.randint(1000000, 9999999)}"
    if "currency" in low:
        return rng.choice(("USD", "EUR", "GBP"))
    if "status" in low or "state" in low:
        return rng.choice(("active", "pending", "completed"))
    if "name" in low:
        return f"{rng.choice(W.FIRST_NAMES)} {rng.choice(W.LAST_NAMES)}"
    return f"{rng.choice(W.NOUNS)} {rng.choice(W.NOUNS)}"


def _one_of(schema: dict[str, Any], rng: random.Random, name: str, today: str, depth: int) -> Any:
    """A value for the first oneOf/anyOf branch whose value the whole schema accepts."""
    options = [o for o in schema.get("oneOf") or schema.get("anyOf") or [] if isinstance(o, dict)]
    options = [o for o in options if o.get("type") != "null"] or options
    check = _validator(schema)
    value: Any = None
    for option in options:
        value = generate_value(option, random.Random(rng.getrandbits(64)), name, today, depth)
        if check is None or check.is_valid(value):
            return value
    return value


def _validator(schema: dict[str, Any]) -> Validator | None:
    try:
        return SchemaValidator(schema)
    except Exception:  # an unusual upstream schema: generate without the check
        return None


def generate_value(
    schema: dict[str, Any], rng: random.Random, name: str = "", today: str = "2026-01-15", depth: int = 0
) -> Any:
    """A deterministic, schema-valid value for ``schema`` (enums, types, formats, lengths, required fields)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    if schema.get("oneOf") or schema.get("anyOf"):
        return _one_of(schema, rng, name, today, depth)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged["properties"].update(part.get("properties") or {})
                merged["required"] += part.get("required") or []
        return generate_value(merged, rng, name, today, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        out: dict[str, Any] = {}
        for key in sorted(props.keys() | required):
            if key in required or depth < 2:
                sub = props.get(key) or {"type": "string"}
                out[key] = generate_value(sub, rng, key, today, depth + 1) if depth <= 6 else None
        return out
    if kind == "array":
        if depth > 6:
            return []
        count = max(int(schema.get("minItems") or 0), 1 if schema.get("uniqueItems") else 2)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [generate_value(schema.get("items") or {}, rng, name, today, depth + 1) for _ in range(count)]
    if kind == "integer":
        lo = int(schema.get("minimum", 1))
        if "exclusiveMinimum" in schema and isinstance(schema["exclusiveMinimum"], (int, float)):
            lo = int(schema["exclusiveMinimum"]) + 1
        hi = int(schema.get("maximum", max(lo, 1) + 999))
        return rng.randint(lo, max(lo, hi))
    if kind == "number":
        low = float(schema.get("minimum", 1.0))
        high = float(schema.get("maximum", low + 999.0))
        return round(rng.uniform(low, max(low, high)), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return fit_string(_string_for(name, schema, rng, today), schema, rng)
