"""Fast argument validation compiled from a tool's JSON schema.

A tool call validates its flat arguments on every call, so the check is compiled once
per tool into a list of per-field closures (type, enum, required, unknown fields); nested
objects and arrays with their own structure fall back to a compiled ``jsonschema``
validator. Errors name the field, so the agent can act on them.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Callable
from typing import Any

from jsonschema import FormatChecker
from jsonschema.protocols import Validator

from compoworld.patterns import SchemaValidator, first_error

__all__ = ["ArgsValidator", "ArgumentError", "coerce_text", "json_schema_nullable", "shapes_typed"]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


class ArgumentError(ValueError):
    """Invalid tool arguments; ``field`` names the offending argument."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


def _types_of(schema: dict[str, Any]) -> tuple[set[str], bool]:
    """JSON types a schema admits, and whether null is allowed."""
    raw = schema.get("type")
    types: set[str] = set()
    if isinstance(raw, str):
        types.add(raw)
    elif isinstance(raw, list):
        types.update(t for t in raw if isinstance(t, str))
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict):
                sub_types, _ = _types_of(sub)
                types.update(sub_types)
    nullable = bool(schema.get("nullable")) or "null" in types
    types.discard("null")
    return types, nullable


def _is_type(value: Any, types: set[str]) -> bool:
    if not types:
        return True
    for name in types:
        expected = _JSON_TYPES.get(name)
        if expected is None:
            return True
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return True
        if isinstance(value, expected):
            return True
    return False


_DEEP_KEYS = (
    "properties",
    "items",
    "required",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "const",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "uniqueItems",
)


_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains")


def json_schema_nullable(schema: Any, *, drop_keyword: bool = False) -> Any:
    """The schema with OpenAPI's ``nullable: true`` said the JSON Schema way (``null`` among the
    types, and in the enum), at every depth: jsonschema ignores ``nullable``, so a nested nullable
    field would refuse the ``null`` its spec allows. With ``drop_keyword`` the OpenAPI keyword
    itself goes too (the schemas agents are shown: OpenAI tool schemas and MCP's inputSchema are
    JSON Schema, where ``nullable`` means nothing)."""
    if isinstance(schema, list):
        return [json_schema_nullable(s, drop_keyword=drop_keyword) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: json_schema_nullable(v, drop_keyword=drop_keyword) for k, v in out[key].items()}
    for key in (*_SUBSCHEMA_LISTS, *_SUBSCHEMA_ONE):
        if key in out:
            out[key] = json_schema_nullable(out[key], drop_keyword=drop_keyword)
    nullable = out.pop("nullable", None) if drop_keyword else out.get("nullable")
    if nullable is True:
        raw = out.get("type")
        if isinstance(raw, str) and raw != "null":
            out["type"] = [raw, "null"]
        elif isinstance(raw, list) and "null" not in raw:
            out["type"] = [*raw, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        for key in ("anyOf", "oneOf"):
            if isinstance(out.get(key), list) and not any(
                isinstance(s, dict) and s.get("type") == "null" for s in out[key]
            ):
                out[key] = [*out[key], {"type": "null"}]
    return out


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# RFC 3339, read leniently as agents write it: the seconds and the offset optional, or a bare day
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")


def _is_date(text: str) -> bool:
    try:
        return bool(_DATE.fullmatch(text)) and bool(dt.date.fromisoformat(text))
    except ValueError:
        return False


def _is_date_time(text: str) -> bool:
    if not _DATE_TIME.fullmatch(text):
        return False
    try:
        dt.datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:  # a month 13, a minute 99
        return False
    return True


#: The string formats a call's top-level arguments are held to (what the service stores or filters
#: on must be a real date, timestamp or address); other formats stay annotations.
FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _is_date,
    "date-time": _is_date_time,
    "email": lambda text: bool(_EMAIL.fullmatch(text)),
}


_FORMAT_CHECKER = FormatChecker(formats=())
for _name, _ok in FORMATS.items():
    _FORMAT_CHECKER.checks(_name)(lambda v, ok=_ok: not isinstance(v, str) or ok(v))


@functools.lru_cache(maxsize=4096)
def _cached(key: str) -> Validator:
    return SchemaValidator(json.loads(key), format_checker=_FORMAT_CHECKER)


def _deep_validator(schema: dict[str, Any]) -> Validator | None:
    """The compiled check of an argument's nested structure, its string formats (``FORMATS``) held
    at every depth; None when the schema cannot be serialised."""
    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return None
    return _cached(key)


def _walk(schema: dict[str, Any], each: Callable[[Any], Any]) -> dict[str, Any]:
    """``schema`` with ``each`` applied to its subschemas (a map of them, like ``properties``, is
    mapped by value: a property may be called ``items`` or ``oneOf``); other keywords kept."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: each(v) for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS or key in _SUBSCHEMA_ONE:
            out[key] = each(value)
        else:
            out[key] = value
    return out


def shapes_typed(schema: Any) -> Any:
    """A schema whose ``properties`` or ``items`` imply its type (an untyped object, an untyped
    list) says it, at every depth: JSON Schema would let a number stand for an object there."""
    if isinstance(schema, list):
        return [shapes_typed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = _walk(schema, shapes_typed)
    if not any(k in out for k in ("type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref")):
        kind = "object" if isinstance(out.get("properties"), dict) else "array" if "items" in out else None
        if kind is not None:
            out["type"] = [kind, "null"] if out.get("nullable") is True else kind
    width = _WIDTHS.get(out["format"]) if isinstance(out.get("format"), str) else None
    if width is not None and out.get("type") in ("integer", "number"):  # an int32 is bounded so
        out.setdefault("minimum", width[0])
        out.setdefault("maximum", width[1])
    return out


def _one_of_as_any_of(schema: Any) -> Any:
    """``oneOf`` read as ``anyOf``, at every depth: a value must fit one of the alternatives, but a
    spec's alternatives often overlap (an object fitting two), and a call is never refused for that."""
    if isinstance(schema, list):
        return [_one_of_as_any_of(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = _walk(schema, _one_of_as_any_of)
    if "oneOf" in out and "anyOf" not in out:
        out["anyOf"] = out.pop("oneOf")
    return out


_WIDTHS: dict[str, tuple[int, int]] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}


def _needs_deep_check(schema: dict[str, Any]) -> bool:
    """Constraints beyond type and enum (nested structure, ranges, lengths, patterns)."""
    return any(k in schema for k in _DEEP_KEYS)


def _numeric_bounds(schema: Any) -> Any:
    """OpenAPI 3.0's boolean ``exclusiveMinimum: true`` (beside ``minimum: 0``) as JSON Schema's numeric
    bound, at every depth: jsonschema reads ``true`` as the number 1 and would refuse ``limit: 1``."""
    if isinstance(schema, list):
        return [_numeric_bounds(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(out.get(key), bool):
            flag = out.pop(key)
            if flag and isinstance(out.get(bound), (int, float)) and not isinstance(out[bound], bool):
                out[key] = out.pop(bound)
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: _numeric_bounds(v) for k, v in out[key].items()}
    for key in (*_SUBSCHEMA_LISTS, *_SUBSCHEMA_ONE):
        if key in out:
            out[key] = _numeric_bounds(out[key])
    return out


def _field_check(name: str, schema: dict[str, Any]) -> Callable[[Any], None]:
    types, nullable = _types_of(schema)
    enum: list[Any] = schema["enum"] if isinstance(schema.get("enum"), list) else []
    enum_set = {repr(v) for v in enum} if enum else None
    # an upstream schema quirk (an invalid schema) leaves the type and enum checks standing
    deep = (
        _deep_validator(shapes_typed(_one_of_as_any_of(json_schema_nullable(_numeric_bounds(schema)))))
        if _needs_deep_check(schema)
        else None
    )
    type_label = " or ".join(sorted(types)) or "any"
    fmt = schema.get("format")
    fmt_ok = FORMATS.get(fmt) if isinstance(fmt, str) and "string" in types else None
    # an integer's declared width bounds it (schemathesis, and the real API, read int32 so)
    width = _WIDTHS.get(fmt) if isinstance(fmt, str) and types & {"integer", "number"} else None

    def check(value: Any) -> None:
        if value is None:
            if nullable or not types:
                return
            raise ArgumentError(name, f"argument '{name}' must not be null (expected {type_label})")
        if not _is_type(value, types):
            raise ArgumentError(name, f"argument '{name}' must be {type_label}, got {type(value).__name__}")
        if width is not None and isinstance(value, int) and not width[0] <= value <= width[1]:
            raise ArgumentError(name, f"argument '{name}' is out of range for {fmt}")
        if fmt_ok is not None and isinstance(value, str) and not fmt_ok(value):
            raise ArgumentError(name, f"argument '{name}' must be a {fmt} (got {value[:40]!r})")
        if enum_set is not None and repr(value) not in enum_set:
            allowed = ", ".join(repr(v) for v in enum[:12])
            raise ArgumentError(name, f"argument '{name}' must be one of: {allowed}")
        if deep is not None:
            error = first_error(deep, value)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path)
                label = f"{name}/{where}" if where else name
                raise ArgumentError(name, f"argument '{label}': {error.message[:200]}")

    return check


class ArgsValidator:
    """Validates the flat argument object of one tool."""

    def __init__(self, schema: dict[str, Any]) -> None:
        props = schema.get("properties") or {}
        self.properties: dict[str, dict[str, Any]] = {k: v for k, v in props.items() if isinstance(v, dict)}
        self.required: tuple[str, ...] = tuple(
            r for r in schema.get("required") or [] if r in self.properties
        )
        self.allow_extra = schema.get("additionalProperties", False) is not False
        self._checks = {k: _field_check(k, v) for k, v in self.properties.items()}

    def __call__(self, args: Any) -> dict[str, Any]:
        if not isinstance(args, dict):
            raise ArgumentError(None, f"arguments must be a JSON object, got {type(args).__name__}")
        for name in self.required:
            if name not in args:
                raise ArgumentError(name, f"missing required argument '{name}'")
        checks = self._checks
        for key, value in args.items():
            check = checks.get(key)
            if check is None:
                if self.allow_extra:
                    continue
                known = ", ".join(sorted(self.properties)[:20]) or "none"
                raise ArgumentError(key, f"unknown argument '{key}' (known: {known})")
            check(value)
        return args

    def coerce_strings(self, raw: dict[str, str]) -> dict[str, Any]:
        """Turn path/query strings into the JSON types the schema asks for (REST routes)."""
        out: dict[str, Any] = {}
        for key, value in raw.items():
            schema = self.properties.get(key)
            out[key] = coerce_text(value, schema) if schema is not None else value
        return out


def json_text(value: Any) -> str:
    """A scalar as it travels in a URL or form (``true``, ``1``, ``a``)."""
    return "true" if value is True else "false" if value is False else str(value)


_NUMERAL = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def _fits_string(value: str, schema: dict[str, Any]) -> bool:
    """Whether ``value`` meets the schema's string-only keywords (length, pattern)."""
    low, high, pattern = schema.get("minLength"), schema.get("maxLength"), schema.get("pattern")
    if (isinstance(low, int) and len(value) < low) or (isinstance(high, int) and len(value) > high):
        return False
    if isinstance(pattern, str):
        try:
            return re.search(pattern, value) is not None
        except re.error:
            return True
    return True


def coerce_text(value: str, schema: dict[str, Any]) -> Any:
    """Best-effort conversion of a URL string to the schema's type; unconvertible text is kept as is."""
    types, _ = _types_of(schema)
    if not types and isinstance(schema.get("enum"), list):  # an untyped enum: the member spelled so
        return next((v for v in schema["enum"] if str(v) == value or json_text(v) == value), value)
    if "string" in types or not types:
        if types & {"integer", "number"} and _NUMERAL.fullmatch(value) and not _fits_string(value, schema):
            # ``{type: [string, integer], minLength: 40}``: a short numeral is the integer
            if "." not in value and "e" not in value.lower():
                return int(value)
            number = float(value)
            return number if math.isfinite(number) else value
        return value
    try:
        if "integer" in types:
            return int(value)
        if "number" in types:  # "1" is the integer 1 (an enum of numbers lists 1, not 1.0)
            return int(value) if value.lstrip("-").isdigit() else float(value)
    except ValueError:
        return value
    if "boolean" in types and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    if "array" in types:
        return [v for v in value.split(",") if v]
    return value
