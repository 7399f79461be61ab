"""What a simulated collection holds within an episode, so the world model keeps its word.

A simulated tool addresses a *collection* (its REST path up to the last id-like parameter, or its
entity for path-less tools) and, for item calls, one object of it. The objects a collection holds
are what its calls have shown and done, in order: the items its reads returned (cached per
episode), the objects its creates produced (from the typed ``action_log``), updates merged into
them and deletes removing them. A read of an id nobody showed or created is not found; a list
shows what was created and hides what was deleted; a read after an update reflects the update.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from compoworld.manifest import ToolDef
from compoworld.runtime.echo import id_like, norm

__all__ = ["Address", "address_of", "cached_calls", "id_of", "known_objects", "main_object", "object_items"]

Role = Literal["create", "read", "list", "update", "delete", "write", "read_other"]
_WRITE_ROLES = frozenset({"create", "update", "delete", "write"})


@dataclass(frozen=True)
class Address:
    """Where a simulated call lands: a collection, the argument naming one object, and what it does."""

    collection: str
    key_arg: str | None
    role: Role

    @property
    def writes(self) -> bool:
        return self.role in _WRITE_ROLES


def _param(segment: str) -> str | None:
    return segment[1:-1] if segment.startswith("{") and segment.endswith("}") else None


def _rest_address(tool: ToolDef) -> Address:
    segments = [s for s in (tool.path or "").strip("/").split("/") if s]
    method = tool.method.upper()
    index = next(
        (i for i in range(len(segments) - 1, -1, -1) if (p := _param(segments[i])) and id_like(p)), None
    )
    if index is None:
        role: Role = "list" if not tool.is_write else "create" if method == "POST" else "write"
        return Address("/" + "/".join(segments), None, role)
    collection = "/" + "/".join(segments[:index])
    key = _param(segments[index])
    if index == len(segments) - 1:
        role = "read" if not tool.is_write else "delete" if method == "DELETE" else "update"
    else:
        role = "read_other" if not tool.is_write else "write"
    return Address(collection, key, role)


def _named_address(tool: ToolDef) -> Address | None:
    if not tool.entity:
        return None
    key = next((a for a, tag in sorted(tool.arg_semantics.items()) if tag == f"id:{tool.entity}"), None)
    role: Role = {
        "create": "create",
        "read": "read",
        "list": "list",
        "search": "list",
        "update": "update",
        "delete": "delete",
    }.get(tool.operation, "write" if tool.is_write else "read_other")  # type: ignore[assignment]
    if role in ("read", "update", "delete") and key is None:
        role = "write" if tool.is_write else "read_other"
    return Address(f"entity:{tool.entity}", key if role != "create" else None, role)


def address_of(tool: ToolDef) -> Address | None:
    """The collection a simulated tool works on (None: a computation with no collection)."""
    if tool.path:
        return _rest_address(tool)
    return _named_address(tool)


def id_of(obj: dict[str, Any], key_arg: str | None) -> Any:
    """An object's key: the field named like the item argument, else ``id``, else an id-like field."""
    by_norm = {norm(k): k for k in obj}
    for wanted in (norm(key_arg) if key_arg else "", "id"):
        if wanted and wanted in by_norm and not isinstance(obj[by_norm[wanted]], (dict, list)):
            return obj[by_norm[wanted]]
    for key in sorted(obj):
        if id_like(key) and isinstance(obj[key], (str, int)) and not isinstance(obj[key], bool):
            return obj[key]
    return None


def object_items(value: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """The objects a list response carries (a bare array, or the arrays inside its envelope)."""
    if depth > 3:
        return
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item
    elif isinstance(value, dict):
        for item in value.values():
            if isinstance(item, (dict, list)):
                yield from object_items(item, depth + 1)


def main_object(value: Any, key_arg: str | None) -> dict[str, Any] | None:
    """The object a read or create response is about (itself, or inside a ``data``-like wrapper)."""
    if not isinstance(value, dict):
        return None
    if id_of(value, key_arg) is not None:
        return value
    for item in value.values():
        if isinstance(item, dict) and id_of(item, key_arg) is not None:
            return item
    return value


def known_objects(
    collection: str,
    key_arg: str | None,
    shown: Iterable[tuple[Address, dict[str, Any], Any]],
    written: Iterable[tuple[Address, dict[str, Any], Any]],
) -> dict[str, dict[str, Any] | None]:
    """Key -> the object as it now stands (None: deleted), from what reads showed and writes did."""
    out: dict[str, dict[str, Any] | None] = {}
    for address, args, value in shown:
        if address.collection != collection:
            continue
        if address.role == "read" and address.key_arg in args:
            found = main_object(value, address.key_arg)
            if found is not None:
                out.setdefault(str(args[address.key_arg]), found)
        for item in object_items(value) if address.role == "list" else ():
            key = id_of(item, key_arg)
            if key is not None:
                out.setdefault(str(key), item)
    for address, args, value in written:
        if address.collection != collection:
            continue
        scalars = {k: v for k, v in args.items() if not isinstance(v, (dict, list))}
        if address.role == "create":
            found = main_object(value, key_arg)
            key = id_of(found, key_arg) if found is not None else None
            if found is not None and key is not None:
                out[str(key)] = {**scalars, **found}
        elif address.key_arg in args:
            key = str(args[address.key_arg])
            if address.role == "delete":
                out[key] = None
            elif out.get(key) is not None:
                out[key] = {**(out[key] or {}), **{k: v for k, v in scalars.items() if k != address.key_arg}}
    return out


def cached_calls(cache: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(tool, arguments, base response) of every read the episode cached."""
    for key, value in cache.items():
        try:
            name, args = json.loads(key)
        except (ValueError, TypeError):
            continue
        if isinstance(name, str) and isinstance(args, dict):
            yield name, args, value
