"""Output schemas and output semantics of tools.

An implemented tool answers with the body its spec declares (``compoworld.synth.responses``);
where the spec declares none, its output schema is derived from the entity's columns (never
written twice): one row for read/create/update, ``{"items": [rows], "total": n}`` for
list/search, ``{"deleted": true, "id": key}`` for delete. The task graph links services through
the semantic types found at dotted paths of these outputs.
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ColumnDef, EntityDef
from compoworld.specs.semantic import value_tag
from compoworld.specs.shapes import json_type
from compoworld.synth.schemas import merged_properties

__all__ = [
    "column_schema",
    "delete_schema",
    "entity_schema",
    "list_schema",
    "row_semantics",
    "schema_semantics",
]

_SCALAR = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean"}


def column_schema(column: ColumnDef) -> dict[str, Any]:
    """JSON schema of one column's value as the service returns it."""
    if column.type == "json":
        kind = json_type(column.json_schema)
        out: dict[str, Any] = {"type": [kind, "null"]} if kind in ("object", "array") else {}
    else:
        out = {"type": _SCALAR[column.type] if not column.nullable else [_SCALAR[column.type], "null"]}
        if column.enum:
            out["enum"] = [*column.enum, None] if column.nullable else list(column.enum)
        if column.format:
            out["format"] = column.format
    if column.description:
        out["description"] = column.description[:200]
    return out


def entity_schema(entity: EntityDef) -> dict[str, Any]:
    """The public JSON schema of one row, keyed as the spec spells each field."""
    return {
        "type": "object",
        "title": entity.class_name,
        "properties": {(c.source_name or c.name): column_schema(c) for c in entity.columns},
        "required": [c.source_name or c.name for c in entity.columns if not c.nullable],
    }


def list_schema(entity: EntityDef) -> dict[str, Any]:
    """Output of list/search tools: a page of rows and the number of matching rows."""
    return {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": entity_schema(entity)},
            "total": {"type": "integer", "description": "Number of matching rows before paging."},
        },
        "required": ["items", "total"],
    }


def delete_schema(entity: EntityDef) -> dict[str, Any]:
    """Output of delete tools."""
    pk = entity.column(entity.pk)
    assert pk is not None
    return {
        "type": "object",
        "properties": {"deleted": {"type": "boolean", "const": True}, "id": {"type": _SCALAR[pk.type]}},
        "required": ["deleted", "id"],
    }


def row_semantics(
    entity: EntityDef, prefix: str = "", fields: dict[str, str] | None = None
) -> dict[str, str]:
    """Dotted path -> semantic type for every tagged column a row carries (``contact_ids[]`` for id lists).

    ``fields`` (column -> body key, from the response shape) says which columns the body carries
    and under which key; without it every column travels under its own name.
    """
    out: dict[str, str] = {}
    for c in entity.columns:
        key = fields.get(c.name) if fields is not None else c.name
        if c.semantic and key is not None:
            is_list = c.type == "json" and json_type(c.json_schema) == "array"
            out[prefix + key + ("[]" if is_list else "")] = c.semantic
    return out


def schema_semantics(
    schema: dict[str, Any] | None, hints: dict[str, str] | None = None, *, max_depth: int = 3
) -> dict[str, str]:
    """Semantic types at dotted paths of an arbitrary response schema (``[]`` marks list items).

    ``hints`` maps top-level field names to semantic types the ingester already found.
    """
    out: dict[str, str] = {}
    hints = hints or {}

    def walk(node: Any, path: str, name: str, depth: int) -> None:
        if not isinstance(node, dict) or depth > max_depth:
            return
        kind = json_type(node)
        if kind == "array":
            walk(node.get("items"), path + "[]", name, depth + 1)
            return
        props, _ = merged_properties(node)
        if props:
            for key in sorted(props):
                child = f"{path}.{key}" if path else key
                walk(props[key], child, key, depth + 1)
            return
        if not name:
            return
        tag = hints.get(path) or (hints.get(name) if depth <= 2 else None) or value_tag(name, node)
        if tag:
            out[path] = tag

    walk(schema, "", "", 0)
    return out
