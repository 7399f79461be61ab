"""Arguments that are lists of filter expressions, and the searches that send them as a POST body.

Autotask's ``POST /V1.0/Contracts/query {"filter": [{"field": "status", "op": "eq", "value": 1}],
"maxRecords": 10}`` (and its ``/query/count``), and others like it, name the rows they want by a
list of ``{field, op, value}`` objects, a group of them being ``{"op": "or", "items": [...]}``. Such
an argument is bound as a whole (``FilterExpressions``): the runtime compiles each expression to SQL
over the column its field names (``compoworld.runtime.filterexprs``), and refuses by name an
expression whose field or operator it cannot answer. A POST to a ``query``/``search`` literal whose
answer lists the entity's rows is then the entity's search, read as a GET list is. Its GET twin
at the same path (``GET /V1.0/Contracts/query?search={"filter": [...]}``, and ``query/count``'s)
carries that body as JSON text in its one query string: bound to the same expressions, read from
the text (``bind_query_strings``), never as free text.
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import FilterExpressions, ListBinding, ToolDef
from compoworld.specs.model import FieldSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.naming import match_key
from compoworld.synth.schemas import merged_properties, unwrap

__all__ = ["bind_query_strings", "expressions_of", "open_values", "searches_by_body"]

_FIELD_KEYS = ("field", "fieldname", "property", "attribute", "column", "key")
_OP_KEYS = ("op", "operator", "operation", "comparison", "condition")
_VALUE_KEYS = ("value", "values")
_GROUP_KEYS = ("items", "filters", "expressions", "conditions", "children")
#: Last literals of a POST that reads rows: ``/contracts/query``, ``/issues/search``, ``:search``.
_SEARCH_WORDS = frozenset({"query", "search", "find", "filter", "list"})


def _pick(props: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    by_key = {match_key(k): k for k in props}
    return next((by_key[k] for k in keys if k in by_key), None)


def expressions_of(p: FieldSpec) -> FilterExpressions | None:
    """The binding of an argument that is an array of ``{field, op, value}`` objects, else None."""
    if json_type(p.json_schema) != "array" or not isinstance(p.json_schema.get("items"), dict):
        return None
    props = merged_properties(p.json_schema["items"])[0]
    field, op, value = _pick(props, _FIELD_KEYS), _pick(props, _OP_KEYS), _pick(props, _VALUE_KEYS)
    if field is None or op is None or value is None:
        return None
    group = _pick(props, _GROUP_KEYS)
    if group is not None and json_type(props[group]) != "array":
        group = None
    return FilterExpressions(arg=p.name, field=field, op=op, value=value, group=group)


def searches_by_body(tool: ToolSpec) -> bool:
    """Whether a POST reads the entity's rows: its last literal (or custom method) says query or
    search, its body holds a list of filter expressions, and its answer is a list of rows."""
    if (tool.method or "").upper() != "POST":
        return False
    path = (tool.path or "").split("?")[0].rstrip("/")
    last = path.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    if not set(split_words(last)) & _SEARCH_WORDS or "{" in last:
        return False
    if not any(p.location == "body" and expressions_of(p) is not None for p in tool.params):
        return False
    found = unwrap(tool.output_schema)
    return found is not None and found.is_list


def open_values(schema: dict[str, Any], spec: FilterExpressions, depth: int = 0) -> dict[str, Any]:
    """The argument's schema with every expression's value open to any JSON value: Autotask types
    it ``{type: object, properties: {}}`` while saying it is an integer, a string, a flag or an
    array of them, which is what its clients send."""
    items = schema.get("items")
    if not isinstance(items, dict) or depth > 4:
        return schema
    props = dict(items.get("properties") or {})
    if spec.value in props:
        description = props[spec.value].get("description") if isinstance(props[spec.value], dict) else None
        props[spec.value] = {"description": description} if description else {}
    if spec.group is not None and isinstance(props.get(spec.group), dict):
        props[spec.group] = open_values(props[spec.group], spec, depth + 1)
    return {**schema, "items": {**items, "properties": props}}


def _twin(tool: ToolDef, tools: list[ToolDef]) -> ToolDef | None:
    """The POST at the same path and of the same entity whose body holds filter expressions."""
    for other in tools:
        listing = other.listing
        if (
            other.method == "POST"
            and other.path == tool.path
            and other.entity == tool.entity
            and other.backend != "simulated"
            and listing is not None
            and listing.expressions is not None
        ):
            return other
    return None


def _query_text(tool: ToolDef) -> str | None:
    """The one string argument of a GET (a credential header aside) that can carry a JSON query."""
    args = [a for a, where in tool.arg_locations.items() if where == "query"]
    props = tool.input_schema.get("properties") or {}
    if len(args) != 1 or json_type(props.get(args[0]) or {}) != "string":
        return None
    return args[0]


def bind_query_strings(tools: list[ToolDef]) -> list[ToolDef]:
    """Tools with each GET twin of a filter-expression POST reading its query string as that POST's
    body (see the module docstring): a search bound as free text, or a simulated count."""
    out = []
    for tool in tools:
        twin = _twin(tool, tools) if tool.method == "GET" else None
        arg = _query_text(tool) if twin is not None else None
        if twin is None or arg is None or twin.listing is None or twin.listing.expressions is None:
            out.append(tool)
            continue
        body = twin.listing.expressions
        spec = body.model_copy(update={"arg": arg, "within": twin.wire_names.get(body.arg, body.arg)})
        searching = (
            tool.backend == "implemented" and tool.search_arg == arg and twin.operation == tool.operation
        )
        counting = twin.action is not None and twin.action.kind == "count" and tool.operation == "action"
        if searching:
            listing = (tool.listing or ListBinding()).model_copy(update={"expressions": spec})
            out.append(tool.model_copy(update={"search_arg": None, "listing": listing}))
        elif counting and twin.action is not None:
            listing = ListBinding(expressions=spec)
            update = {
                "backend": "action",
                "kind": "read",
                "simulated_reason": None,
                "entity": twin.entity,
                "search_arg": None,
            }
            out.append(tool.model_copy(update={**update, "action": twin.action, "listing": listing}))
        else:
            out.append(tool)
    return out
