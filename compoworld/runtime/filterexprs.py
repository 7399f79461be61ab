"""A list of filter expressions (``[{"field": "status", "op": "eq", "value": 1}]``) as SQL.

Each expression tests the column its field names (by name, blind to case and separators) with its
operator; a group (``{"op": "or", "items": [...]}``) joins its members; the list is their
conjunction. What the state cannot answer (a field no column holds, an operator outside the table
below, a user-defined field) fails the call with ``ArgumentError`` naming the argument: a filter is
never quietly dropped. The binding is ``FilterExpressions`` (``compoworld.synth.filterexprs``).
"""

from __future__ import annotations

import json
from typing import Any

from compoworld.manifest import FilterExpressions
from compoworld.runtime.tables import EntityTable, quote
from compoworld.runtime.validate import ArgumentError

__all__ = ["compile_expressions"]

_MAX_DEPTH = 8
#: Operator (match key) -> SQL comparison with one value.
_COMPARE = {
    "eq": "=", "equals": "=", "is": "=", "noteq": "IS NOT", "ne": "IS NOT", "neq": "IS NOT", "notequal": "IS NOT",
    "gt": ">", "gte": ">=", "ge": ">=", "lt": "<", "lte": "<=", "le": "<=",
}  # fmt: skip
#: Operator -> LIKE pattern around the escaped value.
_LIKE = {"contains": "%{}%", "beginswith": "{}%", "startswith": "{}%", "endswith": "%{}"}
_SETS = {"in": "IN", "notin": "NOT IN"}
_EXISTS = {"exist": "IS NOT NULL", "exists": "IS NOT NULL", "notexist": "IS NULL", "notexists": "IS NULL"}
_GROUPS = {"and": " AND ", "or": " OR "}


def _key(text: Any) -> str:
    return "".join(ch for ch in str(text).lower() if ch.isalnum())


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class _Compiler:
    def __init__(self, spec: FilterExpressions, table: EntityTable) -> None:
        self.spec = spec
        self.table = table
        self.columns = {_key(c.source_name or c.name): c for c in table.entity.columns if c.type != "json"}
        self.columns.update({_key(c.name): c for c in table.entity.columns if c.type != "json"})

    def fail(self, why: str) -> ArgumentError:
        arg = self.spec.arg
        return ArgumentError(arg, f"argument '{arg}': {why}")

    def all_of(self, expressions: Any, depth: int, joiner: str = " AND ") -> tuple[str, list[Any]]:
        if not isinstance(expressions, list) or depth > _MAX_DEPTH:
            raise self.fail("must be a list of filter expressions")
        clauses, params = [], []
        for expression in expressions:
            clause, more = self.one(expression, depth)
            clauses.append(clause)
            params += more
        return (f"({joiner.join(clauses)})" if clauses else "1 = 1"), params

    def one(self, expression: Any, depth: int) -> tuple[str, list[Any]]:
        spec = self.spec
        if not isinstance(expression, dict):
            raise self.fail(f"{expression!r} is no filter expression")
        op = _key(expression.get(spec.op, ""))
        if op in _GROUPS and spec.group is not None and spec.group in expression:
            return self.all_of(expression.get(spec.group), depth + 1, _GROUPS[op])
        if expression.get("udf") is True:
            raise self.fail("user-defined fields are not held by this service")
        field = expression.get(spec.field)
        column = self.columns.get(_key(field)) if field is not None else None
        if column is None:
            raise self.fail(f"{field!r} names no field of {self.table.entity.name}")
        col = quote(column.name)
        value = expression.get(spec.value)
        if op in _EXISTS:
            return f"{col} {_EXISTS[op]}", []
        if op in _SETS:
            values = value if isinstance(value, list) else [value]
            if not values:
                return ("0 = 1" if op == "in" else "1 = 1"), []
            marks = ", ".join("?" for _ in values)
            return f"{col} {_SETS[op]} ({marks})", [self.table.encode_value(column.name, v) for v in values]
        if op in _LIKE:
            return f"{col} LIKE ? ESCAPE '\\'", [_LIKE[op].format(_escape(str(value)))]
        if op in _COMPARE:
            if isinstance(value, list | dict):
                raise self.fail(f"operator {expression.get(spec.op)!r} takes one value, got {value!r}")
            if column.type in ("integer", "number") and isinstance(value, str):
                try:
                    value = int(value) if column.type == "integer" else float(value)
                except ValueError as exc:
                    raise self.fail(f"{field!r} holds numbers, got {value!r}") from exc
            return f"{col} {_COMPARE[op]} ?", [self.table.encode_value(column.name, value)]
        raise self.fail(f"no such operator {expression.get(spec.op)!r} (eq, noteq, gt, gte, lt, lte, "
                        "beginsWith, endsWith, contains, exist, notExist, in, notIn, and, or)")  # fmt: skip


def compile_expressions(spec: FilterExpressions, table: EntityTable, value: Any) -> tuple[str, list[Any]]:
    """(SQL condition, its parameters) of the expressions a call gives (``ArgumentError``: why not);
    where the argument is JSON text, the expressions under ``within`` of the object it holds."""
    compiler = _Compiler(spec, table)
    if spec.within is not None:
        try:
            query = json.loads(value) if isinstance(value, str) else value
        except ValueError as exc:
            raise compiler.fail(
                f"must be a JSON object with '{spec.within}': a list of filter expressions"
            ) from exc
        if not isinstance(query, dict):
            raise compiler.fail(f"must be a JSON object with '{spec.within}': a list of filter expressions")
        value = next((v for k, v in query.items() if _key(k) == _key(spec.within)), [])
    return compiler.all_of(value, 0)
