"""AWS's query protocol's request parameters, both ways: ``Tags.member.1.Key=env`` <-> ``{"Tags": [{"Key": "env"}]}``.

A query-protocol client (boto3, the AWS CLI) sends every argument as a flat key, in the query
string or a form body: a structure's member as ``Prefix.Member``, a list's items as
``Prefix.member.N`` (``Prefix.N`` where the list is flattened, ``xml: {wrapped: false}``, and always
in EC2's flavour), a map's as ``Prefix.entry.N.key`` / ``Prefix.entry.N.value``, numbering from 1;
an empty list or map as ``Prefix=``.
``unflatten`` reads such keys back by the argument's schema; ``flatten`` writes them (the
conformance checker's client).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["flatten", "unflatten"]

_MAX_DEPTH = 20


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    raw = schema.get("type")
    types = {raw} if isinstance(raw, str) else set(raw) if isinstance(raw, list) else set()
    if not types and "properties" in schema:
        types.add("object")
    if not types and "items" in schema:
        types.add("array")
    return types - {"null"}


def _is_map(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and isinstance(schema.get("additionalProperties"), dict)
        and not schema.get("properties")
    )


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def flatten(
    prefix: str, value: Any, schema: Any, flat_lists: bool = False, depth: int = 0
) -> list[tuple[str, str]]:
    """The query-protocol pairs of one argument (``flat_lists``: EC2's ``Prefix.N`` lists)."""
    schema = schema if isinstance(schema, dict) else {}
    if depth > _MAX_DEPTH:
        return [(prefix, _text(value))]
    if value == [] or value == {}:  # an empty list or map is its name with no value (botocore's)
        return [(prefix, "")]
    if isinstance(value, list):
        items = schema.get("items")
        wrapped = (schema.get("xml") or {}).get("wrapped") if isinstance(schema.get("xml"), dict) else None
        base = prefix if flat_lists or wrapped is False else f"{prefix}.member"
        out: list[tuple[str, str]] = []
        for i, item in enumerate(value, 1):
            out += flatten(f"{base}.{i}", item, items, flat_lists, depth + 1)
        return out
    if isinstance(value, dict) and _is_map(schema):
        out = []
        for i, (key, item) in enumerate(value.items(), 1):
            out.append((f"{prefix}.entry.{i}.key", str(key)))
            out += flatten(
                f"{prefix}.entry.{i}.value", item, schema["additionalProperties"], flat_lists, depth + 1
            )
        return out
    if isinstance(value, dict) and "object" in _types(schema):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        out = []
        for key, item in value.items():
            if item is not None:
                out += flatten(f"{prefix}.{key}", item, props.get(key), flat_lists, depth + 1)
        return out
    return [(prefix, _text(value))]


def unflatten(pairs: list[tuple[list[str], str]], schema: Any) -> Any:
    """One argument's value from its flat keys (each split at ``.`` after the argument's name)."""
    tree: dict[str, Any] = {}
    for path, value in pairs:
        node = tree
        for key in path[:-1]:
            inner = node.setdefault(key, {})
            if not isinstance(inner, dict):
                inner = node[key] = {"": inner}
            node = inner
        node[path[-1]] = value
    return _build(tree, schema, 0)


def _build(node: Any, schema: Any, depth: int) -> Any:
    schema = schema if isinstance(schema, dict) else {}
    if node == "" and "array" in _types(schema):  # ``Prefix=``: an empty list or map
        return []
    if node == "" and (_is_map(schema) or "object" in _types(schema)):
        return {}
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return node
    if "array" in _types(schema):
        inner: Any = node
        if len(inner) == 1 and not next(iter(inner)).isdigit():  # ``.member.N`` (or a named item)
            inner = next(iter(inner.values()))
        items = schema.get("items")
        if isinstance(inner, dict) and inner and all(k.isdigit() for k in inner):
            return [_build(inner[k], items, depth + 1) for k in sorted(inner, key=int)]
        return [_build(inner, items, depth + 1)]
    if _is_map(schema):
        entries = node.get("entry", node)
        out: dict[str, Any] = {}
        if isinstance(entries, dict):
            for index in sorted(entries, key=lambda k: int(k) if k.isdigit() else 0):
                entry = entries[index]
                if isinstance(entry, dict) and "key" in entry:
                    out[str(entry["key"])] = _build(
                        entry.get("value"), schema["additionalProperties"], depth + 1
                    )
        return out
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    return {key: _build(value, props.get(key), depth + 1) for key, value in node.items()}
