"""The response shaper: entity rows in, the body the spec declares out.

A tool's ``ResponseShape`` (written by synthesis, ``compoworld.synth.responses``) says where its
rows sit in the declared success body and what every other field of the body is. ``Shaper``
compiles that, once per tool, into plain functions, so a call costs a few dictionary passes:

    shaper = Shaper(tool, entity)          # at load time
    body = shaper.one(row)                 # read / create / update / an action's changed row
    body = shaper.many(rows, Page(...))    # list / search: the spec's container, paging filled in
    body = shaper.deleted(row)             # delete: the declared body (None when it declares 204)
    status, body = shaper.error(code, message)   # the spec's error status and, if declared, its body

Rows are keyed by column names (typed state); bodies by the spec's own spelling (``_links``,
``object``), carrying only what the schema declares: undeclared keys are dropped, a ``null`` is
kept only where the schema allows it, values are coerced to the declared JSON type, and a
required field that state has no value for gets a fixed, schema-valid default. Without an
entity (a simulated tool) a row is taken as already keyed by the body's names.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from compoworld.manifest import EntityDef, ResponseShape, ToolDef
from compoworld.runtime.error_body import STATUS_KEYS, compile_error
from compoworld.runtime.fit import (
    CONSTRAINTS,
    MAX_DEPTH,
    FieldFit,
    Fit,
    compile_fit,
    is_open,
    object_fit,
    variant_fit,
)
from compoworld.runtime.paging import MISSING, Page, Slot, Url, paging_slot
from compoworld.runtime.schema_read import default_value, match_key, schema_props, schema_types

__all__ = ["Fit", "Page", "Shaper", "compile_fit", "default_value"]


class Shaper:
    """Builds one tool's success and error bodies (compiled once per tool)."""

    def __init__(self, tool: ToolDef, entity: EntityDef | None = None) -> None:
        self.tool = tool
        self.shape: ResponseShape = tool.shape
        self.status = self.shape.status
        self.has_body = self.shape.body
        schema = tool.output_schema or {}
        node: Any = schema
        for key in self.shape.rows_at:
            node = schema_props(node)[0].get(key, {}) if isinstance(node, dict) else {}
        row_schema = (node.get("items") if self.shape.many else node) if isinstance(node, dict) else None
        self._row = self._row_fit(row_schema, entity)
        self._body = _compile_body(
            schema, list(self.shape.rows_at), self.shape.paging, self.status, self._url
        )
        self._error = compile_error(self.shape.error_schema) if self.shape.error_schema else None
        self._pk = entity.pk if entity is not None else None

    def _row_fit(self, row_schema: Any, entity: EntityDef | None) -> Fit:
        fields = dict(self.shape.fields)
        if entity is not None and not fields:
            fields = {c.name: c.source_name or c.name for c in entity.columns}
        props, required = schema_props(row_schema) if isinstance(row_schema, dict) else ({}, [])
        if not props:
            if not fields:
                return lambda row: (
                    {k: v for k, v in row.items() if v is not None} if isinstance(row, dict) else row
                )
            pairs = list(fields.items())
            return lambda row: {key: row[col] for col, key in pairs if row.get(col) is not None}
        back = {key: col for col, key in fields.items()} if fields else {}
        json_columns = {c.name for c in entity.columns if c.type == "json"} if entity is not None else set()
        entries = []
        for key, sub in props.items():
            source = back.get(key, key if not fields else "\0" + key)
            repair = entity is None or source in json_columns or source.startswith("\0")
            entries.append(FieldFit(key, source, sub, key in required, 0, repair=repair))
        if entity is not None:
            for e in entries:  # a stored value of the column's own type needs no coercion
                column = entity.column(e.source)
                sub = props[e.key]
                if column is None or column.type == "json" or e.fit is None or CONSTRAINTS & set(sub):
                    continue
                if {column.type} == schema_types(sub)[0]:
                    e.fit = None
        extra = None
        if isinstance(row_schema, dict) and is_open(row_schema):
            extra = [(col, key) for col, key in fields.items() if key not in props]
        fit = object_fit(entries, extra)
        return variant_fit(row_schema, fit) if isinstance(row_schema, dict) else fit

    # -- success bodies -----------------------------------------------------------------

    def one(self, row: dict[str, Any]) -> Any:
        """The body of a call that answers one row (read, create, update, an action's row)."""
        if not self.has_body:
            return None
        return self._body(self._row(row), None, 1)

    def many(self, rows: list[dict[str, Any]], page: Page) -> Any:
        """The body of a list call: the rows where the spec puts them, paging fields filled in."""
        if not self.has_body:
            return None
        fit = self._row
        return self._body([fit(r) for r in rows], page, len(rows))

    def deleted(self, row: dict[str, Any]) -> Any:
        """The body of a delete: the declared one, CompoWorld's ``{deleted, id}``, or None (204)."""
        if not self.has_body:
            return None
        if not self.shape.declared:
            return {"deleted": True, "id": row.get(self._pk) if self._pk else None}
        return self._body(self._row(row), None, 1)

    # -- errors -------------------------------------------------------------------------

    def error_status(self, code: str, default: int) -> int:
        """The HTTP status a REST route answers an error with: the spec's where it declares its own."""
        return self.shape.errors.get(code, default)

    def error(self, code: str, message: str, status: int) -> Any:
        """The spec's declared error body for this failure, or None (the envelope stands)."""
        return self._error(code, message, status) if self._error is not None else None

    # -- links --------------------------------------------------------------------------

    def _url(self, page: Page, args: dict[str, Any]) -> str:
        """A relative URL of this tool's REST route with ``args`` (the next page's link)."""
        tool = self.tool
        path = tool.path or f"/tools/{tool.name}"
        query: list[tuple[str, str]] = []
        for name, value in sorted(args.items()):
            where = tool.arg_locations.get(name, "query")
            text = value if isinstance(value, str) else json.dumps(value)
            if where == "path" and "{" + name + "}" in path:
                path = path.replace("{" + name + "}", quote(str(text), safe=""))  # a URI reference
            elif where == "query" and value is not None:
                query.append((tool.wire_names.get(name, name), str(text)))
        return path + ("?" + urlencode(query) if query else "")


def _compile_body(
    schema: Any,
    rows_at: list[str] | None,
    paging: dict[str, str],
    status: int,
    url: Url,
    path: tuple[str, ...] = (),
) -> Slot:
    """A builder of the body, or of one level of it, around the already fitted rows.

    ``rows_at`` is the rest of the path to the rows below this level (None: not below it).
    """
    if rows_at is not None and not rows_at:
        return lambda payload, page, count: payload
    props, required = schema_props(schema) if isinstance(schema, dict) else ({}, [])
    slots: list[tuple[str, Slot]] = []
    for key, sub in props.items():
        here = (*path, key)
        dotted = ".".join(here)
        if rows_at and key == rows_at[0]:
            slots.append((key, _compile_body(sub, rows_at[1:], paging, status, url, here)))
        elif dotted in paging:
            slots.append((key, paging_slot(paging[dotted], key, sub, key in required, url)))
        elif len(here) < MAX_DEPTH and any(p.startswith(dotted + ".") for p in paging):
            slots.append((key, _compile_body(sub, None, paging, status, url, here)))
        elif key in required:
            slots.append((key, _constant(_envelope_default(sub, key, status))))
    return _object_slot(slots)


def _object_slot(slots: list[tuple[str, Slot]]) -> Slot:
    def build(payload: Any, page: Page | None, count: int) -> Any:
        out: dict[str, Any] = {}
        for key, slot in slots:
            value = slot(payload, page, count)
            if value is not MISSING:
                out[key] = value
        return out

    return build


def _constant(value: Any) -> Slot:
    if isinstance(value, (dict, list)):
        text = json.dumps(value)
        return lambda payload, page, count: json.loads(text)
    return lambda payload, page, count: value


def _envelope_default(schema: dict[str, Any], key: str, status: int) -> Any:
    """A required envelope field off the rows' path: the HTTP status, a success flag, or a default."""
    types, _ = schema_types(schema)
    k = match_key(key)
    if k in STATUS_KEYS and types <= {"integer", "number"} and types and "enum" not in schema:
        return status
    if k == "status" and types == {"string"} and "enum" not in schema and "pattern" not in schema:
        return "OK"
    return default_value(schema, key)
