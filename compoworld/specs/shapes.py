"""Reading resolved schemas: their main type, their object view, response wrappers, entity names.

The canonical model flattens objects into parameters and response fields; these
helpers decide what counts as an object (``oneOf``/``anyOf`` object variants are
merged), which property of a response is an envelope around the real payload
(``{"status": ..., "data": {...}}``), and which components schema a response or
body is about, read from the unresolved ``$ref`` names.
"""

from __future__ import annotations

from typing import Any

from compoworld.schema_types import json_type
from compoworld.specs.errors import SpecError
from compoworld.specs.refs import Resolver, ref_name

__all__ = [
    "WRAPPER_KEYS",
    "Wrapper",
    "find_wrapper",
    "json_type",
    "named_entity",
    "object_view",
    "primary_type",
    "text_of",
]

WRAPPER_KEYS = (
    "data",
    "result",
    "results",
    "items",
    "item",
    "payload",
    "response",
    "record",
    "records",
    "value",
    "values",
    "entries",
)
_MAX_ENVELOPE_FIELDS = 10
_MAX_LIST_ENVELOPE_FIELDS = 16
_ENUM_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", list: "array"}


def text_of(value: Any) -> str:
    """``value`` if it is a string, else ``""`` (documents put anything anywhere)."""
    return value if isinstance(value, str) else ""


def _is_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    return t == "null" or t == ["null"] or schema.get("enum") == [None]


def primary_type(schema: Any) -> str | None:
    """The JSON type a value mostly has (``null`` ignored in unions), or None if unknown."""
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, str):
        return t
    if isinstance(t, list):
        for item in t:
            if isinstance(item, str) and item != "null":
                return item
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                if isinstance(variant, dict) and not _is_null(variant):
                    found = primary_type(variant)
                    if found:
                        return found
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    for key in ("const", "default"):
        if key in schema and schema[key] is not None:
            return _ENUM_TYPES.get(type(schema[key]))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and enum[0] is not None:
        return _ENUM_TYPES.get(type(enum[0]))
    return None


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


def object_view(schema: Any, _depth: int = 0) -> dict[str, Any] | None:
    """The schema as one object (``properties`` + ``required``), or None if it is not an object.

    ``oneOf``/``anyOf`` object variants are merged: their properties are united and
    only what every variant requires stays required.
    """
    if not isinstance(schema, dict) or _depth > 8:
        return None
    props = schema.get("properties")
    variants: list[dict[str, Any]] = []
    for key in ("oneOf", "anyOf"):
        for variant in schema.get(key) or []:
            if isinstance(variant, dict) and not _is_null(variant):
                view = object_view(variant, _depth + 1)
                if view is not None:
                    variants.append(view)
    if not isinstance(props, dict) and "object" not in _types(schema) and not variants:
        return None
    merged = dict(props) if isinstance(props, dict) else {}
    own_required = schema.get("required")
    required = [r for r in own_required if isinstance(r, str)] if isinstance(own_required, list) else []
    if variants:
        seen: dict[str, list[Any]] = {}
        for view in variants:
            for name, sub in view["properties"].items():
                seen.setdefault(name, []).append(sub)
        for name, subs in seen.items():
            if name not in merged:
                merged[name] = _merge_choices(subs)
        common = [
            r for r in variants[0].get("required", []) if all(r in v.get("required", []) for v in variants)
        ]
        required.extend(r for r in common if r not in required)
    out = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf", "properties", "required", "type")}
    out["type"] = "object"
    out["properties"] = merged
    if required:
        out["required"] = required
    return out


def _merge_choices(subs: list[Any]) -> Any:
    """One property seen in several ``oneOf`` variants: its ``const``/``enum`` values united."""
    values: list[Any] = []
    for sub in subs:
        if not isinstance(sub, dict):
            return subs[0]
        if "const" in sub:
            choices = [sub["const"]]
        elif isinstance(sub.get("enum"), list):
            choices = sub["enum"]
        else:
            return subs[0]
        values.extend(v for v in choices if v not in values)
    if len(subs) == 1:
        return subs[0]
    out = {k: v for k, v in subs[0].items() if k not in ("const", "enum")}
    out["enum"] = values
    return out


class Wrapper:
    """An envelope property of a response (``data`` in ``{"status": "ok", "data": {...}}``)."""

    __slots__ = ("inner", "is_list", "key")

    def __init__(self, key: str, inner: dict[str, Any], is_list: bool) -> None:
        self.key = key
        self.inner = inner
        self.is_list = is_list


def find_wrapper(view: dict[str, Any]) -> Wrapper | None:
    """The envelope property of an object view, if it has one carrying an object (or list of them)."""
    props = view.get("properties") or {}
    if not props or len(props) > _MAX_LIST_ENVELOPE_FIELDS:
        return None
    by_lower = {k.lower(): k for k in props if isinstance(k, str)}
    for wanted in WRAPPER_KEYS:
        key = by_lower.get(wanted)
        if key is None:
            continue
        sub = props[key]
        inner = object_view(sub)
        is_list = False
        if (
            (inner is None or not inner["properties"])
            and primary_type(sub) == "array"
            and isinstance(sub, dict)
        ):
            inner = object_view(sub.get("items"))
            is_list = True
        if inner is not None and inner["properties"] and (is_list or len(props) <= _MAX_ENVELOPE_FIELDS):
            return Wrapper(key, inner, is_list)
    return None


def _follow(resolver: Resolver, node: Any) -> tuple[str | None, Any]:
    """First schema name along a ``$ref`` chain, and the unresolved node it ends at."""
    name: str | None = None
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if ref in seen:
            return name, None
        seen.add(ref)
        name = name or ref_name(ref)
        try:
            node, _ = resolver.lookup(ref, ())
        except SpecError:
            return name, None
    if name is None and isinstance(node, dict):
        members = node.get("allOf")
        if isinstance(members, list) and len(members) == 1 and "properties" not in node:
            return _follow(resolver, members[0])
    return name, node


def _raw_property(resolver: Resolver, node: Any, key: str, depth: int = 0) -> Any:
    _, node = _follow(resolver, node)
    if not isinstance(node, dict) or depth > 6:
        return None
    props = node.get("properties")
    if isinstance(props, dict) and key in props:
        return props[key]
    for member in node.get("allOf") or []:
        found = _raw_property(resolver, member, key, depth + 1)
        if found is not None:
            return found
    return None


def _name_or_items(resolver: Resolver, node: Any) -> str | None:
    name, target = _follow(resolver, node)
    if name is None and isinstance(target, dict) and "items" in target:
        name, _ = _follow(resolver, target["items"])
    return name


def named_entity(resolver: Resolver, raw: Any, wrapper: Wrapper | None) -> str | None:
    """Components schema name a body/response is about: through one wrapper, or an array's items."""
    name, target = _follow(resolver, raw)
    if wrapper is not None:
        inner = _raw_property(resolver, target, wrapper.key)
        inner_name = _name_or_items(resolver, inner) if inner is not None else None
        if inner_name:
            return inner_name
    if isinstance(target, dict) and target.get("type") == "array" and "items" in target:
        return _name_or_items(resolver, target["items"]) or name
    return name
