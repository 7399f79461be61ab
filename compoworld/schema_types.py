"""The JSON types a schema names, for the kernel and every layer above it (no ingestion code pulled in).

``compoworld.specs.shapes`` re-exports ``json_type`` and ``compoworld.runtime.schema_read``
``schema_types``; the runtime imports them from here, so a serving process never loads the spec
ingesters (and networkx with them).
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_type", "schema_types"]


def json_type(schema: dict[str, Any]) -> str | None:
    """The first non-null JSON type a schema names (``["string", "null"]`` -> ``string``).

    Stricter than ``compoworld.specs.shapes.primary_type``: it reads ``allOf`` too but never guesses
    from ``items``, ``const`` or ``default``, which is what synthesis wants for column types.
    """
    raw = schema.get("type")
    if isinstance(raw, list):
        raw = next((t for t in raw if t != "null"), None)
    if isinstance(raw, str):
        return raw
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict) and json_type(sub) is not None:
                return json_type(sub)
    if "properties" in schema:
        return "object"
    return None


def schema_types(schema: dict[str, Any]) -> tuple[set[str], bool]:
    """The JSON types a schema names (through anyOf/oneOf), and whether it explicitly allows null."""
    raw = schema.get("type")
    types = (
        {raw}
        if isinstance(raw, str)
        else {t for t in raw if isinstance(t, str)}
        if isinstance(raw, list)
        else set()
    )
    nullable = "null" in types or schema.get("nullable") is True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        nullable = True
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict):
                sub_types, sub_null = schema_types(sub)
                types |= sub_types
                nullable = nullable or sub_null
    types.discard("null")
    return types, nullable
