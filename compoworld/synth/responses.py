"""The success body an implemented tool answers with: the spec's declared schema, and where rows sit in it.

A real API wraps its rows in its own way: a bare array, ``{"data": [...], "total": n, "next": ...}``,
``{"status_code": 200, "data": {...}}``, HAL's ``{"_embedded": {"refunds": [...]}, "_links": ...}``.
Synthesis reads the declared success schema once and records a ``ResponseShape``: the declared
status, the path from the body root to the row (or the list of rows), which body key each column
travels under, and the role of every paging field. The runtime's shaper builds bodies from it;
task generation and the graph read rows back through it. A tool whose spec declares no usable
body keeps CompoWorld's own shape (a row, or ``{"items": [...], "total": n}``).
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ColumnDef, EntityDef, ResponseShape, default_response
from compoworld.specs.model import ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.naming import match_key
from compoworld.synth.schemas import merged_properties

__all__ = [
    "error_codes",
    "holds",
    "json_schema_of",
    "locate_rows",
    "paging_roles",
    "response_shape",
    "row_fields",
    "status_shape",
]

_MAX_DEPTH = 3
#: Paging roles by the match key of a field's name.
_ROLE_BY_KEY: dict[str, str] = {
    **dict.fromkeys(
        ["total", "totalcount", "totalresults", "totalitems", "totalrecords", "totalelements", "totalsize"],
        "total",
    ),
    **dict.fromkeys(["recordcount", "totalentries", "numfound", "totalhits", "hits", "matches"], "total"),
    **dict.fromkeys(
        ["limit", "perpage", "pagesize", "maxresults", "pagelimit", "size", "itemsperpage"], "limit"
    ),
    **dict.fromkeys(["offset", "skip", "start", "startindex", "from", "recordindex", "startat"], "offset"),
    **dict.fromkeys(["page", "currentpage", "pagenumber", "pageindex", "pageno", "number"], "page"),
    **dict.fromkeys(["totalpages", "pagecount", "lastpage", "numpages", "pages"], "pages"),
    **dict.fromkeys(
        [
            "next",
            "nextpage",
            "nextcursor",
            "nextpagetoken",
            "nexttoken",
            "nexturl",
            "nextlink",
            "nextpageurl",
        ],
        "next",
    ),
    **dict.fromkeys(["odatanextlink", "continuationtoken", "nextmarker", "nextoffset", "cursor"], "next"),
    **dict.fromkeys(["prev", "previous", "prevpage", "previouspage", "prevcursor", "previouscursor"], "prev"),
    **dict.fromkeys(["prevpagetoken", "previouspagetoken", "prevurl", "previousurl", "prevlink"], "prev"),
    **dict.fromkeys(["hasmore", "more", "hasnext", "hasnextpage", "moreresults", "hasmoreitems"], "has_more"),
}
#: Leaf names that carry a link's URL (``_links.next.href``): they take their parent's role.
_LINK_LEAVES = frozenset({"href", "url", "link", "uri"})
#: ``count`` is the number of matching rows unless the body also carries a total.
_COUNT_KEYS = frozenset({"count", "resultcount", "itemcount", "numresults", "returned"})
#: Ambiguous names that are paging only inside a paging object (``page.number``, ``meta.size``).
_CONTEXT_ONLY = frozenset({"number", "size", "start", "from", "more", "hits", "matches", "cursor"})
_PAGING_PARENTS = frozenset(
    {"page", "paging", "pagination", "meta", "links", "cursor", "cursors", "pageinfo"}
)


def json_schema_of(schema: Any, *, response: bool = True, _depth: int = 0) -> Any:
    """An OpenAPI schema as JSON Schema 2020-12: ``nullable`` as a ``null`` type, OpenAPI 3.0's boolean
    ``exclusiveMinimum``/``Maximum`` as bounds, and (in a response) no ``writeOnly`` properties."""
    if isinstance(schema, list):
        return [json_schema_of(s, response=response, _depth=_depth + 1) for s in schema]
    if not isinstance(schema, dict) or _depth > 40:
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("nullable", "x-nullable"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                k: json_schema_of(v, response=response, _depth=_depth + 1)
                for k, v in value.items()
                if not (response and isinstance(v, dict) and v.get("writeOnly") is True)
            }
        elif (key in ("items", "additionalProperties", "not") and isinstance(value, dict)) or (
            key in ("allOf", "anyOf", "oneOf") and isinstance(value, list)
        ):
            out[key] = json_schema_of(value, response=response, _depth=_depth + 1)
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value and isinstance(schema.get(bound), (int, float)):
                out[key] = schema[bound]
        else:
            out[key] = value
    if response and isinstance(out.get("required"), list) and isinstance(out.get("properties"), dict):
        dropped = {
            k
            for k, v in (schema.get("properties") or {}).items()
            if isinstance(v, dict) and v.get("writeOnly")
        }
        out["required"] = [r for r in out["required"] if r not in dropped]
    if schema.get("nullable") is True or schema.get("x-nullable") is True:
        _allow_null(out)
    return out


def _allow_null(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif kind is None and not any(k in out for k in ("anyOf", "oneOf", "allOf")):
        return  # untyped: null is already allowed
    elif kind is None:
        out["anyOf"] = [{k: v for k, v in out.items() if k in ("anyOf", "oneOf", "allOf")}, {"type": "null"}]
        for key in ("oneOf", "allOf"):
            out.pop(key, None)
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]


def _props(schema: Any) -> tuple[dict[str, dict[str, Any]], set[str]]:
    if not isinstance(schema, dict):
        return {}, set()
    props, required = merged_properties(schema)
    for key in ("anyOf", "oneOf"):
        for variant in schema.get(key) or []:
            if isinstance(variant, dict) and json_type(variant) == "object":
                inner, _ = merged_properties(variant)
                for name, sub in inner.items():
                    props.setdefault(name, sub)
    return props, required


def _column_of(entity: EntityDef, key: str) -> ColumnDef | None:
    for c in entity.columns:
        if key in (c.source_name, c.name):
            return c
    wanted = match_key(key)
    return next((c for c in entity.columns if match_key(c.source_name or c.name) == wanted), None)


def _overlap(schema: Any, entity: EntityDef) -> int:
    props, _ = _props(schema)
    return sum(1 for key in props if _column_of(entity, key) is not None)


def _items(schema: Any) -> Any:
    if isinstance(schema, dict) and json_type(schema) == "array" and isinstance(schema.get("items"), dict):
        return schema["items"]
    return None


def locate_rows(schema: Any, entity: EntityDef, many: bool) -> list[str] | None:
    """Keys from the body root to the row (``many``: the array of rows) that best matches ``entity``.

    Among candidates, the one whose properties name most of the entity's columns wins, the
    shallower on a tie. A single row defaults to the body itself; a list needs an array of objects.
    """
    found: list[tuple[int, int, list[str]]] = []

    def walk(node: Any, path: list[str], depth: int) -> None:
        if not isinstance(node, dict) or depth > _MAX_DEPTH:
            return
        items = _items(node)
        if many and items is not None and json_type(items) == "object":
            found.append((_overlap(items, entity), -depth, path))
            return
        if json_type(node) != "object":
            return
        if not many:
            found.append((_overlap(node, entity), -depth, path))
        props, _ = _props(node)
        for key in sorted(props):
            sub = props[key]
            if json_type(sub) in ("object", "array"):
                walk(sub, [*path, key], depth + 1)

    walk(schema, [], 0)
    if not found:
        return None
    best = max(found, key=lambda f: (f[0], f[1]))
    if not many and best[0] == 0:
        return []
    return best[2]


def _node_at(schema: Any, path: list[str]) -> Any:
    node = schema
    for key in path:
        props, _ = _props(node)
        node = props.get(key)
    return node


def _enum_of(schema: Any) -> set[str] | None:
    values = schema.get("enum") if isinstance(schema, dict) else None
    return {str(v).lower() for v in values if v is not None} if isinstance(values, list) and values else None


def holds(column: ColumnDef, schema: Any) -> bool:
    """Whether a body field declared as ``schema`` can carry ``column``'s values: a structured column
    (a JSON object or list) in a field of that structure, a scalar in a scalar field, and an enum
    column in an enum field only where the two share a member. A field of the same name that
    cannot (a deletion's ``type: DATASET|MODEL`` beside a dataset's ``type: image|text``, an
    ``annotations`` list beside an object column merged from another schema) is another thing of
    that name, not the column: the body fills it as it fills a field no column gives."""
    if not isinstance(schema, dict):
        return True
    kind = json_type(schema)
    values = schema.get("enum")
    if kind is None and isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        kind = "string"  # an untyped enum of names (``productGroup: PKW|VAN|SMART``)
    structured = {"object", "array"}
    if column.type == "json":
        own = json_type(column.json_schema or {})
        if kind is not None and own is not None and kind != own and {kind, own} <= structured:
            return False
        if kind is not None and kind not in structured and own in structured:
            return False
    elif kind in structured:
        return False
    declared, stored = _enum_of(schema), _enum_of({"enum": column.enum}) or _enum_of(column.json_schema)
    return declared is None or stored is None or bool(declared & stored)


def row_fields(row_schema: Any, entity: EntityDef) -> dict[str, str]:
    """Column -> body key, for the columns the row schema declares (every column if it declares none)
    and can carry (``holds``).

    The key column also travels under a declared ``<entity>Id``/``<entity>_id``/``id``/``key``
    property no other column claims (a create that answers ``{"employeeId": ...}``).
    """
    props, _ = _props(row_schema)
    if not props:
        return {c.name: c.source_name or c.name for c in entity.columns}
    out: dict[str, str] = {}
    claimed: set[str] = set()
    for key in props:
        column = _column_of(entity, key)
        if column is not None and not holds(column, props[key]):
            continue
        if column is not None and column.name not in out:
            out[column.name] = key
            claimed.add(key)
    if entity.pk not in out:
        wanted = {match_key(entity.name + "_id"), match_key(entity.name + "_key"), "id", "key", "uid"}
        wanted |= {match_key(split_words(entity.name)[-1] + "_id")} if split_words(entity.name) else set()
        alias = next((k for k in props if k not in claimed and match_key(k) in wanted), None)
        if alias is not None:
            out[entity.pk] = alias
    return out


def paging_roles(schema: Any, rows_at: list[str]) -> dict[str, str]:
    """Dotted path -> role of the paging fields of a list body (everything off the rows' path)."""
    roles: dict[str, str] = {}
    counts: list[str] = []

    def walk(node: Any, path: list[str], parent: str, depth: int) -> None:
        props, _ = _props(node)
        for key in sorted(props):
            sub = props[key]
            here = [*path, key]
            if here == rows_at[: len(here)]:
                if len(here) < len(rows_at):
                    walk(sub, here, match_key(key), depth + 1)
                continue
            kind = json_type(sub) if isinstance(sub, dict) else None
            mk = match_key(key)
            if kind == "object" and depth < _MAX_DEPTH:
                walk(sub, here, mk, depth + 1)
                continue
            role = _ROLE_BY_KEY.get(mk)
            if mk in _LINK_LEAVES and parent in ("next", "prev", "previous"):
                role = "next" if parent == "next" else "prev"
            if mk in _CONTEXT_ONLY and parent not in _PAGING_PARENTS:
                role = None
            if mk in _COUNT_KEYS:
                counts.append(".".join(here))
                continue
            if role is not None and _fits_role(role, kind):
                roles[".".join(here)] = role

    walk(schema, [], "", 0)
    has_total = "total" in roles.values()
    for path in counts:
        roles[path] = "count" if has_total else "total"
    return roles


def _fits_role(role: str, kind: str | None) -> bool:
    if role == "has_more":
        return kind in ("boolean", None)
    if role in ("next", "prev"):
        return kind in ("string", "integer", None)
    return kind in ("integer", "number", None)


def error_codes(tool: ToolSpec) -> dict[str, int]:
    """CompoWorld error codes whose status the spec declares differently from the defaults (an XML
    operation's declared errors by what they are named: AWS's ``NoSuchEntityException`` at 481)."""
    declared = set(tool.error_statuses)
    out: dict[str, int] = {}
    if 422 not in declared and 400 in declared:
        out["invalid_arguments"] = 400
        out["tool_error"] = 400
    if tool.response_xml is not None:
        out.update(tool.xml_error_statuses)
    return out


def response_shape(
    tool: ToolSpec, operation: str, entity: EntityDef
) -> tuple[dict[str, Any] | None, ResponseShape]:
    """(declared body schema as JSON Schema, or None for CompoWorld's own; the response shape)."""
    status = tool.success_status
    errors = error_codes(tool)
    error_schema = json_schema_of(tool.error_schema) if tool.error_schema else None
    many = operation in ("list", "search")
    if status is not None and status in (204, 205, 304):
        shape = ResponseShape(
            status=status,
            body=False,
            declared=True,
            errors=errors,
            error_schema=error_schema,
            xml=tool.response_xml,
        )
        return None, shape
    schema = json_schema_of(tool.output_schema) if tool.output_schema else None
    rows_at = locate_rows(schema, entity, many) if _usable(schema) else None
    if schema is None or rows_at is None:
        shape = default_response(operation, status)
        shape.errors, shape.error_schema, shape.xml = errors, error_schema, tool.response_xml
        shape.fields = {c.name: c.source_name or c.name for c in entity.columns}
        return None, shape
    node = _node_at(schema, rows_at)
    row_schema = _items(node) if many else node
    return schema, ResponseShape(
        status=status or (201 if operation == "create" else 200),
        declared=True,
        rows_at=rows_at,
        many=many,
        fields=row_fields(row_schema, entity),
        paging=paging_roles(schema, rows_at) if many else {},
        errors=errors,
        error_schema=error_schema,
        xml=tool.response_xml,
    )


def status_shape(tool: ToolSpec) -> ResponseShape | None:
    """What a tool without typed-state rows declares: its success status, whether it has a body, its errors.

    None for a tool that is not a REST operation (MCP, functions): nothing is declared.
    """
    if tool.method is None:
        return None
    status = tool.success_status or 200
    return ResponseShape(
        status=status,
        body=status not in (204, 205, 304),
        declared=bool(tool.output_schema),
        errors=error_codes(tool),
        error_schema=json_schema_of(tool.error_schema) if tool.error_schema else None,
        xml=tool.response_xml,
    )


def _usable(schema: Any) -> bool:
    """A schema that says what the body is: an array, or an object that names its properties."""
    if not isinstance(schema, dict):
        return False
    if json_type(schema) == "array":
        return True
    props, _ = _props(schema)
    return bool(props)
