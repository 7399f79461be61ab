"""The JSON type a schema names, for the kernel and every layer above it (no ingestion code pulled in).

``compoworld.specs.shapes`` re-exports it; the runtime imports it from here, so a serving process
never loads the spec ingesters (and networkx with them).
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_type"]


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
