"""What each tool consumes and produces, in semantic types: the graph's raw material.

A tool *produces* the typed fields of its result (an entity row's columns, with the
row's key as ``id:<entity>``, plus any ``output_semantics`` the manifest declares) and
*consumes* its arguments (``arg_semantics``, the key argument, the columns its arguments
set or filter on). Producer paths use the runtime's concrete result shapes: a row at
the top level for read/create/update, ``items[].col`` (or ``[].col``) for list/search.
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ColumnDef, EntityDef, ServiceManifest, ToolDef
from compoworld.specs.semantic import STAMP_ASPECTS, aspect, value_tag
from orchestrator.graph.model import InputPort, OutputPort, PortRole

__all__ = [
    "ACCEPTS",
    "QUERY",
    "ROW_OPERATIONS",
    "column_semantic",
    "input_ports",
    "list_prefix",
    "output_ports",
    "row_prefix",
    "schema_path",
]

#: Pseudo-type of a free-text search argument: it accepts names, titles and emails.
QUERY = "query"
#: Operations whose implemented result is one entity row.
ROW_OPERATIONS = frozenset({"create", "read", "update"})
#: Semantic types that never link two tools: their values are per-service vocabularies.
_UNLINKABLE = frozenset({"status", "color", "uuid"})
#: Consumer semantic -> extra producer semantics it accepts (a ticket subject can be a message body).
ACCEPTS: dict[str, frozenset[str]] = {
    "text": frozenset({"title"}),
    QUERY: frozenset({"person_name", "company_name", "title", "email"}),
}


def column_semantic(entity: EntityDef, column: ColumnDef) -> str | None:
    """A column's semantic type; keys and references become ``id:<entity>``."""
    if column.primary_key:
        return f"id:{entity.name}"
    if column.ref:
        return f"id:{column.ref}"
    if column.semantic:
        return column.semantic
    return value_tag(column.name, column.json_schema or {"type": column.type}, entity=entity.name)


def linkable(semantic: str | None) -> bool:
    return bool(semantic) and semantic not in _UNLINKABLE


def list_prefix(tool: ToolDef) -> str:
    """Where a list tool's rows sit in its implemented result (``[]``, ``items[]``, ``data[]``...)."""
    path = ".".join(tool.shape.rows_at)
    return f"{path}[]" if path else "[]"


def row_prefix(tool: ToolDef) -> str:
    """The schema path prefix of a row's fields in the tool's result (``""``, ``data.``, ``items[].``)."""
    shape = tool.shape
    if shape.many:
        return list_prefix(tool) + "."
    return "".join(f"{k}." for k in shape.rows_at)


def schema_path(concrete: str) -> str:
    """``items.0.email`` -> ``items[].email``: the schema path of a concrete result path."""
    parts = concrete.split(".") if concrete else []
    out: list[str] = []
    for part in parts:
        if part.isdigit():
            if out:
                out[-1] += "[]"
            else:
                out.append("[]")
        else:
            out.append(part)
    return ".".join(out)


def _schema_leaves(
    schema: dict[str, Any], prefix: str = "", depth: int = 0
) -> list[tuple[str, dict[str, Any]]]:
    """(schema path, leaf schema) for the scalar fields of an output schema (a few levels deep)."""
    if not isinstance(schema, dict) or depth > 3:
        return []
    kind = schema.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind):
        items = schema.get("items")
        return _schema_leaves(items if isinstance(items, dict) else {}, prefix + "[]", depth + 1)
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        out: list[tuple[str, dict[str, Any]]] = []
        for key in sorted(props):
            path = f"{prefix}.{key}" if prefix else key
            out += _schema_leaves(props[key], path, depth + 1)
        return out
    return [(prefix, schema)] if prefix else []


def _is_stamp(path: str, semantic: str) -> bool:
    """created_at, updatedAt, lastModifiedOn...: set by the service, never a value anyone passes on."""
    return aspect(path.rsplit(".", 1)[-1], semantic) in STAMP_ASPECTS


def output_ports(manifest: ServiceManifest, tool: ToolDef) -> list[OutputPort]:
    """Typed fields a tool's successful result carries.

    An implemented tool returns its entity's row (or a list of rows) where its response shape
    says, each column under the key the spec spells it with; a simulated one returns what its
    output schema says.
    """
    found: dict[str, str] = {}
    entity = manifest.entity(tool.entity) if tool.entity else None
    if entity is not None and tool.backend == "implemented":
        shape = tool.shape
        if tool.operation != "delete" and shape.body:
            prefix = row_prefix(tool)
            for column in entity.columns:
                sem = column_semantic(entity, column)
                if sem and (not shape.fields or column.name in shape.fields):
                    found[prefix + shape.key_of(column.name)] = sem
    else:
        for path, leaf in _schema_leaves(tool.output_schema):
            name = path.rsplit(".", 1)[-1].removesuffix("[]")
            sem = value_tag(name, leaf) if name else None
            if sem:
                found[path] = sem
    found.update(tool.output_semantics)
    return [
        OutputPort(path=p, semantic=s)
        for p, s in sorted(found.items())
        if linkable(s) and not _is_stamp(p, s)
    ]


def _arg_schema(tool: ToolDef, name: str) -> dict[str, Any]:
    props = tool.input_schema.get("properties") or {}
    head, _, rest = name.partition(".")
    schema = props.get(head) if isinstance(props, dict) else None
    if rest and isinstance(schema, dict):
        schema = (schema.get("properties") or {}).get(rest)
    return schema if isinstance(schema, dict) else {}


def _required(tool: ToolDef) -> set[str]:
    req = tool.input_schema.get("required") or []
    return {r for r in req if isinstance(r, str)}


def input_ports(manifest: ServiceManifest, tool: ToolDef) -> list[InputPort]:
    """Arguments a tool takes that a typed value can fill (page size and offset never)."""
    entity = manifest.entity(tool.entity) if tool.entity else None
    required = _required(tool)
    props = tool.input_schema.get("properties") or {}
    skip = {tool.limit_arg, tool.offset_arg} - {None}
    ports: dict[str, InputPort] = {}

    def add(
        name: str, semantic: str | None, role: PortRole, column: str | None = None, req: bool | None = None
    ) -> None:
        if name in skip or not linkable(semantic) or name in ports:
            return
        is_required = name in required if req is None else req
        ports[name] = InputPort(
            name=name, semantic=str(semantic), role=role, column=column, required=is_required
        )

    for arg, sem in sorted(tool.arg_semantics.items()):
        bound = entity.pk if arg == tool.pk_arg and entity is not None else tool.arg_columns.get(arg)
        role: PortRole = "pk" if arg == tool.pk_arg else _column_role(tool) if bound else "arg"
        add(arg, sem, role, bound)
    if tool.pk_arg and entity is not None:
        add(tool.pk_arg, f"id:{entity.name}", "pk", entity.pk)
    if tool.search_arg:
        add(tool.search_arg, QUERY, "search")
    if entity is not None:
        for arg, col_name in sorted(tool.arg_columns.items()):
            col = entity.column(col_name)
            if col is not None:
                add(arg, column_semantic(entity, col), _column_role(tool), col_name)
        if tool.body_arg:
            body = _arg_schema(tool, tool.body_arg)
            body_required = set(body.get("required") or []) if tool.body_arg in required else set()
            for key in sorted(body.get("properties") or {}):
                col = entity.column(key) or next((c for c in entity.columns if c.source_name == key), None)
                if col is not None:
                    col_sem = column_semantic(entity, col)
                    add(f"{tool.body_arg}.{key}", col_sem, _column_role(tool), col.name, key in body_required)
    if isinstance(props, dict):
        for arg in sorted(props):
            if isinstance(props[arg], dict) and props[arg].get("type") in ("string", "number", "integer"):
                add(arg, value_tag(arg, props[arg], entity=entity.name if entity else None), "arg")
    return sorted(ports.values(), key=lambda p: p.name)


def _column_role(tool: ToolDef) -> PortRole:
    return "filter" if tool.operation in ("list", "search") else "field"
