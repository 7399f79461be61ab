"""The SQL of one list/search call: every declared parameter bound (filter, range, text, sort, page) or
refused by name.

Synthesis decided what each parameter does (``compoworld.synth.listparams``) and recorded it in the
tool's manifest; this module turns a call's arguments into ``WHERE``/``ORDER BY``/``LIMIT`` and
the arguments of the neighbouring pages, so the spec's own paging fields (``next``, ``cursor``,
``has_more``) can be filled in. A value the binding cannot honour (a sort field the entity does not
have, a cursor nobody issued, a refused parameter) fails the call with ``invalid_arguments`` naming
the parameter (``ArgumentError``): a call never quietly answers something other than what it asked for.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import ColumnDef, EntityDef, ListBinding, ListFilter, ToolDef
from compoworld.runtime.filterexprs import compile_expressions
from compoworld.runtime.tables import EntityTable, quote
from compoworld.runtime.validate import ArgumentError

__all__ = ["INTEGER_TEXT", "OPERATORS", "ListQuery", "refuse_unhonoured", "sort_terms"]

_MAX_LIMIT = 500
_DEFAULT_LIMIT = 50
_MAX_OFFSET = 2**62  # an offset beyond it is as far past the rows, and SQLite's INTEGER holds it
_DESC = frozenset({"desc", "descending", "-1", "down", "reverse"})
_ASC = frozenset({"asc", "ascending", "1", "up"})
_NEWEST = frozenset({"newest", "latest", "recent", "mostrecent", "newestfirst"})
_OLDEST = frozenset({"oldest", "oldestfirst", "earliest"})
_TRUE = frozenset({"1", "true", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "no", "n", "off"})
_SQL_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
#: Operator keys of an object filter (``created[gte]``), by match key, as the filter op they are.
OPERATORS: dict[str, str] = {
    **{"eq": "eq", "equals": "eq", "is": "eq", "ne": "ne", "neq": "ne", "not": "ne", "in": "in"},
    **{"gt": "gt", "after": "gt", "gte": "gte", "ge": "gte", "min": "gte", "from": "gte", "since": "gte"},
    **{"lt": "lt", "before": "lt", "lte": "lte", "le": "lte", "max": "lte", "to": "lte", "until": "lte"},
}
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: A page size or offset sent as text (a spec that types it string); the service's OpenAPI says so.
INTEGER_TEXT = re.compile(r"-?[0-9]+")


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _when_column(entity: EntityDef) -> ColumnDef | None:
    dates = [c for c in entity.columns if c.type != "json" and c.format in ("date", "date-time")]
    for word in ("created", "date", "time"):
        found = next((c for c in dates if word in c.name.lower()), None)
        if found is not None:
            return found
    return dates[0] if dates else None


def _column_named(entity: EntityDef, text: str) -> ColumnDef | None:
    key = _key(text)
    for c in entity.columns:
        if c.type != "json" and key in (_key(c.name), _key(c.source_name or c.name)):
            return c
    return None


def sort_terms(entity: EntityDef, text: str) -> list[tuple[ColumnDef | None, bool | None]] | None:
    """(column, descending?) of every term of a sort value (``-created_at,name``, ``date:desc``,
    ``newest``); a bare direction is ``(None, desc)``; None when a term names no column."""
    out: list[tuple[ColumnDef | None, bool | None]] = []
    for raw in str(text).split(","):
        term = raw.strip()
        if not term:
            continue
        desc: bool | None = True if term.startswith("-") else False if term.startswith("+") else None
        term = term.lstrip("+-").strip()
        for sep in (":", " ", ".", "_", "|"):
            head, _, tail = term.rpartition(sep)
            if head and tail.lower() in _DESC | _ASC:
                term, desc = head, tail.lower() in _DESC
                break
        low = _key(term)
        if low in _DESC | _ASC:
            out.append((None, low in _DESC))
        elif low in _NEWEST | _OLDEST:
            column = _when_column(entity)
            if column is None:
                return None
            out.append((column, low in _NEWEST))
        else:
            column = _column_named(entity, term)
            if column is None and low == _key(entity.name):  # ``order_by=country`` on countries
                column = entity.column(entity.label_column or entity.pk)
            if column is None:
                return None
            out.append((column, desc))
    return out or None


def direction(value: Any) -> bool:
    """Whether an order argument asks for descending order."""
    if isinstance(value, bool):
        return value
    text = _key(str(value)) if not str(value).startswith("-") else "-1"
    if text in _DESC or str(value).strip() == "-1":
        return True
    if text in _ASC:
        return False
    raise ValueError(value)


@dataclass
class Plan:
    """What one call asks for, in SQL."""

    where: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    order: list[tuple[str, bool]] = field(default_factory=list)
    limit: int = _DEFAULT_LIMIT
    offset: int = 0
    after: Any = None
    before: Any = None


def refuse_unhonoured(listing: ListBinding, props: dict[str, Any], given: dict[str, Any]) -> None:
    """Fail (``ArgumentError``, naming it) where a call gives a parameter the binding refuses a value
    other than its declared default: nothing a caller sends is quietly ignored."""
    for arg, value in given.items():
        if arg in listing.refused and value != (props.get(arg) or {}).get("default", _NOTHING):
            raise ArgumentError(
                arg, f"argument '{arg}' cannot be honoured by this service: {listing.refused[arg]}"
            )


class ListQuery:
    """Runs one list/search call against an episode's table (compiled per call: a few dict passes)."""

    def __init__(self, tool: ToolDef, table: EntityTable) -> None:
        self.tool = tool
        self.table = table
        self.listing: ListBinding = tool.listing or ListBinding()
        self.props: dict[str, Any] = tool.input_schema.get("properties") or {}

    # -- arguments -> plan ---------------------------------------------------------------

    def plan(self, args: dict[str, Any]) -> Plan:
        listing, tool, table = self.listing, self.tool, self.table
        given = {k: v for k, v in args.items() if v is not None and v != {} and v != []}
        for arg, value in listing.defaults.items():
            given.setdefault(arg, value)
        plan = Plan()
        refuse_unhonoured(listing, self.props, given)
        for arg, column in sorted(tool.arg_columns.items()):
            if arg in given and column in table.column_set and arg != tool.search_arg:
                plan.where.append(f"{quote(column)} = ?")
                plan.params.append(table.encode_value(column, self._typed(column, given[arg], arg)))
        for arg, flt in sorted(listing.filters.items()):
            if arg in given and flt.column in table.column_set:
                self._filter(plan, arg, flt, given[arg])
        expressions = listing.expressions
        if expressions is not None and given.get(expressions.arg) is not None:
            clause, params = compile_expressions(expressions, table, given[expressions.arg])
            plan.where.append(clause)
            plan.params.extend(params)
        query = given.get(tool.search_arg) if tool.search_arg else None
        if query and table.text_columns:
            like = " OR ".join(f"{quote(c)} LIKE ? ESCAPE '\\'" for c in table.text_columns)
            plan.where.append(f"({like})")
            plan.params.extend([f"%{_escape(str(query))}%"] * len(table.text_columns))
        self._order(plan, given)
        self._page(plan, given)
        return plan

    def _typed(self, column: str, value: Any, arg: str) -> Any:
        kind = self.table.by_name[column].type
        if isinstance(value, str) and kind in ("integer", "number"):
            try:
                return int(value) if kind == "integer" else float(value)
            except ValueError as exc:
                raise ArgumentError(arg, f"argument '{arg}' must be a number, got {value!r}") from exc
        if kind == "boolean" and isinstance(value, str):
            if value.lower() not in _TRUE | _FALSE:
                raise ArgumentError(arg, f"argument '{arg}' must be true or false, got {value!r}")
            return value.lower() in _TRUE
        return value

    def _filter(self, plan: Plan, arg: str, flt: ListFilter, value: Any) -> None:
        col = quote(flt.column)
        column = self.table.by_name[flt.column]
        if flt.op == "in":
            values = value if isinstance(value, list) else [v.strip() for v in str(value).split(",")]
            values = [self._typed(flt.column, v, arg) for v in values if v not in ("", None)]
            if values:
                plan.where.append(f"{col} IN ({', '.join('?' for _ in values)})")
                plan.params.extend(self.table.encode_value(flt.column, v) for v in values)
        elif flt.op == "ops":
            if not isinstance(value, dict):
                raise ArgumentError(arg, f"argument '{arg}' must be an object of operators (eq, gt, lte...)")
            for key, inner in sorted(value.items()):
                op = OPERATORS.get(_key(key))
                if op is None:
                    raise ArgumentError(
                        arg, f"argument '{arg}[{key}]': no such operator (eq, ne, gt, gte, lt, lte, in)"
                    )
                if op in ("eq", "ne"):
                    plan.where.append(f"{col} {'=' if op == 'eq' else 'IS NOT'} ?")
                    plan.params.append(
                        self.table.encode_value(flt.column, self._typed(flt.column, inner, arg))
                    )
                else:
                    self._filter(plan, f"{arg}[{key}]", ListFilter(column=flt.column, op=op), inner)  # type: ignore[arg-type]
        elif flt.op in _SQL_OPS:
            bound = self._bound(column, value, arg)
            if isinstance(bound, str) and _DATE_ONLY.fullmatch(bound) and column.format != "date":
                col = f"substr({col}, 1, 10)"  # a day bounds a timestamp by its date
            plan.where.append(f"{col} {_SQL_OPS[flt.op]} ?")
            plan.params.append(bound)
        elif flt.op in ("contains", "prefix", "suffix"):
            text = _escape(str(value))
            pattern = {"contains": f"%{text}%", "prefix": f"{text}%", "suffix": f"%{text}"}[flt.op]
            plan.where.append(f"{col} LIKE ? ESCAPE '\\'")
            plan.params.append(pattern)
        else:  # is_true / is_false: a false argument asks for the rows where the flag is not so
            truthy = self._typed(flt.column, value, arg) if not isinstance(value, bool) else value
            target = 1 if flt.op == "is_true" else 0
            plan.where.append(f"{col} = ?" if truthy else f"{col} IS NOT ?")
            plan.params.append(target)

    def _bound(self, column: ColumnDef, value: Any, arg: str) -> Any:
        """A range bound in the column's own terms (an epoch for a timestamp column read as ISO time)."""
        if column.type in ("integer", "number"):
            return self._typed(column.name, value, arg)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = value / 1000 if value > 10**11 else value
            try:
                moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
            except (OverflowError, OSError, ValueError) as exc:
                raise ArgumentError(arg, f"argument '{arg}' is no time: {value!r}") from exc
            return (
                moment.date().isoformat() if column.format == "date" else moment.strftime("%Y-%m-%dT%H:%M:%S")
            )
        return str(value)

    def _order(self, plan: Plan, given: dict[str, Any]) -> None:
        listing = self.listing
        desc: bool | None = None
        if listing.order_arg and listing.order_arg in given:
            try:
                desc = direction(given[listing.order_arg])
            except ValueError as exc:
                arg = listing.order_arg
                raise ArgumentError(arg, f"argument '{arg}' must be asc or desc, got {given[arg]!r}") from exc
        terms: list[tuple[ColumnDef | None, bool | None]] = []
        if listing.sort_arg and listing.sort_arg in given:
            raw = given[listing.sort_arg]
            text = ",".join(str(v) for v in raw) if isinstance(raw, list) else str(raw)
            found = sort_terms(self.table.entity, text)
            if found is None:
                arg = listing.sort_arg
                raise ArgumentError(arg, f"argument '{arg}': {text!r} names no sortable field")
            terms = found
        for column, term_desc in terms:
            if column is None:
                desc = term_desc if desc is None else desc
                continue
            plan.order.append((column.name, bool(term_desc if term_desc is not None else desc)))
        if not plan.order and desc:
            plan.order.append((self.table.pk, True))

    def _page(self, plan: Plan, given: dict[str, Any]) -> None:
        tool, listing = self.tool, self.listing
        limit = given.get(tool.limit_arg) if tool.limit_arg else None
        offset = given.get(tool.offset_arg) if tool.offset_arg else None
        try:
            for text in (limit, offset):  # a spec's string-typed page size: digits (INTEGER_TEXT)
                if isinstance(text, str) and not INTEGER_TEXT.fullmatch(text):
                    raise ValueError(text)
            plan.limit = max(1, min(int(limit), _MAX_LIMIT)) if limit is not None else _DEFAULT_LIMIT
            plan.offset = max(0, int(offset)) if offset is not None else 0
        except (TypeError, ValueError) as exc:
            arg = (
                tool.limit_arg
                if limit is not None and not str(limit).lstrip("-").isdigit()
                else tool.offset_arg
            )
            raise ArgumentError(arg or "limit", f"argument '{arg}' must be an integer") from exc
        if tool.offset_arg and "page" in tool.offset_arg.lower() and offset is not None:
            plan.offset = max(0, plan.offset - 1) * plan.limit
        plan.offset = min(plan.offset, _MAX_OFFSET)  # past every row, within SQLite's INTEGER
        for arg, slot in ((listing.cursor_arg, "after"), (listing.before_arg, "before")):
            if arg and arg in given:
                value = given[arg]
                if listing.cursor_by == "offset":
                    try:
                        plan.offset = min(max(0, int(value)), _MAX_OFFSET)
                    except (TypeError, ValueError) as exc:
                        raise ArgumentError(
                            arg, f"argument '{arg}': {value!r} is no cursor of this list"
                        ) from exc
                else:
                    setattr(plan, slot, value)

    # -- plan -> rows ---------------------------------------------------------------------

    def rows(self, conn: Any, plan: Plan) -> tuple[list[dict[str, Any]], int, int]:
        """(rows of the page, rows matching, offset of the page in the ordered matches)."""
        table = self.table
        where = (" WHERE " + " AND ".join(plan.where)) if plan.where else ""
        terms = [f"{quote(c)} {'DESC' if d else 'ASC'}" for c, d in plan.order]
        pk = quote(table.pk)
        if table.pk not in {c for c, _ in plan.order}:
            terms.append(f"{pk} ASC")
        order = " ORDER BY " + ", ".join(terms)
        total = conn.execute(f"SELECT COUNT(*) FROM {table.q_table}{where}", plan.params).fetchone()[0]
        offset = plan.offset
        if plan.after is not None or plan.before is not None:
            keys = [
                r[0] for r in conn.execute(f"SELECT {pk} FROM {table.q_table}{where}{order}", plan.params)
            ]
            anchor = plan.after if plan.after is not None else plan.before
            arg = self.listing.cursor_arg if plan.after is not None else self.listing.before_arg
            at = next((i for i, k in enumerate(keys) if str(k) == str(anchor)), None)
            if at is None:
                raise ArgumentError(arg or "cursor", f"argument '{arg}': {anchor!r} is no row of this list")
            offset = at + 1 if plan.after is not None else max(0, at - plan.limit)
            limit = plan.limit if plan.after is not None else min(plan.limit, at)
        else:
            limit = plan.limit
        sql = f"{table.sql_select}{where}{order} LIMIT ? OFFSET ?"
        items = [table.decode(r) for r in conn.execute(sql, [*plan.params, limit, offset])]
        return items, total, offset


_NOTHING: Any = object()


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
