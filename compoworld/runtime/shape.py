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

import contextlib
import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from compoworld.manifest import EntityDef, ResponseShape, ToolDef
from compoworld.patterns import compile_pattern, schema_validator
from compoworld.values import fit_string

__all__ = ["Fit", "Page", "Shaper", "compile_fit", "default_value"]

Fit = Callable[[Any], Any]
_MAX_DEPTH = 8
#: Keywords a stored scalar may break even when its JSON type is right.
_CONSTRAINTS = frozenset(
    {
        "enum",
        "const",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    }
)
_TRUE_FLAGS = frozenset({"success", "ok", "deleted", "done", "result", "succeeded", "successful", "valid"})
_STATUS_KEYS = frozenset({"status", "statuscode", "code", "httpstatus", "httpstatuscode", "httpcode"})
_MESSAGE_KEYS = frozenset(
    {"message", "detail", "details", "errordescription", "description", "title", "errormessage", "msg"}
    | {"reason", "error", "errortext", "text"}
)
_CODE_KEYS = frozenset({"code", "errorcode", "type", "typename", "errortype", "name", "kind", "key"})
_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _types(schema: dict[str, Any]) -> tuple[set[str], bool]:
    """The JSON types a schema names (through anyOf/oneOf), and whether it explicitly allows null."""
    raw = schema.get("type")
    types = (
        {raw}
        if isinstance(raw, str)
        else {t for t in raw if isinstance(t, str)}
        if isinstance(raw, list)
        else set()
    )
    nullable = "null" in types or schema.get("nullable") is True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        nullable = True
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict):
                sub_types, sub_null = _types(sub)
                types |= sub_types
                nullable = nullable or sub_null
    types.discard("null")
    return types, nullable


def _props(schema: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Properties (allOf members and object variants of anyOf/oneOf united) and required names."""
    props: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    own = schema.get("properties")
    if isinstance(own, dict):
        props.update({k: v for k, v in own.items() if isinstance(v, dict)})
    if isinstance(schema.get("required"), list):
        required += [r for r in schema["required"] if isinstance(r, str)]
    for sub in schema.get("allOf") or []:
        if isinstance(sub, dict):
            inner, inner_required = _props(sub)
            props.update(inner)
            required += inner_required
    for key in ("anyOf", "oneOf"):
        variants = [v for v in schema.get(key) or [] if isinstance(v, dict)]
        for variant in variants:
            inner, _ = _props(variant)
            for name, sub in inner.items():
                props.setdefault(name, sub)
    if props:
        for name in required:  # required but never described: any value will do
            props.setdefault(name, {})
    return props, list(dict.fromkeys(required))


def default_value(schema: dict[str, Any], name: str) -> Any:
    """A fixed, schema-valid value for a required field state has nothing for (same name, same value)."""
    if "const" in schema:
        return schema["const"]
    enum = (
        [v for v in schema.get("enum") or [] if v is not None] if isinstance(schema.get("enum"), list) else []
    )
    if enum:
        return enum[0]
    types, _ = _types(schema)
    if types == {"boolean"}:
        return _key(name) in _TRUE_FLAGS
    from compoworld.runtime.world import generate_value  # world -> ops -> shape: import when first needed

    seed = int.from_bytes(hashlib.sha256(f"default:{name}".encode()).digest()[:8], "big")
    return _without_nulls(generate_value(schema, random.Random(seed), name))


def _without_nulls(value: Any) -> Any:
    """A generated value without the nulls the generator leaves where it stops descending."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value if v is not None]
    return value


def _scalar_fit(types: set[str]) -> Fit | None:
    """Coerce a stored scalar to the declared JSON type (an integer key the spec types as a string)."""
    if not types or ("string" in types and len(types) > 1):
        return None
    if types == {"string"}:

        def to_string(v: Any) -> Any:
            if isinstance(v, str):
                return v
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, (int, float)):
                return str(v)
            return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

        return to_string
    if types <= {"integer", "number"}:
        integer = types == {"integer"}

        def to_number(v: Any) -> Any:
            if isinstance(v, bool):
                return int(v)
            if isinstance(v, float) and integer:  # a number column the spec answers as an integer
                return round(v)
            if isinstance(v, str):
                try:
                    return int(v) if integer else float(v) if "." in v or "e" in v.lower() else int(v)
                except ValueError:
                    return v
            return v

        return to_number
    if types == {"boolean"}:

        def to_bool(v: Any) -> Any:
            if isinstance(v, bool):
                return v
            if isinstance(v, (int, float)):
                return bool(v)
            if isinstance(v, str) and v.lower() in ("true", "false", "1", "0"):
                return v.lower() in ("true", "1")
            return v

        return to_bool
    return None


class _Entry:
    """One declared property of an object being fitted: where its value comes from, how it fits."""

    __slots__ = ("default", "fit", "key", "nullable", "required", "source")

    def __init__(
        self, key: str, source: str, schema: dict[str, Any], required: bool, depth: int, repair: bool = True
    ) -> None:
        self.key = key
        self.source = source
        self.fit = compile_fit(schema, key, depth + 1, repair=repair)
        self.nullable = _types(schema)[1]
        self.required = required
        self.default: Callable[[], Any] | None = (
            _constant_of(default_value(schema, key)) if required else None
        )


def _constant_of(value: Any) -> Callable[[], Any]:
    """A maker of ``value`` (a fresh copy each time when it is mutable)."""
    if isinstance(value, (dict, list)):
        text = json.dumps(value)
        return lambda: json.loads(text)
    return lambda: value


def _object_fit(entries: list[_Entry], extra: list[tuple[str, str]] | None) -> Fit:
    """Fit an object: declared properties in, undeclared ones out (``extra``: (source, key) kept too)."""

    def fit(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for e in entries:
            v = value.get(e.source)
            if v is None:
                if e.nullable and e.source in value:
                    out[e.key] = None
                elif e.default is not None:
                    out[e.key] = e.default()
                continue
            out[e.key] = e.fit(v) if e.fit is not None else v
        if extra:
            for source, key in extra:
                v = value.get(source)
                if v is not None and key not in out:
                    out[key] = v
        return out

    return fit


def _open(schema: dict[str, Any]) -> bool:
    """Whether an object schema admits properties it does not declare."""
    extra = schema.get("additionalProperties")
    return extra is True or (isinstance(extra, dict) and bool(extra))


def _open_fit(entries: list[_Entry]) -> Fit:
    """Fit an object that admits undeclared keys: declared ones fitted, the rest kept (nulls dropped)."""
    declared = _object_fit(entries, None)
    known = {e.source for e in entries}

    def fit(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = declared(value)
        for k, v in value.items():
            if k not in known and v is not None:
                out[k] = v
        return out

    return fit


def compile_fit(schema: Any, name: str = "", depth: int = 0, *, repair: bool = True) -> Fit | None:
    """A function that makes a stored value fit ``schema`` (None: the value fits as it is).

    It always re-spells a value without changing what it means (its JSON type, an enum member's
    case, a timestamp's ISO form). With ``repair`` (the contents of a JSON column, filler rather
    than facts) it also replaces a value the schema cannot hold: a bound, a pattern sample, the
    enum's first member. A scalar column's value is never replaced: the checker reports it.
    """
    if (
        not isinstance(schema, dict)
        or depth > _MAX_DEPTH
        or schema.get("x-truncated")
        or schema.get("x-recursive")
    ):
        return None
    types, _ = _types(schema)
    variants = [v for v in (schema.get("anyOf") or schema.get("oneOf") or []) if isinstance(v, dict)]
    if variants and "properties" not in schema:
        return _union_fit(schema, variants, name, depth)
    if types == {"array"} or ("items" in schema and not types):
        return _array_fit(schema, name, depth)
    props, required = _props(schema)
    if props and (not types or "object" in types):
        entries = [_Entry(k, k, sub, k in required, depth) for k, sub in props.items()]
        return _object_fit(entries, None) if not _open(schema) else _open_fit(entries)
    if "const" in schema:
        const = schema["const"]
        return lambda v: const  # the spec allows one value: state cannot mean another
    fits = [
        f
        for f in (
            _scalar_fit(types),
            _json_text_fit(types),
            _bounds_fit(schema) if repair else None,
            _text_fit(schema, name, repair),
        )
        if f
    ]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        fits.append(_enum_fit(schema["enum"], repair))
    return _chain(fits)


def _union_fit(schema: dict[str, Any], variants: list[dict[str, Any]], name: str, depth: int) -> Fit | None:
    """A value of an ``anyOf``/``oneOf``: kept when a variant accepts it, else fitted to the first variant
    that accepts it fitted (a phone list kept as JSON text, an empty object given a variant's keys)."""
    whole = schema_validator(schema)
    checks = [(schema_validator(v), compile_fit(v, name, depth + 1)) for v in variants]
    if whole is None or any(check is None for check, _ in checks):
        return None

    def valid(check: Any, value: Any) -> bool:
        try:
            return bool(check.is_valid(value))
        except Exception:  # an ECMA-only pattern: trust the value
            return True

    def fit(v: Any) -> Any:
        if v is None or valid(whole, v):
            return v
        candidates = [v]
        if isinstance(v, str) and v[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                candidates.insert(0, json.loads(v))
        for candidate in candidates:
            for check, variant_fit in checks:
                fitted = variant_fit(candidate) if variant_fit is not None else candidate
                if valid(check, fitted):
                    return fitted
        return v

    return fit


def _chain(fits: list[Fit]) -> Fit | None:
    if not fits:
        return None
    if len(fits) == 1:
        return fits[0]

    def fit(v: Any) -> Any:
        for f in fits:
            v = f(v)
        return v

    return fit


def _array_fit(schema: dict[str, Any], name: str, depth: int) -> Fit | None:
    """Items fitted, JSON text of a list read as the list, item-count bounds and uniqueness kept."""
    item_fit = compile_fit(schema.get("items"), name, depth + 1)
    raw_low, raw_high = schema.get("minItems"), schema.get("maxItems")
    low: int = raw_low if isinstance(raw_low, int) else 0
    high: int | None = raw_high if isinstance(raw_high, int) else None
    unique = schema.get("uniqueItems") is True
    raw_items = schema.get("items")
    items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
    filler = _constant_of(default_value(items, name)) if low else None
    if item_fit is None and not (low or high is not None or unique):
        return _json_text_fit({"array"})

    def fit(v: Any) -> Any:
        if isinstance(v, str) and v.startswith("["):
            try:
                v = json.loads(v)
            except ValueError:
                return v
        if not isinstance(v, list):
            return v
        out = [item_fit(x) for x in v] if item_fit is not None else list(v)
        if unique:
            kept: list[Any] = []
            seen: set[str] = set()
            for x in out:
                text = json.dumps(x, sort_keys=True, default=str)
                if text not in seen:
                    seen.add(text)
                    kept.append(x)
            out = kept
        if high is not None:
            out = out[:high]
        while filler is not None and len(out) < low:
            extra = filler()
            if unique and any(extra == x for x in out):
                break
            out.append(extra)
        return out

    return fit


def _json_text_fit(types: set[str]) -> Fit | None:
    """A list or object that typed state keeps as JSON text (a text column) read back as itself."""
    if "string" in types or not types & {"array", "object"}:
        return None

    def fit(v: Any) -> Any:
        if isinstance(v, str) and v[:1] in ("[", "{"):
            try:
                return json.loads(v)
            except ValueError:
                return v
        return v

    return fit


def _bounds_fit(schema: dict[str, Any]) -> Fit | None:
    """A number outside the declared range answers the nearest bound."""
    low, high = schema.get("minimum"), schema.get("maximum")
    xlow, xhigh = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    bounds = [b for b in (low, high, xlow, xhigh) if isinstance(b, (int, float)) and not isinstance(b, bool)]
    if not bounds:
        return None
    integer = "integer" in _types(schema)[0]
    step = 1 if integer else 0.01

    def fit(v: Any) -> Any:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return v
        if isinstance(low, (int, float)) and v < low:
            v = low
        if isinstance(xlow, (int, float)) and not isinstance(xlow, bool) and v <= xlow:
            v = xlow + step
        if isinstance(high, (int, float)) and v > high:
            v = high
        if isinstance(xhigh, (int, float)) and not isinstance(xhigh, bool) and v >= xhigh:
            v = xhigh - step
        return v

    return fit


def _text_fit(schema: dict[str, Any], name: str, repair: bool) -> Fit | None:
    """A string outside the declared pattern or length: a timestamp re-spelled, else a value that fits."""
    pattern = schema.get("pattern")
    low, high = schema.get("minLength"), schema.get("maxLength")
    if not isinstance(pattern, str) and not isinstance(low, int) and not isinstance(high, int):
        return None
    compiled = compile_pattern(pattern) if isinstance(pattern, str) else None  # None: lengths only
    seed = int.from_bytes(hashlib.sha256(f"fit:{name}".encode()).digest()[:8], "big")

    def fit(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        ok = (compiled is None or compiled.search(v) is not None) and not (
            (isinstance(low, int) and len(v) < low) or (isinstance(high, int) and len(v) > high)
        )
        if ok:
            return v
        if compiled is not None:
            for variant in _timestamp_variants(v):
                if compiled.search(variant):
                    return variant
        return fit_string(v, schema, random.Random(seed)) if repair else v

    return fit


def _timestamp_variants(value: str) -> list[str]:
    """Other ISO 8601 spellings of a timestamp (``...T12:00:00Z`` as ``...T12:00:00.000Z``, ``+00:00``)."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?", value)
    if match is None:
        return []
    day, clock, frac, zone = match.group(1), match.group(2), match.group(3) or "", match.group(4) or ""
    out = []
    for f in (frac, ".000", ".000000", ""):
        for z in (zone, "Z", "+00:00", "+0000", ""):
            out.append(f"{day}T{clock}{f}{z}")
    out.append(day)
    return out


def _enum_fit(enum: list[Any], repair: bool) -> Fit:
    """A stored value spelled differently from the enum (``Active`` for ``active``) answers the enum's
    member; with ``repair``, one the enum cannot hold at all answers its first member."""
    allowed = {json.dumps(v) for v in enum}
    by_text = {str(v).lower(): v for v in enum if v is not None}
    first = next((v for v in enum if v is not None), enum[0])

    def fit(v: Any) -> Any:
        if json.dumps(v) in allowed:
            return v
        return by_text.get(str(v).lower(), first if repair else v)

    return fit


class Page:
    """What a list call found: the page, and the arguments that fetch its neighbours."""

    __slots__ = ("args", "limit", "next_args", "offset", "prev_args", "total")

    def __init__(
        self,
        total: int,
        limit: int,
        offset: int,
        *,
        next_args: dict[str, Any] | None = None,
        prev_args: dict[str, Any] | None = None,
        args: dict[str, Any] | None = None,
    ) -> None:
        self.total = total
        self.limit = limit
        self.offset = offset
        self.next_args = next_args
        self.prev_args = prev_args
        self.args = args or {}


_Slot = Callable[[Any, "Page | None", int], Any]
_Url = Callable[["Page", dict[str, Any]], str]
_MISSING: Any = object()


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
            node = _props(node)[0].get(key, {}) if isinstance(node, dict) else {}
        row_schema = (node.get("items") if self.shape.many else node) if isinstance(node, dict) else None
        self._row = self._row_fit(row_schema, entity)
        self._body = _compile_body(
            schema, list(self.shape.rows_at), self.shape.paging, self.status, self._url
        )
        self._error = _compile_error(self.shape.error_schema) if self.shape.error_schema else None
        self._pk = entity.pk if entity is not None else None

    def _row_fit(self, row_schema: Any, entity: EntityDef | None) -> Fit:
        fields = dict(self.shape.fields)
        if entity is not None and not fields:
            fields = {c.name: c.source_name or c.name for c in entity.columns}
        props, required = _props(row_schema) if isinstance(row_schema, dict) else ({}, [])
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
            entries.append(_Entry(key, source, sub, key in required, 0, repair=repair))
        if entity is not None:
            for e in entries:  # a stored value of the column's own type needs no coercion
                column = entity.column(e.source)
                sub = props[e.key]
                if column is None or column.type == "json" or e.fit is None or _CONSTRAINTS & set(sub):
                    continue
                if {column.type} == _types(sub)[0]:
                    e.fit = None
        extra = None
        if isinstance(row_schema, dict) and _open(row_schema):
            extra = [(col, key) for col, key in fields.items() if key not in props]
        return _object_fit(entries, extra)

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
                path = path.replace("{" + name + "}", str(text))
            elif where == "query" and value is not None:
                query.append((tool.wire_names.get(name, name), str(text)))
        return path + ("?" + urlencode(query) if query else "")


def _is_link(key: str, schema: dict[str, Any]) -> bool:
    k = _key(key)
    return str(schema.get("format") or "") in ("uri", "url", "uri-reference") or any(
        w in k for w in ("url", "link", "href", "uri")
    )


def _page_value(role: str, key: str, schema: dict[str, Any], page: Page | None, count: int, url: _Url) -> Any:
    """The value of one paging field (``_MISSING``: leave it out; None: there is no such page)."""
    if page is None:
        return _MISSING
    if role == "total":
        return page.total
    if role == "count":
        return count
    if role == "limit":
        return page.limit
    if role == "offset":
        return page.offset
    if role == "page":
        return page.offset // max(page.limit, 1) + 1
    if role == "pages":
        return -(-page.total // max(page.limit, 1))
    if role == "has_more":
        return page.next_args is not None or page.offset + count < page.total
    wanted = page.next_args if role == "next" else page.prev_args
    if wanted is None:
        return None
    types, _ = _types(schema)
    if types and types <= {"integer", "number"}:
        numbers = [v for v in wanted.values() if isinstance(v, int) and not isinstance(v, bool)]
        return numbers[0] if len(numbers) == 1 else None
    if _is_link(key, schema) or len(wanted) != 1:
        return url(page, {**page.args, **wanted})
    (value,) = wanted.values()
    return str(value)


def _compile_body(
    schema: Any,
    rows_at: list[str] | None,
    paging: dict[str, str],
    status: int,
    url: _Url,
    path: tuple[str, ...] = (),
) -> _Slot:
    """A builder of the body, or of one level of it, around the already fitted rows.

    ``rows_at`` is the rest of the path to the rows below this level (None: not below it).
    """
    if rows_at is not None and not rows_at:
        return lambda payload, page, count: payload
    props, required = _props(schema) if isinstance(schema, dict) else ({}, [])
    slots: list[tuple[str, _Slot]] = []
    for key, sub in props.items():
        here = (*path, key)
        dotted = ".".join(here)
        if rows_at and key == rows_at[0]:
            slots.append((key, _compile_body(sub, rows_at[1:], paging, status, url, here)))
        elif dotted in paging:
            slots.append((key, _paging_slot(paging[dotted], key, sub, key in required, url)))
        elif len(here) < _MAX_DEPTH and any(p.startswith(dotted + ".") for p in paging):
            slots.append((key, _compile_body(sub, None, paging, status, url, here)))
        elif key in required:
            slots.append((key, _constant(_envelope_default(sub, key, status))))
    return _object_slot(slots)


def _object_slot(slots: list[tuple[str, _Slot]]) -> _Slot:
    def build(payload: Any, page: Page | None, count: int) -> Any:
        out: dict[str, Any] = {}
        for key, slot in slots:
            value = slot(payload, page, count)
            if value is not _MISSING:
                out[key] = value
        return out

    return build


def _constant(value: Any) -> _Slot:
    if isinstance(value, (dict, list)):
        text = json.dumps(value)
        return lambda payload, page, count: json.loads(text)
    return lambda payload, page, count: value


def _paging_slot(role: str, key: str, schema: dict[str, Any], required: bool, url: _Url) -> _Slot:
    _, nullable = _types(schema)
    fit = compile_fit(schema, key)
    fallback = default_value(schema, key) if required else _MISSING

    def slot(payload: Any, page: Page | None, count: int) -> Any:
        value = _page_value(role, key, schema, page, count, url)
        if value is _MISSING:
            return fallback
        if value is None:
            return None if nullable else fallback
        return fit(value) if fit is not None else value

    return slot


def _envelope_default(schema: dict[str, Any], key: str, status: int) -> Any:
    """A required envelope field off the rows' path: the HTTP status, a success flag, or a default."""
    types, _ = _types(schema)
    k = _key(key)
    if k in _STATUS_KEYS and types <= {"integer", "number"} and types and "enum" not in schema:
        return status
    if k == "status" and types == {"string"} and "enum" not in schema and "pattern" not in schema:
        return "OK"
    return default_value(schema, key)


def _compile_error(schema: dict[str, Any]) -> Callable[[str, str, int], Any]:
    """A builder of the spec's error body: message, code and status where its fields name them."""

    def build(node: dict[str, Any], code: str, message: str, status: int, depth: int) -> Any:
        types, _ = _types(node)
        if types == {"array"} and isinstance(node.get("items"), dict) and depth < 4:
            return [build(node["items"], code, message, status, depth + 1)]
        props, required = _props(node)
        if not props:
            return message if types == {"string"} else default_value(node, "error")
        out: dict[str, Any] = {}
        for key, sub in props.items():
            k = _key(key)
            sub_types, _ = _types(sub)
            if (
                sub_types <= {"object", "array"}
                and sub_types
                and depth < 4
                and k in ("error", "errors", "detail", "details")
            ):
                out[key] = build(sub, code, message, status, depth + 1)
            elif k in _STATUS_KEYS and sub_types <= {"integer", "number"} and sub_types and "enum" not in sub:
                out[key] = status
            elif k in ("status", "statustext") and sub_types == {"string"} and "enum" not in sub:
                out[key] = _REASONS.get(status, "Error")
            elif k in _MESSAGE_KEYS and sub_types == {"string"} and "enum" not in sub:
                out[key] = message
            elif k in _CODE_KEYS and sub_types == {"string"} and "enum" not in sub:
                out[key] = code
            elif key in required:
                out[key] = default_value(sub, key)
        return out

    return lambda code, message, status: build(schema, code, message, status, 0)
