"""The action backend: state transitions on an episode's typed state (``ToolDef.action``).

A transition moves the addressed row's status or flags (refused with a reason when the row is
already there, in a terminal state, or not in the state a reversal needs); an insert adds the row
the read side lists (a sent message, in its sent state); a copy inserts a copy of the addressed
row; a clear deletes the addressed row's children (or, addressing none, every row of the table); a
set writes the columns its arguments name; a count answers how many rows hold the values named.
Every change goes through the same SQL, stamps and reference checks as the CRUD operations, so a
later read, a state hash and a rubric criterion all see it.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from compoworld.manifest import ActionDef, ColumnDef, ToolDef
from compoworld.runtime.echo import reflect_row
from compoworld.runtime.generate import generate_value
from compoworld.runtime.jsonpatch import apply_patch
from compoworld.runtime.listquery import ListQuery, refuse_unhonoured
from compoworld.runtime.ops import (
    ToolFailure,
    _check_refs,
    _fields_from_args,
    _key,
    _new_key,
    _row,
    _stamp,
)
from compoworld.runtime.state import Episode, StateStore
from compoworld.runtime.tables import EntityTable, quote
from compoworld.runtime.validate import ArgumentError
from compoworld.schema_types import json_type
from compoworld.seeding import seeded_rng

__all__ = ["dated", "match_day", "member_value", "op_action", "request_body"]


def _get(row: dict[str, Any], path: str) -> Any:
    column, _, key = path.partition(".")
    value = row.get(column)
    if key:
        return value.get(key) if isinstance(value, dict) else None
    return value


def _put(values: dict[str, Any], row: dict[str, Any], path: str, value: Any) -> None:
    """Write ``value`` at ``path`` into ``values`` (a JSON column is copied from the row first)."""
    column, _, key = path.partition(".")
    if not key:
        values[column] = value
        return
    current = values.get(column, row.get(column))
    inner = copy.deepcopy(current) if isinstance(current, dict) else {}
    inner[key] = value
    values[column] = inner


def _same(a: Any, b: Any) -> bool:
    """State values compare blind to case and separators (``PAUSED`` is ``paused``)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.replace("_", "").replace("-", "").lower() == b.replace("_", "").replace("-", "").lower()
    return bool(a == b) and type(a) is type(b)


def _check_transition(action: ActionDef, table: EntityTable, row: dict[str, Any]) -> None:
    name, key = table.entity.name, row[table.pk]
    for path, allowed in action.requires.items():
        current = _get(row, path)
        if not any(_same(current, v) for v in allowed):
            wanted = " or ".join(repr(v) for v in allowed)
            raise ToolFailure(
                "invalid_transition",
                f"cannot {action.verb} {name} '{key}': its {path} is {current!r}, and {action.verb} "
                f"applies only to {wanted}",
            )
    for path, refused in action.refuses.items():
        current = _get(row, path)
        if any(_same(current, v) for v in refused):
            target = action.sets.get(path)
            why = (
                "already" if target is not None and _same(current, target) else "in a state that forbids it:"
            )
            raise ToolFailure(
                "invalid_transition", f"cannot {action.verb} {name} '{key}': its {path} is {why} {current!r}"
            )


def _now_for(table: EntityTable, path: str, episode: Episode) -> str:
    column = table.by_name.get(path.partition(".")[0])
    return episode.today if column is not None and column.format == "date" else episode.now


def _scoped(tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]) -> dict[str, Any]:
    """The addressed row, if it lies under the parent ids given (``/a/{aId}/bs/{bId}/cancel``); a
    record addressed without a key (``/server``) is the one row of its table."""
    if tool.pk_arg is None and table.entity.singleton:
        first = episode.conn.execute(
            f"{table.sql_get.split(' WHERE ')[0]} ORDER BY {quote(table.pk)} LIMIT 1"
        )
        found = first.fetchone()
        if found is None:
            raise ToolFailure("not_found", f"no {table.entity.name} record")
        return table.decode(found)
    key = _key(tool, table, args)
    row = _row(table, episode, key)
    assert tool.action is not None
    for arg, column in tool.action.scope.items():
        if arg in args and column in row and str(row[column]) != str(args[arg]):
            raise ToolFailure("not_found", f"{table.entity.name} '{key}' not found under {arg} '{args[arg]}'")
    return row


def _write(
    store: StateStore, table: EntityTable, episode: Episode, key: Any, values: dict[str, Any]
) -> dict[str, Any]:
    values.pop(table.pk, None)
    _stamp(table, values, episode, creating=False)
    _check_refs(store, table, episode, values)
    if values:
        cols = sorted(values)
        params = [table.encode_value(c, values[c]) for c in cols]
        episode.conn.execute(table.update_sql(cols), [*params, key])
    return _row(table, episode, key)


def _defaults(table: EntityTable, values: dict[str, Any], seq: int) -> None:
    """A required column the call left unset gets a deterministic value, as a server default would."""
    rng = seeded_rng("action-default", table.name, seq)
    for column in table.columns:
        if not column.nullable and not column.primary_key and values.get(column.name) is None:
            values[column.name] = generate_value(column.json_schema or {"type": "string"}, rng, column.name)


def _upsert(
    store: StateStore, table: EntityTable, episode: Episode, values: dict[str, Any]
) -> dict[str, Any]:
    """An add-or-update of an existing row: its fields written, if it lies under the same parents."""
    key = values[table.pk]
    row = _row(table, episode, key)
    for column in table.columns:
        if (
            column.ref is not None
            and column.name in values
            and str(row.get(column.name)) != str(values[column.name])
        ):
            raise ToolFailure("conflict", f"{table.entity.name} '{key}' exists under another {column.ref}")
    return _write(store, table, episode, key, values)


def _insert_row(
    store: StateStore, table: EntityTable, episode: Episode, values: dict[str, Any], *, upsert: bool = False
) -> dict[str, Any]:
    seq = store.next_id(episode, table.name)
    if values.get(table.pk) is None:
        values[table.pk] = _new_key(table, episode, seq)
    elif episode.conn.execute(table.sql_exists, (values[table.pk],)).fetchone() is not None:
        if upsert:
            return _upsert(store, table, episode, values)
        raise ToolFailure("conflict", f"{table.entity.name} '{values[table.pk]}' already exists")
    _defaults(table, values, seq)
    _stamp(table, values, episode, creating=True)
    _check_refs(store, table, episode, values)
    cols = [c for c in table.column_names if c in values]
    episode.conn.execute(table.insert_sql(cols), [table.encode_value(c, values[c]) for c in cols])
    return _row(table, episode, values[table.pk])


def _transition(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> dict[str, Any]:
    assert tool.action is not None
    action = tool.action
    row = _scoped(tool, table, episode, args)
    _check_transition(action, table, row)
    values = _fields_from_args(tool, table, args)
    for path, value in action.sets.items():
        _put(values, row, path, value)
    for path in action.stamps:
        _put(values, row, path, _now_for(table, path, episode))
    return _write(store, table, episode, row[table.pk], values)


def _insert(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> dict[str, Any]:
    assert tool.action is not None
    values = _fields_from_args(tool, table, args)
    for path, value in tool.action.sets.items():
        _put(values, {}, path, value)
    for path in tool.action.stamps:
        _put(values, {}, path, _now_for(table, path, episode))
    return _insert_row(store, table, episode, values, upsert=tool.action.upsert)


def _copy(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> dict[str, Any]:
    row = _scoped(tool, table, episode, args)
    values = {c.name: row[c.name] for c in table.columns if not c.primary_key and not c.read_only}
    values.update(_fields_from_args(tool, table, args))
    return _insert_row(store, table, episode, values)


def request_body(tool: ToolDef, args: dict[str, Any]) -> Any:
    """The request body a call carries: its whole-body argument, else its body fields by wire name."""
    if tool.body_whole is not None:
        return args.get(tool.body_whole)
    return {
        tool.wire_names.get(a, a): v
        for a, v in args.items()
        if tool.arg_locations.get(a) == "body" and a != tool.pk_arg
    }


def member_value(listed: bool, method: str, current: Any, body: Any) -> Any:
    """What a write of the row's sub-record leaves in its JSON column: a list column (``listed``)
    gets the body as one more item (a list body replaces it); an object column takes the body (a
    PATCH merges it into what the row holds)."""
    if listed and not isinstance(body, list):
        return [*(current if isinstance(current, list) else []), body]
    if method == "PATCH" and isinstance(current, dict) and isinstance(body, dict):
        return {**current, **body}
    return body


def _set(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> dict[str, Any]:
    row = _scoped(tool, table, episode, args)
    values = _fields_from_args(tool, table, args)
    assert tool.action is not None
    member = tool.action.member
    if member is not None:
        listed = json_type(table.by_name[member].json_schema) == "array"
        values[member] = member_value(listed, tool.method, row.get(member), request_body(tool, args))
    if tool.action.patch is not None:  # RFC 6902: the operations applied to the row, all or none
        values.update(apply_patch(table, row, args.get(tool.action.patch)))
        if not values:  # a patch of ``test`` operations only: they held, nothing to write
            return row
    for name in [n for n in values if table.by_name[n].read_only]:
        del values[name]
    if not values:
        given = ", ".join(sorted(a for a in tool.arg_columns)) or "none"
        raise ToolFailure("invalid_arguments", f"{tool.name} changes nothing: give at least one of {given}")
    return _write(store, table, episode, row[table.pk], values)


def _clear(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> dict[str, Any]:
    """Delete the addressed row's children; without a parent column, every row of the target
    (``DELETE /__admin/mappings``), whose answer is then the spec's empty body."""
    assert tool.action is not None
    child = store.by_entity[tool.action.target]
    clauses: list[str] = []
    params: list[Any] = []
    row: dict[str, Any] = {}
    if tool.action.parent_column is not None:
        row = _scoped(tool, table, episode, args)
        clauses.append(f"{quote(tool.action.parent_column)} = ?")
        params.append(child.encode_value(tool.action.parent_column, row[table.pk]))
    for column, values in sorted(tool.action.where.items()):
        clauses.append(f"{quote(column)} IN ({', '.join('?' for _ in values)})")
        params += [child.encode_value(column, v) for v in values]
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    episode.conn.execute(f"DELETE FROM {child.q_table}{where}", params)
    return row


def _count(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    """How many rows of the target hold the values the arguments name (each compared as text, as a
    field-match lookup compares them; an argument not given filters nothing), under the parents
    the path names: the spec's body (``{"count": 3}``) or the bare number."""
    assert tool.action is not None
    counted = store.by_entity[tool.action.target]
    named = {**tool.arg_columns, **tool.action.scope}
    clauses, params = [], []
    if tool.listing is not None or tool.search_arg is not None:  # bound as a list: its filters, its search
        try:
            plan = ListQuery(tool, counted).plan(args)
        except ArgumentError as exc:
            raise ToolFailure("invalid_arguments", str(exc)) from exc
        clauses, params = plan.where, plan.params
        named = dict(tool.action.scope)
    for arg, column in sorted(named.items()):
        if args.get(arg) is None:
            continue
        value = args[arg]
        if isinstance(value, bool | dict | list):  # stored encoded (a flag as 0/1, JSON as text)
            clauses.append(f"{quote(column)} = ?")
            params.append(counted.encode_value(column, value))
        else:
            clauses.append(f"CAST({quote(column)} AS TEXT) = ?")
            params.append(str(value))
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    (n,) = episode.conn.execute(f"SELECT COUNT(*) FROM {counted.q_table}{where}", params).fetchone()
    return n if tool.action.answer is None else {tool.action.answer: n}


#: Day formats a date argument may take (sportsdata's ``2018-FEB-27`` beside ISO), with their width.
_DAY_FORMATS = (("%Y-%m-%d", 10), ("%Y-%b-%d", 11), ("%Y%m%d", 8))


def dated(column: ColumnDef) -> bool:
    """Whether a match on ``column`` compares days: a date or timestamp column."""
    return column.format in ("date", "date-time") or column.semantic in ("date", "date-time")


def match_day(value: Any) -> str | None:
    """The ISO day a date argument names (``2018-02-27``, ``2018-FEB-27``, a timestamp), else None."""
    text = str(value).strip()
    for fmt, width in _DAY_FORMATS:
        try:
            return dt.datetime.strptime(text[:width], fmt).date().isoformat()
        except ValueError:
            continue
    return None


def _matched(tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]) -> dict[str, Any]:
    """The first row, by key, whose columns hold the values the arguments name (``action.match``):
    a date or timestamp column by its day, a number argument by its value, any other by its text
    (``"2024"`` is the integer 2024)."""
    assert tool.action is not None
    clauses: list[str] = []
    params: list[Any] = []
    for arg, name in sorted(tool.action.match.items()):
        column = table.by_name[name]
        if dated(column):
            day = match_day(args.get(arg))
            if day is None:
                raise ToolFailure("not_found", f"no {table.entity.name} on {arg} {args.get(arg)!r}")
            clauses.append(f"substr({quote(name)}, 1, 10) = ?")
            params.append(day)
        elif isinstance(args.get(arg), int | float) and not isinstance(args.get(arg), bool):
            # ``lat: 38.1`` names ``"38.10"`` (and no text without a digit, which SQLite reads as 0)
            clauses.append(f"CAST({quote(name)} AS REAL) = ? AND CAST({quote(name)} AS TEXT) GLOB '*[0-9]*'")
            params.append(float(args[arg]))
        else:
            clauses.append(f"CAST({quote(name)} AS TEXT) = ?")
            params.append(str(args.get(arg)))
    select = table.sql_get.split(" WHERE ")[0]
    sql = f"{select} WHERE {' AND '.join(clauses)} ORDER BY {quote(table.pk)} LIMIT 1"
    found = episode.conn.execute(sql, params).fetchone()
    if found is None:
        given = ", ".join(f"{a} {args.get(a)!r}" for a in sorted(tool.action.match))
        raise ToolFailure("not_found", f"no {table.entity.name} with {given}")
    return table.decode(found)


def _lookup(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> dict[str, Any]:
    """A read action: the addressed row (``not_found`` when the state does not hold it), unchanged;
    without a key, the row whose fields its arguments name."""
    assert tool.action is not None
    if tool.action.match:
        return _matched(tool, table, episode, args)
    return _scoped(tool, table, episode, args)


_KINDS: dict[str, Callable[[StateStore, ToolDef, EntityTable, Episode, dict[str, Any]], dict[str, Any]]] = {
    "transition": _transition,
    "insert": _insert,
    "copy": _copy,
    "set": _set,
    "clear": _clear,
    "lookup": _lookup,
}


def op_action(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    """Run an action tool: the state change, then its answer (the row, or the spec's body filled from it)."""
    if tool.action is None:
        raise ToolFailure("tool_error", f"{tool.name} has no action binding")
    if tool.listing is not None:  # a field-match lookup's ``units``: refused, never ignored
        given = {k: v for k, v in args.items() if v is not None}
        try:
            refuse_unhonoured(tool.listing, tool.input_schema.get("properties") or {}, given)
        except ArgumentError as exc:
            raise ToolFailure("invalid_arguments", str(exc)) from exc
    if tool.action.kind == "count":
        return _count(store, tool, table, episode, args)
    row = _KINDS[tool.action.kind](store, tool, table, episode, args)
    if tool.action.returns == "row":
        return row
    return reflect_row(tool, row, table.entity, args)
