"""Make a generated response agree with what the call said and what the state holds.

``echo`` writes the caller's inputs into the response fields that have a place for them
(``?from=EUR&to=HUF`` answers ``{"from": "EUR", "to": "HUF", ...}``), through nested objects and,
for filters, into every listed item. ``reflect_row`` fills a response from a typed row (an action's
spec-declared body, a simulated read of a row that exists). A value is written only where the
field's own schema accepts it, so the response stays valid against the declared schema.
"""

from __future__ import annotations

import random
from typing import Any

from compoworld.manifest import EntityDef, ToolDef
from compoworld.patterns import first_error, schema_validator
from compoworld.runtime.generate import generate_value
from compoworld.seeding import value_seed

__all__ = ["describes_row", "echo", "id_like", "norm", "reflect_row", "row_source"]

_MAX_DEPTH = 5
_ID_SUFFIXES = ("id", "ids", "key", "uuid", "sid", "guid")


def norm(name: str) -> str:
    """Case- and separator-blind key (``MessageID``, ``message_id`` and ``messageId`` meet)."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def id_like(name: str) -> bool:
    """Whether a field or argument names a key (``id``, ``contactId``, ``pid``, ``uuid``)."""
    key = norm(name)
    return key.endswith(_ID_SUFFIXES)


def _accepts(schema: Any, value: Any) -> bool:
    """Whether ``value`` fits the field's schema: patterns read in every dialect (``\\p{L}``), and a
    schema the validator cannot apply (an unusual upstream schema) accepts without the check."""
    if not isinstance(schema, dict) or not schema:
        return True
    check = schema_validator(schema)
    return check is None or first_error(check, value) is None


def _props(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    props = dict(schema.get("properties") or {})
    for part in schema.get("allOf") or []:
        if isinstance(part, dict):
            props.update(part.get("properties") or {})
    return props


def echo(
    value: Any,
    source: dict[str, Any],
    schema: Any,
    *,
    ids: bool = True,
    keep: frozenset[str] = frozenset(),
    depth: int = 0,
) -> Any:
    """Overwrite fields of ``value`` whose normalised name is a key of ``source``, recursively.

    Inside a list only ``keep`` keeps its id-like keys: a parent's ``id`` is not every listed
    item's id, but its ``paymentId`` is every listed event's. ``ids=False`` writes no id-like key.
    """
    if depth > _MAX_DEPTH or not source:
        return value
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        narrowed = {k: v for k, v in source.items() if not id_like(k) or k in keep}
        return [echo(v, narrowed, items, ids=ids, keep=keep, depth=depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    props = _props(schema)
    for key in list(value):
        field = props.get(key)
        wanted = source.get(norm(key), _MISSING)
        scalar = not isinstance(value[key], (dict, list))
        if wanted is not _MISSING and scalar and (ids or not id_like(key)) and _accepts(field, wanted):
            value[key] = wanted
        elif isinstance(value[key], (dict, list)):
            value[key] = echo(value[key], source, field, ids=ids, keep=keep, depth=depth + 1)
    return value


_MISSING = object()


def row_source(row: dict[str, Any], entity: EntityDef) -> dict[str, Any]:
    """A row's values by normalised field name, its key also under ``id`` and ``<entity>Id``."""
    out: dict[str, Any] = {}
    for column in entity.columns:
        value = row.get(column.name)
        if value is None or isinstance(value, (dict, list)):
            continue
        out[norm(column.source_name or column.name)] = value
        out.setdefault(norm(column.name), value)
    key = row.get(entity.pk)
    if key is not None:
        for alias in ("id", entity.name + "id", entity.name + "key", entity.name + "uuid"):
            out.setdefault(norm(alias), key)
    return out


def describes_row(schema: Any, entity: EntityDef) -> bool:
    """Whether a response object is (mostly) the entity itself rather than something about it."""
    props = _props(schema)
    if not props:
        return False
    names = {norm(c.source_name or c.name) for c in entity.columns}
    hits = sum(1 for k in props if norm(k) in names)
    return hits * 2 >= len(props) and hits >= min(2, len(props))


def reflect_row(tool: ToolDef, row: dict[str, Any], entity: EntityDef, args: dict[str, Any]) -> Any:
    """The tool's declared response, generated deterministically and filled from ``row`` and the inputs."""
    schema = tool.output_schema or {"type": "object"}
    value = generate_value(schema, random.Random(value_seed(tool.name, row.get(entity.pk))), tool.name)
    value = echo(value, row_source(row, entity), schema, keep=frozenset({norm(entity.name + "id")}))
    scalars = {norm(k): v for k, v in args.items() if not isinstance(v, (dict, list))}
    return echo(value, scalars, schema, ids=False)
