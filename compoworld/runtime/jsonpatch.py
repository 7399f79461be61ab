"""JSON Patch (RFC 6902) applied to one typed row: the body of a ``PATCH`` that says how to change it.

``[{"op": "replace", "path": "/name", "value": "Deluxe"}, {"op": "remove", "path": "/notes"}]``
is applied to the row as the API shows it (its fields by their spec names); each operation's
first path token names a field of the row (a JSON column is patched inside), and what changed is
written back column by column, through the same SQL, stamps and reference checks as an update.
``test`` compares, ``move`` and ``copy`` read ``from``; an op is read blind to case, as a spec
may spell it (``Replace``). A path naming no field of the row, a key,
or a read-only field, an operation the RFC does not define, or a failed ``test`` refuses the whole
patch with a reason (nothing is applied), as the RFC says a patch is atomic.
"""

from __future__ import annotations

import copy
from typing import Any

from compoworld.runtime.ops import ToolFailure
from compoworld.runtime.tables import EntityTable

__all__ = ["apply_patch"]

_OPS = ("add", "remove", "replace", "move", "copy", "test")
_MISSING = object()


def _tokens(pointer: Any) -> list[str]:
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise ToolFailure("invalid_arguments", f"JSON Patch path {pointer!r} is not a JSON pointer")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]] if pointer else []


def _index(container: list[Any], token: str, *, adding: bool) -> int:
    if adding and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise ToolFailure("invalid_arguments", f"JSON Patch index {token!r} is not an array index")
    at = int(token)
    if at > len(container) or (at == len(container) and not adding):
        raise ToolFailure("invalid_arguments", f"JSON Patch index {at} is past the end of the array")
    return at


def _parent(doc: dict[str, Any], tokens: list[str]) -> Any:
    node: Any = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, adding=False)]
        else:
            raise ToolFailure("invalid_arguments", f"JSON Patch path /{'/'.join(tokens)} names nothing")
    return node


def _get(doc: dict[str, Any], tokens: list[str]) -> Any:
    node = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(node, dict):
        return node.get(last, _MISSING)
    if isinstance(node, list):
        return node[_index(node, last, adding=False)]
    return _MISSING


def _add(doc: dict[str, Any], tokens: list[str], value: Any) -> None:
    node = _parent(doc, tokens)
    if isinstance(node, dict):
        node[tokens[-1]] = value
    elif isinstance(node, list):
        node.insert(_index(node, tokens[-1], adding=True), value)
    else:
        raise ToolFailure("invalid_arguments", f"JSON Patch path /{'/'.join(tokens)} is inside a value")


def _remove(doc: dict[str, Any], tokens: list[str]) -> Any:
    node = _parent(doc, tokens)
    if isinstance(node, dict) and tokens[-1] in node:
        return node.pop(tokens[-1])
    if isinstance(node, list):
        return node.pop(_index(node, tokens[-1], adding=False))
    raise ToolFailure("invalid_arguments", f"JSON Patch path /{'/'.join(tokens)} names nothing to remove")


def _field(table: EntityTable, token: str, fields: dict[str, str]) -> str:
    """The column a path's first token names (by the spec's name, else the column's own)."""
    column = fields.get(token)
    if column is None:
        raise ToolFailure(
            "invalid_arguments", f"JSON Patch path /{token} names no field of {table.entity.name}"
        )
    return column


def _writable(table: EntityTable, column: str) -> str:
    found = table.by_name[column]
    if found.primary_key or found.read_only:
        raise ToolFailure("invalid_arguments", f"JSON Patch cannot write {column}: it is set by the service")
    return column


def apply_patch(table: EntityTable, row: dict[str, Any], operations: Any) -> dict[str, Any]:
    """The column values a JSON Patch document leaves on ``row`` (only the columns it changed)."""
    if not isinstance(operations, list):
        raise ToolFailure("invalid_arguments", "a JSON Patch document is an array of operations")
    fields: dict[str, str] = {}  # either name of a field -> its column
    spelled: dict[str, str] = {}  # column -> the field's name as the API spells it
    for c in table.columns:
        spelled[c.name] = c.source_name or c.name
        fields.setdefault(c.name, c.name)
        fields[spelled[c.name]] = c.name
    doc = {spelled[c]: copy.deepcopy(v) for c, v in row.items() if c in spelled and v is not None}

    def pointer(raw: Any) -> tuple[str, list[str]]:
        tokens = _tokens(raw)
        if not tokens:
            raise ToolFailure("invalid_arguments", "a JSON Patch operation addresses the whole row")
        column = _field(table, tokens[0], fields)
        return column, [spelled[column], *tokens[1:]]

    touched: set[str] = set()
    for i, operation in enumerate(operations):
        op = operation.get("op") if isinstance(operation, dict) else None
        op = op.lower() if isinstance(op, str) else op  # Visma spells its ops ``Replace``, ``Add``
        if op not in _OPS:
            raise ToolFailure(
                "invalid_arguments", f"JSON Patch operation {i} has op {op!r}, not one of {_OPS}"
            )
        column, tokens = pointer(operation.get("path"))
        if op == "test":
            if _get(doc, tokens) != operation.get("value"):
                raise ToolFailure("conflict", f"JSON Patch test of {operation.get('path')} failed")
            continue
        touched.add(_writable(table, column))
        if op in ("add", "replace"):
            if "value" not in operation:
                raise ToolFailure("invalid_arguments", f"JSON Patch operation {i} ({op}) has no value")
            if len(tokens) > 1 and op == "replace":
                if _get(doc, tokens) is _MISSING:
                    raise ToolFailure(
                        "invalid_arguments", f"JSON Patch path {operation['path']} names nothing"
                    )
                _remove(doc, tokens)
            _add(doc, tokens, copy.deepcopy(operation["value"]))
        elif op == "remove":
            if len(tokens) == 1:
                doc.pop(tokens[0], None)
            else:
                _remove(doc, tokens)
        else:  # move, copy
            origin, source = pointer(operation.get("from"))
            value = _get(doc, source)
            if value is _MISSING:
                raise ToolFailure(
                    "invalid_arguments", f"JSON Patch from {operation.get('from')} names nothing"
                )
            if op == "move":
                touched.add(_writable(table, origin))
                if len(source) > 1:
                    _remove(doc, source)
                else:
                    doc.pop(source[0], None)
            _add(doc, tokens, copy.deepcopy(value))
    out = {column: doc.get(spelled[column]) for column in touched}
    for column, value in out.items():
        held = table.by_name[column]
        if value is None and not held.nullable:
            raise ToolFailure(
                "invalid_arguments", f"JSON Patch leaves {spelled[column]} empty; it is required"
            )
        if value is not None and not _fits(held.type, value):
            raise ToolFailure(
                "invalid_arguments", f"JSON Patch gives {spelled[column]} {value!r}, not a {held.type} value"
            )
    return out


def _fits(kind: str, value: Any) -> bool:
    if kind == "json":
        return True
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)
