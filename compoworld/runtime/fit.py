"""Fitting a stored value to the schema a body declares for it, compiled once per field.

``compile_fit(schema)`` returns a function (or None: the value fits as it is) that re-spells a value
without changing what it means (its JSON type, an enum member's case, a timestamp's ISO form) and,
with ``repair`` (the contents of a JSON column: filler rather than facts), replaces a value the
schema cannot hold. ``FieldFit`` and ``object_fit`` fit one object's declared properties.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import Callable
from typing import Any

from compoworld.patterns import compile_pattern, schema_validator
from compoworld.runtime.schema_read import constant_of, default_value, schema_props, schema_types
from compoworld.seeding import derive_seed
from compoworld.values import fit_string

__all__ = ["CONSTRAINTS", "MAX_DEPTH", "FieldFit", "Fit", "compile_fit", "is_open", "object_fit", "open_fit"]

Fit = Callable[[Any], Any]
MAX_DEPTH = 8
#: Keywords a stored scalar may break even when its JSON type is right.
CONSTRAINTS = frozenset(
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


class FieldFit:
    """One declared property of an object being fitted: where its value comes from, how it fits."""

    __slots__ = ("default", "fit", "key", "nullable", "required", "source")

    def __init__(
        self, key: str, source: str, schema: dict[str, Any], required: bool, depth: int, repair: bool = True
    ) -> None:
        self.key = key
        self.source = source
        self.fit = compile_fit(schema, key, depth + 1, repair=repair)
        self.nullable = schema_types(schema)[1]
        self.required = required
        self.default: Callable[[], Any] | None = constant_of(default_value(schema, key)) if required else None


def object_fit(entries: list[FieldFit], extra: list[tuple[str, str]] | None) -> Fit:
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


def variant_fit(schema: dict[str, Any], fit: Fit) -> Fit:
    """An object answer whose schema is a union of object variants (``oneOf: [{required: [uri,
    mimeType]}, ...]``): fitted over the variants' united properties, then, where no variant accepts
    it, completed to the variant whose required fields it holds most of, each missing one given
    the fixed default any required field state has nothing for gets. ``fit`` itself where the
    schema is no such union."""
    variants = [v for v in (schema.get("oneOf") or schema.get("anyOf") or []) if isinstance(v, dict)]
    whole = schema_validator(schema) if variants and "properties" not in schema else None
    if whole is None:
        return fit
    shapes = [schema_props(v) for v in variants]
    if not all(props for props, _ in shapes):
        return fit

    def complete(value: Any) -> Any:
        out = fit(value)
        if not isinstance(out, dict):
            return out
        try:
            if whole.is_valid(out):
                return out
        except Exception:  # an ECMA-only pattern: trust the value
            return out
        props, required = max(shapes, key=lambda shape: sum(1 for r in shape[1] if r in out))
        return {**out, **{r: default_value(props.get(r) or {}, r) for r in required if r not in out}}

    return complete


def is_open(schema: dict[str, Any]) -> bool:
    """Whether an object schema admits properties it does not declare."""
    extra = schema.get("additionalProperties")
    return extra is True or (isinstance(extra, dict) and bool(extra))


def open_fit(entries: list[FieldFit]) -> Fit:
    """Fit an object that admits undeclared keys: declared ones fitted, the rest kept (nulls dropped)."""
    declared = object_fit(entries, None)
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
        or depth > MAX_DEPTH
        or schema.get("x-truncated")
        or schema.get("x-recursive")
    ):
        return None
    types, _ = schema_types(schema)
    variants = [v for v in (schema.get("anyOf") or schema.get("oneOf") or []) if isinstance(v, dict)]
    if variants and "properties" not in schema:
        return _union_fit(schema, variants, name, depth)
    if types == {"array"} or ("items" in schema and not types):
        return _array_fit(schema, name, depth)
    props, required = schema_props(schema)
    if props and (not types or "object" in types):
        entries = [FieldFit(k, k, sub, k in required, depth) for k, sub in props.items()]
        return object_fit(entries, None) if not is_open(schema) else open_fit(entries)
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
    filler = constant_of(default_value(items, name)) if low else None
    if item_fit is None and not (low or high is not None or unique):
        text_fit = _json_text_fit({"array"})
        assert text_fit is not None

        def plain(v: Any) -> Any:
            v = text_fit(v)
            return [v] if _one_item(v) else v

        return plain

    def fit(v: Any) -> Any:
        if isinstance(v, str) and v.startswith("["):
            try:
                v = json.loads(v)
            except ValueError:
                return v
        if _one_item(v):
            v = [v]
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


def _one_item(v: Any) -> bool:
    """A scalar where a list belongs (a spec whose request takes one or many, answering many):
    answered as the list of that one item, which means the same."""
    return v is not None and not isinstance(v, list | dict)


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
    integer = "integer" in schema_types(schema)[0]
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
    seed = derive_seed(f"fit:{name}")

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
