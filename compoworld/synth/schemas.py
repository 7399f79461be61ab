"""JSON-schema helpers for synthesis: unwrap response envelopes, name schemas, read properties.

Real APIs wrap the entity they return (``{"status": 200, "data": {...}}``, ``{"items": [...],
"nextPageToken": ...}``); inference needs the entity inside, and the name of the components
schema it is, to tell two resources apart or recognise one under two paths.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words

__all__ = ["SchemaIndex", "Unwrapped", "is_meta", "merged_properties", "unwrap"]

#: Envelope properties that carry the payload.
WRAPPERS = (
    "data",
    "result",
    "results",
    "items",
    "records",
    "value",
    "values",
    "entries",
    "elements",
    "content",
    "resources",
    "objects",
    "_embedded",
    "embedded",
    "response",
    "payload",
)
#: Envelope properties that are paging or status metadata, never the payload.
_META = {
    "status",
    "status_code",
    "statuscode",
    "service",
    "resource",
    "operation",
    "meta",
    "links",
    "_links",
    "page",
    "page_size",
    "pagesize",
    "per_page",
    "total",
    "totalcount",
    "total_count",
    "count",
    "cursor",
    "cursors",
    "next",
    "previous",
    "prev",
    "nextpagetoken",
    "next_page_token",
    "next_cursor",
    "has_more",
    "hasmore",
    "kind",
    "etag",
    "offset",
    "limit",
    "success",
    "message",
    "errors",
    "error",
    "code",
    "record_count",
    "pagination",
    "pagedetails",
    "pageinfo",
    "paging",
    "nextsynctoken",
    "timezone",
    "summary",
    "description",
    "updated",
    "accessrole",
    "defaultreminders",
}


_META_WORDS = set(
    [
        "page",
        "pages",
        "size",
        "count",
        "total",
        "index",
        "record",
        "records",
        "cursor",
        "token",
        "next",
        "prev",
        "previous",
        "offset",
        "limit",
        "has",
        "more",
        "links",
        "link",
        "meta",
        "status",
        "code",
        "kind",
        "etag",
        "per",
        "num",
        "number",
        "of",
        "results",
        "items",
        "sync",
        "request",
        "trace",
        "self",
        "current",
        "last",
        "first",
        "url",
        "href",
        "continuation",
        "before",
        "after",
        "skip",
        "top",
    ]
)


@dataclass(frozen=True)
class Unwrapped:
    """The entity schema inside a response (or body) and whether it came as a list."""

    schema: dict[str, Any]
    is_list: bool


#: The keys of a typed list object (Kubernetes' ``{apiVersion, kind, metadata, items}``): its rows
#: beside the list's own type and its list metadata (``continue``, ``resourceVersion``), no row field.
_TYPED_LIST = frozenset({"apiVersion", "kind", "metadata", "items"})


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    if isinstance(props, dict):
        return {k: v for k, v in props.items() if isinstance(v, dict)}
    merged: dict[str, Any] = {}
    for sub in schema.get("allOf") or []:
        if isinstance(sub, dict):
            merged.update(_props(sub))
    return merged


def merged_properties(schema: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Properties (allOf merged) and required names of an object schema."""
    props = _props(schema)
    required = {r for r in schema.get("required") or [] if isinstance(r, str)}
    for sub in schema.get("allOf") or []:
        if isinstance(sub, dict):
            required.update(r for r in sub.get("required") or [] if isinstance(r, str))
    return props, required


def _object_items(schema: dict[str, Any]) -> dict[str, Any] | None:
    if json_type(schema) == "array" and isinstance(schema.get("items"), dict):
        items = schema["items"]
        if _props(items):
            return dict(items)
    return None


def unwrap(schema: dict[str, Any] | None, depth: int = 0) -> Unwrapped | None:
    """The entity object a response carries, through up to two envelope levels."""
    if not isinstance(schema, dict) or depth > 2:
        return None
    items = _object_items(schema)
    if items is not None:
        return Unwrapped(items, True)
    props = _props(schema)
    if not props:
        return None
    arrays = [k for k, v in props.items() if _object_items(v) is not None]
    if (
        arrays == ["items"] and set(props) <= _TYPED_LIST
    ):  # ``ServiceAccountList``: its kind and list metadata
        return Unwrapped(_object_items(props["items"]) or {}, True)
    others = [k for k in props if k not in arrays and _norm(k) not in WRAPPERS and not is_meta(k)]
    # an envelope may also echo the parent's id (``{"payment_id": ..., "_embedded": {"refunds": [...]}}``)
    echoes_ids = bool(others) and all(split_words(k)[-1:] == ["id"] and not _props(props[k]) for k in others)
    if not others or echoes_ids:
        by_norm = {_norm(k): k for k in props}
        for wrapper in WRAPPERS:
            inner = props.get(by_norm.get(wrapper, wrapper))
            found = unwrap(inner, depth + 1) if inner is not None else None
            if found is not None and (found.is_list or not echoes_ids):
                return found
    if len(arrays) == 1 and not others:
        inner_items = _object_items(props[arrays[0]])
        assert inner_items is not None
        return Unwrapped(inner_items, True)
    if len(props) == 1:
        (only,) = props.values()
        if _props(only):
            return unwrap(only, depth + 1) or Unwrapped(dict(only), False)
    return Unwrapped(dict(schema), False)


def _norm(key: str) -> str:
    return key.lower().replace("-", "_")


def is_meta(key: str) -> bool:
    """Paging/status metadata of an envelope (``count``, ``page_size``, ``TotalCount``, ``_links``)."""
    words = split_words(key)
    return _norm(key) in _META or (bool(words) and set(words) <= _META_WORDS)


def _canonical(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str)


class SchemaIndex:
    """Finds the components-schema name of a resolved schema (by content, then by title)."""

    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self._by_content: dict[str, str] = {}
        self._by_props: dict[str, str] = {}
        for name in sorted(schemas):
            schema = schemas[name]
            self._by_content.setdefault(_canonical(schema), name)
            props = sorted(_props(schema))
            if len(props) >= 3:
                self._by_props.setdefault(",".join(props), name)
        self._names = set(schemas)

    def name_of(self, schema: dict[str, Any] | None) -> str | None:
        if not isinstance(schema, dict):
            return None
        for key in ("x-schema-name", "x-ref-name", "x-component", "title"):
            value = schema.get(key)
            if isinstance(value, str) and value in self._names:
                return value
        found = self._by_content.get(_canonical(schema))
        if found is not None:
            return found
        props = sorted(_props(schema))
        return self._by_props.get(",".join(props)) if len(props) >= 3 else None
