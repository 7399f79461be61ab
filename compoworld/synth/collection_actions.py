"""Actions over a whole collection rather than one row: counts and clears.

A count endpoint (``POST /v1/ProductsApi/Count {key}``, ``GET /customers/{id}/orders/count``)
answers how many rows of the collection hold the values its arguments name, under the parents
its path names: a read of typed state that a later create or delete changes. A ``DELETE`` on a
top-level collection with no arguments at all (``DELETE /__admin/mappings``) deletes every row of
it, and a later list is empty. Both bind only where every argument has its place (a column, a
parent), so no argument is silently ignored, and where the spec's answer has room for what the
state knows (a number; an empty body).

A count whose arguments are those of a list rather than columns (Graph's ``GET /users/$count``
with ``$search`` and ``$filter``, Autotask's ``query/count?search=``) binds them as the list of the
same rows does (``listparams.ListBinder``): a free-text query searches the rows' text, a range or
set filter is a filter, and an optional one the rows cannot answer is refused by name at any value
but its default. It counts what the list with those arguments would hold; an argument that pages
(a limit, an offset, a cursor) is refused by name: a count counts every row that matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compoworld.manifest import ActionDef, EntityDef, ListBinding
from compoworld.specs.model import ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.action_args import column_named, parent_columns
from compoworld.synth.entities import EntityInference, Target
from compoworld.synth.listparams import ListBinder
from compoworld.synth.paths import parse_path
from compoworld.synth.schemas import merged_properties

__all__ = ["CollectionBinding", "bind_clear_all", "bind_count", "count_answer"]

_NO_ANSWER = object()


@dataclass
class CollectionBinding:
    """What one action over a collection does: its entity, the action, the argument -> column
    equalities, and (a count bound as a list is) the rest of the list's binding."""

    entity: str
    action: ActionDef
    arg_columns: dict[str, str]
    listing: ListBinding | None = None
    search_arg: str | None = None


def _one_alternative(schema: Any) -> Any:
    """The schema a value takes, through ``anyOf``/``oneOf`` wrappers that only add ``null``."""
    for _ in range(4):
        if not isinstance(schema, dict):
            return schema
        options = schema.get("anyOf") or schema.get("oneOf")
        if not isinstance(options, list) or "properties" in schema:
            return schema
        kept = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(kept) != 1:
            return schema
        schema = kept[0]
    return schema


def count_answer(schema: Any) -> Any:
    """Where a count's answer holds its number: None for a bare integer, the name of an object's
    only property where that is an integer (``{"count": 3}``), else ``_NO_ANSWER``."""
    schema = _one_alternative(schema)
    if not isinstance(schema, dict):
        return _NO_ANSWER
    if json_type(schema) == "integer":
        return None
    props = merged_properties(schema)[0]
    if len(props) == 1:
        ((name, inner),) = props.items()
        if json_type(_one_alternative(inner)) == "integer":
            return name
    return _NO_ANSWER


def _names_count(tool: ToolSpec) -> bool:
    """Whether the operation is a count: its last path literal, or its name's last word, is ``count``
    (``/orders/count``, ``ProductsApi_Count``; ``/accounts`` is not)."""
    literals = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s and "{" not in s]
    last = split_words(literals[-1]) if literals else []
    name = split_words(tool.original_name or tool.name)
    return last == ["count"] or name[-1:] == ["count"]


def _filters(tool: ToolSpec, entity: EntityDef, parents: dict[str, str]) -> dict[str, str] | None:
    """Argument -> the column it filters, for every argument; None where one names nothing."""
    out: dict[str, str] = {}
    for p in tool.params:
        if p.name in parents:
            continue
        column = column_named(entity, p.original_name or p.name) or column_named(entity, p.name)
        if column is None or column.type == "json" or json_type(p.json_schema) in ("object", "array"):
            return None
        out[p.name] = column.name
    return out


def bind_count(tool: ToolSpec, target: Target, inference: EntityInference) -> CollectionBinding | None:
    """A count of the target's rows, or None where the operation is not one this can answer."""
    entity = inference.entity(target.entity)
    if entity is None or entity.singleton or target.pk_param is not None or not _names_count(tool):
        return None
    answer = count_answer(tool.output_schema)
    if answer is _NO_ANSWER:
        return None
    parents = parent_columns(target, entity)
    if set(target.parent_params) - set(parents):  # a parent the rows do not reference
        return None
    action = ActionDef(kind="count", verb="count", target=entity.name, scope=parents, returns="body")
    action.answer = answer if isinstance(answer, str) else None
    filters = _filters(tool, entity, parents)
    if filters is not None:
        return CollectionBinding(entity.name, action, filters)
    return _listed_count(tool, entity, parents, action)


def _listed_count(
    tool: ToolSpec, entity: EntityDef, parents: dict[str, str], action: ActionDef
) -> CollectionBinding | None:
    """The count with its arguments bound as a list's (see the module docstring), or None where
    one is required and names nothing."""
    binder = ListBinder(entity, parents)
    binder.bind(list(tool.params))
    listing = binder.listing
    if binder.problem is not None:
        return None
    for arg in (
        binder.fields.get("limit_arg"),
        binder.fields.get("offset_arg"),
        listing.cursor_arg,
        listing.before_arg,
    ):
        if arg is not None:  # ``maxRecords`` beside a query's filters: a count pages nothing
            listing.refused[arg] = "pages a list; a count counts every row that matches"
    listing.cursor_arg = listing.before_arg = None
    columns = {a: c for a, c in binder.arg_columns.items() if a not in parents}
    search = binder.fields.get("search_arg")
    return CollectionBinding(entity.name, action, columns, listing, search)


def bind_clear_all(tool: ToolSpec, target: Target, inference: EntityInference) -> CollectionBinding | None:
    """``DELETE /__admin/mappings``: every row of a top-level collection deleted, where the call
    takes no argument and the spec answers no field (nothing for the answer to report)."""
    entity = inference.entity(target.entity)
    path = (tool.path or "").split("?")[0]
    if entity is None or entity.singleton or "{" in path or tool.params or target.parent_params:
        return None
    shape = parse_path(path) if path else None
    if (tool.method or "").upper() != "DELETE" or shape is None or shape.kind != "collection" or shape.action:
        return None  # ``DELETE /sessions/expired`` deletes some of them, not all
    schema = _one_alternative(tool.output_schema)
    if isinstance(schema, dict) and (
        json_type(schema) not in ("object", None) or merged_properties(schema)[0]
    ):
        return None
    if any(c.ref == entity.name for e in inference.entities if e.name != entity.name for c in e.columns):
        return None  # other rows reference these: deleting them all would leave dangling references
    return CollectionBinding(
        entity.name, ActionDef(kind="clear", verb="delete", target=entity.name, returns="body"), {}
    )
