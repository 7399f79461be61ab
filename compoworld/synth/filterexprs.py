"""Arguments that are lists of filter expressions, and the searches that send them as a POST body.

Autotask's ``POST /V1.0/Contracts/query {"filter": [{"field": "status", "op": "eq", "value": 1}],
"maxRecords": 10}`` (and its ``/query/count``), and others like it, name the rows they want by a
list of ``{field, op, value}`` objects, a group of them being ``{"op": "or", "items": [...]}``. Such
an argument is bound as a whole (``FilterExpressions``): the runtime compiles each expression to SQL
over the column its field names (``compoworld.runtime.filterexprs``), and refuses by name an
expression whose field or operator it cannot answer. A POST to a ``query``/``search`` literal whose
answer lists the entity's rows is then the entity's search, read as a GET list is.
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import FilterExpressions
from compoworld.specs.model import FieldSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.naming import match_key
from compoworld.synth.schemas import merged_properties, unwrap

__all__ = ["expressions_of", "open_values", "searches_by_body"]

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
