"""Conformance checks of a list/search tool's declared parameters: each one bound does what its
binding says, each one refused is refused by name, and none is left over.

Every check compares the page the tool answers (read back through its response shape, over both
routes) with the rows of the typed state that should match, computed here from the seed:

- an equality filter returns exactly the rows holding the value; a set filter (``ids=a,b``) the
  rows holding one of them; a range bound (``created_after``, ``min_price``) the rows on its side;
  a text filter the rows whose text holds it; a flag (``ptz_true``) the rows where it is set;
- a sort field orders the page by it, both ways; a page size caps it; the next page (offset, page
  number or cursor) starts where the first ended;
- a refused parameter given a value other than its default fails with a message naming it.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from pydantic import BaseModel, Field

from compoworld.manifest import EntityDef, FilterExpressions, ListBinding, ListFilter, ToolDef
from compoworld.runtime.listquery import direction, sort_terms
from compoworld.runtime.validate import ArgsValidator, ArgumentError
from compoworld.runtime.world import generate_value
from compoworld.seeding import seeded_rng
from compoworld.synth.verify_world import Checker, CheckFailure

__all__ = ["ListTally", "as_arg", "check_listing", "expressions_arg", "unaccounted"]

_PAGE = 500


class ListTally(BaseModel):
    """What the list checks of one tool found, per declared parameter."""

    declared: int = Field(default=0, description="Declared list parameters (scope arguments aside).")
    verified: int = Field(default=0, description="Bound parameters whose effect a call showed.")
    refused: int = Field(default=0, description="Unbindable parameters a call showed refused by name.")
    untested: int = Field(default=0, description="Parameters the seed gave no value to show the effect with.")


def unaccounted(tool: ToolDef) -> list[str]:
    """Declared parameters of a list tool that are neither bound nor refused (silently ignored)."""
    listing = tool.listing or ListBinding()
    known = {tool.pk_arg, tool.search_arg, tool.limit_arg, tool.offset_arg, listing.sort_arg}
    known |= {listing.order_arg, listing.cursor_arg, listing.before_arg}
    known |= set(tool.arg_columns) | set(listing.filters) | set(listing.refused) | set(listing.headers)
    known |= {listing.expressions.arg} if listing.expressions is not None else set()
    props = tool.input_schema.get("properties") or {}
    return sorted(a for a in props if a not in known and tool.arg_locations.get(a) != "path")


def expressions_arg(spec: FilterExpressions, expressions: list[dict[str, Any]]) -> Any:
    """The argument sending ``expressions``: the list, or the JSON text of the object holding it."""
    return json.dumps({spec.within: expressions}) if spec.within is not None else expressions


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def as_arg(schema: dict[str, Any], value: Any) -> Any:
    """A stored value as the argument's declared type (an integer key the spec passes as text)."""
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    if "string" in kinds and not isinstance(value, str):
        return _text(value)
    if kinds & {"integer", "number"} and isinstance(value, str):
        try:
            return int(value) if "integer" in kinds else float(value)
        except ValueError:
            return value
    return value


class _ListCheck:
    def __init__(self, ck: Checker, tool: ToolDef, entity: EntityDef, base: dict[str, Any]) -> None:
        self.ck = ck
        self.tool = tool
        self.entity = entity
        self.base = dict(base)
        self.props: dict[str, Any] = tool.input_schema.get("properties") or {}
        self.valid = ArgsValidator(tool.input_schema)
        listing = tool.listing or ListBinding()
        self.tally = ListTally()
        self._text_columns = [c for c in entity.columns if c.type == "string"]
        self.rows = [r for r in ck.rt.select(None, entity.table) if self._in_scope(r)]
        if tool.limit_arg:  # one page holds every row in scope, where the spec lets it
            maximum = (self.props.get(tool.limit_arg) or {}).get("maximum")
            size = min(_PAGE, int(maximum)) if isinstance(maximum, (int, float)) and maximum >= 1 else _PAGE
            self.base[tool.limit_arg] = as_arg(self.props.get(tool.limit_arg) or {}, size)
        if tool.offset_arg and tool.offset_arg in self.base:  # a required offset or page: the first
            first = 1 if "page" in tool.offset_arg.lower() else 0
            self.base[tool.offset_arg] = as_arg(self.props.get(tool.offset_arg) or {}, first)
        for arg in (listing.cursor_arg, listing.before_arg):
            self.base.pop(arg or "", None)

    def _in_scope(self, row: dict[str, Any]) -> bool:
        query = self.base.get(self.tool.search_arg) if self.tool.search_arg else None
        if query and not any(_matches("contains", row.get(c.name), str(query)) for c in self._text_columns):
            return False
        filters = (self.tool.listing or ListBinding()).filters
        return all(
            _text(row.get(c)) == _text(self.base[a])
            for a, c in self.tool.arg_columns.items()
            if a in self.base
        ) and all(
            _admits(f.op, row.get(f.column), self.base[a]) for a, f in filters.items() if a in self.base
        )

    def _ok(self, args: dict[str, Any]) -> bool:
        try:
            self.valid(args)
        except ArgumentError:
            return False
        return True

    async def page(self, extra: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        """The rows one call answers, keyed by column, and whether they carry the key."""
        body = await self.ck.expect_ok(None, self.tool, {**self.base, **extra})
        found = self.tool.rows_in(body)
        if found is None:
            raise CheckFailure(f"{self.tool.name}: the list body holds no rows where its shape says")
        rows = [r for _, r in found]
        return rows, all(self.entity.pk in r for r in rows)

    def window(self) -> int:
        """How many rows one page can answer (the size the checks ask for, or the service's default)."""
        if self.tool.limit_arg:
            return int(self.base[self.tool.limit_arg])
        return 50

    async def expect_rows(self, arg: str, value: Any, wanted: list[dict[str, Any]]) -> bool:
        """The call with ``arg=value`` answers exactly ``wanted`` (by key where the body carries it)."""
        got, keyed = await self.page({arg: value})
        pk = self.entity.pk
        if len(wanted) > self.window():
            if len(got) != self.window():
                raise CheckFailure(f"{arg}={value!r} answered {len(got)} rows, expected a full page")
            if keyed and not {_text(r[pk]) for r in got} <= {_text(r[pk]) for r in wanted}:
                raise CheckFailure(f"{arg}={value!r} answered rows that do not match")
            return True
        if keyed:
            have, want = sorted(_text(r[pk]) for r in got), sorted(_text(r[pk]) for r in wanted)
            if have != want:
                raise CheckFailure(f"{arg}={value!r} answered {have[:5]}, the matching rows are {want[:5]}")
        elif len(got) != len(wanted):
            raise CheckFailure(f"{arg}={value!r} answered {len(got)} rows, {len(wanted)} match")
        return True

    # -- per parameter -------------------------------------------------------------------

    def values(self, column: str) -> list[Any]:
        out = [
            r[column]
            for r in self.rows
            if r.get(column) is not None and not isinstance(r[column], (dict, list))
        ]
        return sorted(set(out), key=_text)

    async def equality(self, arg: str, column: str) -> bool:
        for value in self.values(column)[:5]:
            candidate = as_arg(self.props.get(arg) or {}, value)
            if self._ok({**self.base, arg: candidate}):
                wanted = [r for r in self.rows if _text(r.get(column)) == _text(value)]
                return await self.expect_rows(arg, candidate, wanted)
        return False

    async def filtered(self, arg: str, flt: ListFilter) -> bool:
        values = self.values(flt.column)
        if not values:
            return False
        schema = self.props.get(arg) or {}
        if flt.op == "in":
            chosen = values[:2]
            candidate: Any = (
                [as_arg(schema.get("items") or {}, v) for v in chosen]
                if schema.get("type") == "array"
                else ",".join(_text(v) for v in chosen)
            )
            texts = {_text(v) for v in chosen}
            wanted = [r for r in self.rows if _text(r.get(flt.column)) in texts]
        elif flt.op in ("gt", "gte", "lt", "lte"):
            value = _bound(schema, values[len(values) // 2])
            candidate = as_arg(schema, value)
            wanted = [r for r in self.rows if _holds(flt.op, r.get(flt.column), value)]
        elif flt.op == "ops":  # ``created[gte]=...``: the rows on the bound's side
            value = values[len(values) // 2]
            candidate = {"gte": value}
            wanted = [r for r in self.rows if _holds("gte", r.get(flt.column), value)]
        elif flt.op in ("contains", "prefix", "suffix"):
            text = str(values[len(values) // 2])
            piece = text[:4] if flt.op == "prefix" else text[-4:] if flt.op == "suffix" else text[1:5] or text
            candidate = piece
            wanted = [r for r in self.rows if _matches(flt.op, r.get(flt.column), piece)]
        else:
            candidate = as_arg(schema, True)
            target = flt.op == "is_true"
            wanted = [r for r in self.rows if r.get(flt.column) is target]
        if not self._ok({**self.base, arg: candidate}):
            return False
        return await self.expect_rows(arg, candidate, wanted)

    async def expressed(self, spec: FilterExpressions) -> bool:
        """A filter expression ``{field, op: eq, value}`` answers the rows holding that value, and
        one whose field names no column is refused by name."""
        for column in self.entity.columns:
            values = self.values(column.name) if not column.primary_key and column.type != "json" else []
            if not values:
                continue
            value = values[len(values) // 2]
            expression = {spec.field: column.source_name or column.name, spec.op: "eq", spec.value: value}
            wanted = [r for r in self.rows if _text(r.get(column.name)) == _text(value)]
            if not await self.expect_rows(spec.arg, expressions_arg(spec, [expression]), wanted):
                return False
            unknown = [{spec.field: "no_such_field_x", spec.op: "eq", spec.value: value}]
            out = await self.ck.call(
                None, self.tool.name, {**self.base, spec.arg: expressions_arg(spec, unknown)}
            )
            if out.success or spec.arg not in out.message:
                raise CheckFailure(f"a filter expression on no field was not refused by name: {out}")
            return True
        return False

    async def searched(self, arg: str) -> bool:
        """Free text answers the rows one of whose text fields holds it."""
        texts = [
            v for c in self._text_columns for v in self.values(c.name) if isinstance(v, str) and len(v) > 5
        ]
        if not texts:
            return False
        piece = texts[len(texts) // 2][1:5]
        wanted = [
            r
            for r in self.rows
            if any(_matches("contains", r.get(c.name), piece) for c in self._text_columns)
        ]
        if not self._ok({**self.base, arg: piece}):
            return False
        return await self.expect_rows(arg, piece, wanted)

    async def sorted_by(self, arg: str) -> bool:
        schema = self.props.get(arg) or {}
        spellings: list[tuple[Any, bool, Any]] = []
        for value in schema.get("enum") or []:
            terms = sort_terms(self.entity, str(value)) or []
            if len(terms) == 1 and terms[0][0] is not None:
                spellings.append((value, bool(terms[0][1]), terms[0][0]))
        if not schema.get("enum"):
            column = next(
                (
                    c
                    for c in self.entity.columns
                    if c.type in ("string", "integer", "number") and len(self.values(c.name)) > 1
                ),
                None,
            )
            if column is not None:
                name = column.source_name or column.name
                spellings = [(name, False, column), (f"-{name}", True, column)]
        if not spellings or len(self.rows) > self.window():
            return False
        for spelled, desc, column in spellings[:2]:
            value = as_arg(self.props.get(arg) or {}, spelled)
            if not self._ok({**self.base, arg: value}):
                return False
            got, _ = await self.page({arg: value})
            seen = [r.get(column.name) for r in got if r.get(column.name) is not None]
            if seen and seen != sorted(seen, key=_order_key, reverse=desc):
                raise CheckFailure(f"{arg}={value!r} did not order the rows by {column.name}")
        return True

    async def ordered(self, arg: str) -> bool:
        """The order argument turns the page: with the sort field (or alone, by key) one value of it
        answers the rows ascending, the other descending."""
        listing, schema = self.tool.listing or ListBinding(), self.props.get(arg) or {}
        directions: dict[bool, Any] = {}
        for value in schema.get("enum") or ["asc", "desc"]:
            with contextlib.suppress(ValueError):
                directions.setdefault(direction(value), value)
        if len(directions) < 2 or len(self.rows) > self.window():
            return False
        extra: dict[str, Any] = {}
        column = self.entity.column(self.entity.pk)
        if listing.sort_arg:
            sort_schema = self.props.get(listing.sort_arg) or {}
            named = [(c.source_name or c.name, c) for c in self.entity.columns]
            if sort_schema.get("enum"):  # a spelling of the enum that names one field, no direction
                terms = [(v, sort_terms(self.entity, str(v)) or []) for v in sort_schema["enum"]]
                named = [
                    (v, t[0][0]) for v, t in terms if len(t) == 1 and t[0][0] is not None and t[0][1] is None
                ]
            spelled, column = next(
                (
                    (v, c)
                    for v, c in named
                    if c.type in ("string", "integer", "number")
                    and len(set(map(_text, self.values(c.name)))) > 1
                ),
                (None, None),
            )
            if column is None:
                return False
            extra[listing.sort_arg] = as_arg(sort_schema, spelled)
        if column is None:
            return False
        for desc in (False, True):
            args = {**extra, arg: as_arg(schema, directions[desc])}
            if not self._ok({**self.base, **args}):
                return False
            got, _ = await self.page(args)
            seen = [r.get(column.name) for r in got if r.get(column.name) is not None]
            if desc and seen != sorted(seen, key=_order_key, reverse=True):
                raise CheckFailure(
                    f"{arg}={directions[desc]!r} did not order the rows by {column.name} descending"
                )
            if not desc and extra and seen != sorted(seen, key=_order_key):
                raise CheckFailure(
                    f"{arg}={directions[desc]!r} did not order the rows by {column.name} ascending"
                )
        return True

    async def paged(self) -> bool:
        """A page of the smallest size the spec allows (one row, or its ``minimum``: CORE's
        ``pageSize >= 10``), then the next page by offset, page number or cursor: the rows after it."""
        tool, listing = self.tool, self.tool.listing or ListBinding()
        low = (self.props.get(tool.limit_arg or "") or {}).get("minimum")
        size = max(1, low) if isinstance(low, int) and not isinstance(low, bool) else 1
        if not tool.limit_arg or len(self.rows) <= size:
            return False
        one = {tool.limit_arg: as_arg(self.props.get(tool.limit_arg) or {}, size)}
        first, keyed = await self.page(one)
        if len(first) != size:
            raise CheckFailure(f"{tool.limit_arg}={size} answered {len(first)} rows")
        step: dict[str, Any] | None = None
        if tool.offset_arg:
            by_page = "page" in tool.offset_arg.lower()
            step = {tool.offset_arg: as_arg(self.props.get(tool.offset_arg) or {}, 2 if by_page else size)}
        elif listing.cursor_arg and keyed:
            token = first[-1][self.entity.pk] if listing.cursor_by == "key" else size
            step = {listing.cursor_arg: as_arg(self.props.get(listing.cursor_arg) or {}, token)}
        if step is None or not self._ok({**self.base, **one, **step}):
            return True
        second, _ = await self.page({**one, **step})
        seen = {str(r.get(self.entity.pk)) for r in first}
        if not 0 < len(second) <= size or (keyed and str(second[0].get(self.entity.pk)) in seen):
            raise CheckFailure(f"the next page ({step}) did not answer the rows after the first")
        return True

    async def refused(self, arg: str) -> bool:
        schema = self.props.get(arg) or {}
        default = schema.get("default")
        rng = seeded_rng("verify-list", self.tool.name, arg)
        for _ in range(5):
            value = generate_value(schema, rng, arg)
            if value in (None, "", [], {}) or value == default:
                continue
            if self._ok({**self.base, arg: value}):
                out = await self.ck.call(None, self.tool.name, {**self.base, arg: value})
                if out.success or arg not in out.message:
                    raise CheckFailure(f"refused parameter '{arg}' was not refused by name: {out}")
                return True
        return False


def _bound(schema: dict[str, Any], value: Any) -> Any:
    """A stored value as a range bound in the argument's own format: a timestamp column bounded by
    a ``format: date`` argument (Postmark's ``fromdate``) takes the timestamp's day."""
    if schema.get("format") == "date" and isinstance(value, str) and len(value) > 10 and value[4:5] == "-":
        return value[:10]
    return value


def _admits(op: str, stored: Any, given: Any) -> bool:
    """Whether a row passes a filter the call always carries (a required ``types=partner``), so the
    rows a check expects are those the base call can answer at all."""
    if op == "in":
        values = given if isinstance(given, list) else str(given).split(",")
        return _text(stored) in {_text(v) for v in values}
    if op in ("gt", "gte", "lt", "lte"):
        return _holds(op, stored, given)
    if op in ("contains", "prefix", "suffix"):
        return _matches(op, stored, str(given))
    return True


def _order_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def _holds(op: str, stored: Any, bound: Any) -> bool:
    if stored is None:
        return False
    if isinstance(stored, str) and isinstance(bound, str) and len(bound) == 10 and len(stored) > 10:
        stored = stored[:10]
    try:
        return bool(
            {"gt": stored > bound, "gte": stored >= bound, "lt": stored < bound, "lte": stored <= bound}[op]
        )
    except TypeError:
        return False


def _matches(op: str, stored: Any, piece: str) -> bool:
    if not isinstance(stored, str):
        return False
    text, piece = stored.lower(), piece.lower()
    return (
        text.startswith(piece)
        if op == "prefix"
        else text.endswith(piece)
        if op == "suffix"
        else piece in text
    )


async def check_listing(ck: Checker, tool: ToolDef, base: dict[str, Any], checks: list[str]) -> ListTally:
    """Run the checks of every declared parameter of one implemented list/search tool."""
    left = unaccounted(tool)
    if left:
        raise CheckFailure(f"list parameters neither bound nor refused: {', '.join(left)}")
    entity = ck.rt.manifest.entity(tool.entity or "")
    assert entity is not None
    check = _ListCheck(ck, tool, entity, base)
    listing = tool.listing or ListBinding()
    tally = check.tally
    scoped = set(base)
    for arg, column in sorted(tool.arg_columns.items()):
        if arg in scoped or arg == tool.pk_arg:
            continue
        tally.declared += 1
        tally.verified += await check.equality(arg, column)
    for arg, flt in sorted(listing.filters.items()):
        tally.declared += 1
        tally.verified += await check.filtered(arg, flt)
    if listing.sort_arg:
        tally.declared += 1
        tally.verified += await check.sorted_by(listing.sort_arg)
    paging = [a for a in (tool.limit_arg, tool.offset_arg, listing.cursor_arg) if a and a not in scoped]
    if paging:
        tally.declared += len(paging)
        tally.verified += len(paging) if await check.paged() else 0
    for arg in sorted(listing.refused):
        tally.declared += 1
        tally.refused += await check.refused(arg)
    if tool.search_arg and tool.search_arg not in scoped:
        tally.declared += 1
        tally.verified += await check.searched(tool.search_arg)
    if listing.expressions is not None:
        tally.declared += 1
        tally.verified += await check.expressed(listing.expressions)
    if listing.order_arg and listing.order_arg not in scoped:
        tally.declared += 1
        tally.verified += await check.ordered(listing.order_arg)
    if listing.before_arg and listing.before_arg not in scoped:
        tally.declared += 1
    tally.untested = tally.declared - tally.verified - tally.refused
    checks.append(
        f"list parameters: {tally.verified} verified, {tally.refused} refused, {tally.untested} untested"
    )
    return tally
