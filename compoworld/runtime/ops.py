"""Implemented tools: create/read/list/search/update/delete against an episode's typed state.

Each function takes the tool's binding (ToolDef), the compiled table, the episode and
validated arguments, and returns what it found in typed state, keyed by column names: one
row, a ``Listed`` page of rows or a ``Deleted`` row. The dispatcher turns that into the body
the spec declares (``compoworld.runtime.shape``). A failure raises ToolFailure, which the
dispatcher turns into ``success: false`` (a tool failure is an observation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compoworld.keys import entity_key
from compoworld.manifest import ToolDef
from compoworld.runtime.listquery import ListQuery, refuse_unhonoured
from compoworld.runtime.shape import Page
from compoworld.runtime.state import Episode, StateStore
from compoworld.runtime.tables import EntityTable
from compoworld.runtime.validate import ArgumentError

__all__ = ["OPERATIONS", "Deleted", "Listed", "ToolFailure"]


class Listed:
    """A page of rows a list/search call found."""

    __slots__ = ("page", "rows")

    def __init__(self, rows: list[dict[str, Any]], page: Page) -> None:
        self.rows = rows
        self.page = page


class Deleted:
    """The row a delete removed."""

    __slots__ = ("row",)

    def __init__(self, row: dict[str, Any]) -> None:
        self.row = row


class ToolFailure(Exception):
    """A tool call that failed for a reason the caller can act on."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _fields_from_args(tool: ToolDef, table: EntityTable, args: dict[str, Any]) -> dict[str, Any]:
    """Map call arguments onto columns: direct bindings plus the nested entity object, if any."""
    values: dict[str, Any] = {}
    if tool.body_arg and isinstance(args.get(tool.body_arg), dict):
        for key, value in args[tool.body_arg].items():
            column = _column_for(table, key)
            if column is not None:
                values[column] = value
    for arg, column in tool.arg_columns.items():
        if arg in args and column in table.column_set and arg != tool.pk_arg:
            values[column] = args[arg]
    return values


def _column_for(table: EntityTable, key: str) -> str | None:
    if key in table.column_set:
        return key
    for column in table.columns:
        if column.source_name == key:
            return column.name
    return None


def _stamp(table: EntityTable, values: dict[str, Any], episode: Episode, *, creating: bool) -> None:
    """Set the service-owned timestamps to the episode's frozen time."""
    for name, is_date in table.stamp_on_create if creating else table.stamp_on_update:
        values[name] = episode.today if is_date else episode.now


def _check_refs(store: StateStore, table: EntityTable, episode: Episode, values: dict[str, Any]) -> None:
    """A reference must name a row that exists (the typed state stays referentially consistent)."""
    for name, entity in table.refs.items():
        value = values.get(name)
        if value is None or isinstance(value, (dict, list)):
            continue
        target = store.by_entity.get(entity)
        if target is not None and episode.conn.execute(target.sql_exists, (value,)).fetchone() is None:
            raise ToolFailure("not_found", f"{entity} '{value}' (from '{name}') does not exist")


def _row(table: EntityTable, episode: Episode, key: Any) -> dict[str, Any]:
    if isinstance(key, (list, dict)):  # a key argument declared as an array or object
        raise ToolFailure(
            "invalid_arguments", f"{table.entity.name} key must be one value, not {key!r}"[:300]
        )
    row = episode.conn.execute(table.sql_get, (key,)).fetchone()
    if row is None:
        raise ToolFailure("not_found", f"{table.entity.name} '{key}' not found")
    return table.decode(row)


def _key(tool: ToolDef, table: EntityTable, args: dict[str, Any]) -> Any:
    if tool.pk_arg is None or tool.pk_arg not in args:
        raise ToolFailure("invalid_arguments", f"missing required argument '{tool.pk_arg}'")
    key = args[tool.pk_arg]
    pk_col = table.by_name[table.pk]
    if pk_col.type == "integer" and isinstance(key, str) and key.lstrip("-").isdigit():
        key = int(key)
    if isinstance(key, int) and not -(2**63) <= key < 2**63:  # past SQLite's INTEGER: no such row
        raise ToolFailure("not_found", f"{table.entity.name} '{key}' not found")
    return key


def _new_key(table: EntityTable, episode: Episode, seq: int) -> Any:
    """The key of the seq-th row, in the same library-unique scheme as the seed's (never random)."""
    for attempt in range(50):  # a narrow key pattern can repeat a key the seed already holds
        key = entity_key(table.entity, seq, attempt)
        if episode.conn.execute(table.sql_exists, (key,)).fetchone() is None:
            return key
    # a closed key space (a path parameter's enum: one row per value) has no key left to give
    raise ToolFailure("conflict", f"no {table.entity.name} key is free: every key the API allows is taken")


def op_create(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    values = _fields_from_args(tool, table, args)
    seq = store.next_id(episode, table.name)
    if values.get(table.pk) is None:
        values[table.pk] = _new_key(table, episode, seq)
    elif episode.conn.execute(table.sql_exists, (values[table.pk],)).fetchone() is not None:
        raise ToolFailure("conflict", f"{table.entity.name} '{values[table.pk]}' already exists")
    for column in table.columns:
        if (
            not column.nullable
            and not column.primary_key
            and values.get(column.name) is None
            and not column.read_only
        ):
            raise ToolFailure(
                "invalid_arguments", f"missing required field '{column.source_name or column.name}'"
            )
    _stamp(table, values, episode, creating=True)
    _check_refs(store, table, episode, values)
    cols = [c for c in table.column_names if c in values]
    episode.conn.execute(table.insert_sql(cols), [table.encode_value(c, values[c]) for c in cols])
    return _row(table, episode, values[table.pk])


def _scoped_row(tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]) -> dict[str, Any]:
    """The row an id names, if it also lies under the parent ids given (``/a/{aId}/bs/{bId}``)."""
    key = _key(tool, table, args)
    row = _row(table, episode, key)
    for arg, column in tool.arg_columns.items():
        if arg == tool.pk_arg or arg not in args or column not in row or column == table.pk:
            continue
        if table.by_name[column].ref is not None and str(row[column]) != str(args[arg]):
            raise ToolFailure("not_found", f"{table.entity.name} '{key}' not found under {arg} '{args[arg]}'")
    return row


def op_read(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    """The row the key names; a field argument (``?status=open``) must be what the row holds, and a
    refused one (``fields``, ``expand``) fails by name at any value but its default."""
    if tool.listing is not None:
        given = {k: v for k, v in args.items() if v is not None}
        try:
            refuse_unhonoured(tool.listing, tool.input_schema.get("properties") or {}, given)
        except ArgumentError as exc:
            raise ToolFailure("invalid_arguments", str(exc)) from exc
    row = _scoped_row(tool, table, episode, args)
    for arg, column in tool.arg_columns.items():
        held = table.by_name[column].ref is not None or column == table.pk  # a parent: checked above
        if not held and args.get(arg) is not None and str(row.get(column)) != str(args[arg]):
            raise ToolFailure(
                "not_found", f"{table.entity.name} '{row[table.pk]}' has no {arg} {args[arg]!r}"
            )
    return row


def op_update(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    key = _key(tool, table, args)
    if episode.conn.execute(table.sql_exists, (key,)).fetchone() is None:
        raise ToolFailure("not_found", f"{table.entity.name} '{key}' not found")
    values = _fields_from_args(tool, table, args)
    values.pop(table.pk, None)
    for name in [n for n in values if table.by_name[n].read_only]:
        del values[name]
    _stamp(table, values, episode, creating=False)
    _check_refs(store, table, episode, values)
    if values:
        cols = sorted(values)
        params = [table.encode_value(c, values[c]) for c in cols]
        episode.conn.execute(table.update_sql(cols), [*params, key])
    return _row(table, episode, key)


def op_delete(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    row = _scoped_row(tool, table, episode, args)
    if episode.conn.execute(table.sql_delete, (row[table.pk],)).rowcount == 0:
        raise ToolFailure("not_found", f"{table.entity.name} '{row[table.pk]}' not found")
    return Deleted(row)


def op_list(
    store: StateStore, tool: ToolDef, table: EntityTable, episode: Episode, args: dict[str, Any]
) -> Any:
    query = ListQuery(tool, table)
    try:
        plan = query.plan(args)
        items, total, offset = query.rows(episode.conn, plan)
    except ArgumentError as exc:
        raise ToolFailure("invalid_arguments", str(exc)) from exc
    return Listed(items, _neighbours(tool, table, args, total, plan.limit, offset, items))


def _neighbours(
    tool: ToolDef,
    table: EntityTable,
    args: dict[str, Any],
    total: int,
    limit: int,
    offset: int,
    items: list[dict[str, Any]],
) -> Page:
    """The page found, and the arguments that fetch the next and previous pages (cursor or page/offset)."""
    page = Page(total, limit, offset, args=args)
    count = len(items)
    more, earlier = offset + count < total, offset > 0
    listing = tool.listing
    if listing is not None and listing.cursor_arg:
        by_key = listing.cursor_by == "key"
        if more and count:
            page.next_args = {listing.cursor_arg: items[-1][table.pk] if by_key else offset + count}
        if earlier and count and listing.before_arg and by_key:
            page.prev_args = {listing.before_arg: items[0][table.pk]}
        return page
    arg = tool.offset_arg
    if arg is None:
        return page
    by_page = "page" in arg.lower()
    if more:
        page.next_args = {arg: offset // limit + 2 if by_page else offset + limit}
    if earlier:
        page.prev_args = {arg: max(offset // limit, 1) if by_page else max(offset - limit, 0)}
    return page


Op = Callable[[StateStore, ToolDef, EntityTable, Episode, dict[str, Any]], Any]
OPERATIONS: dict[str, Op] = {
    "create": op_create,
    "read": op_read,
    "list": op_list,
    "search": op_list,
    "update": op_update,
    "delete": op_delete,
}
