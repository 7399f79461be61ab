"""Reading a declared JSON schema the way the response shaper needs it: the JSON types a node names,
the properties an object has once ``allOf``/``anyOf`` are united, and a fixed, schema-valid value for
a required field typed state has nothing for.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from compoworld.schema_types import schema_types
from compoworld.seeding import derive_seed

__all__ = ["constant_of", "default_value", "match_key", "schema_props", "schema_types", "without_nulls"]

_TRUE_FLAGS = frozenset({"success", "ok", "deleted", "done", "result", "succeeded", "successful", "valid"})


def match_key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def schema_props(schema: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Properties (allOf members and object variants of anyOf/oneOf united) and required names."""
    props: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    own = schema.get("properties")
    if isinstance(own, dict):
        props.update({k: v for k, v in own.items() if isinstance(v, dict)})
    if isinstance(schema.get("required"), list):
        required += [r for r in schema["required"] if isinstance(r, str)]
    for sub in schema.get("allOf") or []:
        if isinstance(sub, dict):
            inner, inner_required = schema_props(sub)
            props.update(inner)
            required += inner_required
    for key in ("anyOf", "oneOf"):
        variants = [v for v in schema.get(key) or [] if isinstance(v, dict)]
        for variant in variants:
            inner, _ = schema_props(variant)
            for name, sub in inner.items():
                props.setdefault(name, sub)
    if props:
        for name in required:  # required but never described: any value will do
            props.setdefault(name, {})
    return props, list(dict.fromkeys(required))


def default_value(schema: dict[str, Any], name: str) -> Any:
    """A fixed, schema-valid value for a required field state has nothing for (same name, same value)."""
    if "const" in schema:
        return schema["const"]
    enum = (
        [v for v in schema.get("enum") or [] if v is not None] if isinstance(schema.get("enum"), list) else []
    )
    if enum:
        return enum[0]
    types, _ = schema_types(schema)
    if types == {"boolean"}:
        return match_key(name) in _TRUE_FLAGS
    from compoworld.runtime.world import generate_value  # world -> ops -> shape: import when first needed

    seed = derive_seed(f"default:{name}")
    return without_nulls(generate_value(schema, random.Random(seed), name), schema)


def without_nulls(value: Any, schema: Any = None) -> Any:
    """A generated value without the nulls the generator leaves where it stops descending; a field
    the schema requires and lets be null keeps its null (a tournament's ``winner_type: null``)."""
    if isinstance(value, dict):
        props, required = schema_props(schema) if isinstance(schema, dict) else ({}, [])
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key)
            if item is not None:
                out[key] = without_nulls(item, sub)
            elif key in required and isinstance(sub, dict) and schema_types(sub)[1]:
                out[key] = None
        return out
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return [without_nulls(v, items) for v in value if v is not None]
    return value


def constant_of(value: Any) -> Callable[[], Any]:
    """A maker of ``value`` (a fresh copy each time when it is mutable)."""
    if isinstance(value, (dict, list)):
        text = json.dumps(value)
        return lambda: json.loads(text)
    return lambda: value
