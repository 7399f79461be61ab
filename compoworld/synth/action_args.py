"""Which arguments of an action tool write which columns of the row it changes.

By name first (``status`` writes ``status``, ``ContactEmail`` writes ``contact_email``), then by
role where the spec names a column only indirectly: a move's ``destination`` writes the reference
to the parent the row moves to (``POST /calendars/{id}/events/{eventId}/move?destination=...``),
and a quick add's one free ``text`` becomes the new row's label (``events/quickAdd?text=...``).
"""

from __future__ import annotations

from compoworld.manifest import ColumnDef, EntityDef
from compoworld.specs.model import FieldSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.synth.entities import Target
from compoworld.synth.naming import match_key

__all__ = ["arg_columns", "column_named", "destination_arg", "parent_columns", "text_arg"]

#: Argument names that say where a row goes (the parent it is moved under).
_DESTINATIONS = frozenset(
    match_key(n)
    for n in ("destination", "destination_id", "target", "target_id", "to", "new_parent", "new_parent_id")
)
#: Argument names that carry a free text the service reads the new row from.
_TEXTS = frozenset(match_key(n) for n in ("text", "content", "input", "prompt", "sentence", "description"))


def column_named(entity: EntityDef, name: str) -> ColumnDef | None:
    """The column a field name denotes, blind to case and separators."""
    key = match_key(name)
    return next((c for c in entity.columns if match_key(c.source_name or c.name) == key), None)


def _carries(p: FieldSpec, entity: EntityDef) -> bool:
    props = p.json_schema.get("properties")
    if json_type(p.json_schema) != "object" or not isinstance(props, dict) or not props:
        return False
    hits = sum(1 for k in props if column_named(entity, k) is not None)
    return hits * 2 >= len(props) and hits > 0


def arg_columns(tool: ToolSpec, entity: EntityDef, skip: set[str]) -> tuple[dict[str, str], str | None]:
    """Arguments that write a column of ``entity`` (by name), and a nested object carrying its fields."""
    out: dict[str, str] = {}
    body_arg = None
    for p in sorted(tool.params, key=lambda q: q.location not in ("body", "arg")):
        if p.name in skip:
            continue
        column = column_named(entity, p.original_name or p.name) or column_named(entity, p.name)
        if column is not None and column.type != "json" and json_type(p.json_schema) in ("object", "array"):
            column = (
                None  # ``episode: {PodcastEpisode}`` beside an ``episode`` number: the row, not the column
            )
        if (
            column is not None
            and column.type in ("integer", "number")
            and json_type(p.json_schema) == "string"
        ):
            column = None  # ``/_string {value: "..."}``: a number's text form, not the number column
        if column is not None and not column.primary_key and column.name not in out.values():
            out[p.name] = column.name
        elif body_arg is None and _carries(p, entity):
            body_arg = p.name
    return out, body_arg


def parent_columns(target: Target, entity: EntityDef) -> dict[str, str]:
    """Parent path argument -> the column of ``entity`` that references that parent."""
    out = {}
    for arg, parent in target.parent_params.items():
        column = next((c for c in entity.columns if c.ref == parent), None)
        if column is not None:
            out[arg] = column.name
    return out


def destination_arg(
    tool: ToolSpec, entity: EntityDef, target: Target, skip: set[str]
) -> tuple[str, str] | None:
    """(argument, reference column) of a move: a required destination argument that names no column
    writes the row's reference to its parent (the path's parent, else the entity's only reference)."""
    refs = [c for c in entity.columns if c.ref is not None and not c.primary_key]
    parents = set(target.parent_params.values())
    under = [c for c in refs if c.ref in parents] or (refs if len(refs) == 1 else [])
    if len(under) != 1:
        return None
    for p in tool.params:
        if p.name in skip or not p.required or json_type(p.json_schema) not in ("string", "integer", None):
            continue
        if match_key(p.original_name or p.name) in _DESTINATIONS:
            return p.name, under[0].name
    return None


def text_arg(tool: ToolSpec, entity: EntityDef, skip: set[str]) -> tuple[str, str] | None:
    """(argument, label column) of a quick add: its one required free-text argument becomes the
    new row's label (``summary``, ``name``, ``title``)."""
    label = entity.column(entity.label_column) if entity.label_column else None
    if label is None or label.type != "string" or label.primary_key:
        return None
    texts = [
        p
        for p in tool.params
        if p.name not in skip
        and p.required
        and json_type(p.json_schema) in ("string", None)
        and match_key(p.original_name or p.name) in _TEXTS
    ]
    return (texts[0].name, label.name) if len(texts) == 1 else None
