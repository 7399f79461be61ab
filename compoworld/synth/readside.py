"""Read-side bindings: read actions whose inputs address a row answer from that row (``lookup``).

``GET /files/{id}/download``, ``GET /payments/{paymentId}/events``, ``GET /bounces/{id}/dump``:
the REST structure makes these neither a read nor a list of an entity, but the path names one row
of one. Served from typed state, such a call is refused as ``not_found`` for an id the state does
not hold (never an invented answer), and its answer is the spec's own body filled from the row
(or the row itself, where the spec answers with the entity). It changes nothing.

A read whose path parameters are not the entity's key but name its fields (sportsdata's
``GET /{format}/PlayerSeasonStatsByPlayer/{season}/{playerid}``, answering one season-stat row)
addresses the row holding those values: ``season`` is the ``Season`` column, ``playerid`` the
``PlayerID`` column, a date parameter a date or timestamp column by its day. Bound only where every
path parameter (a wire-format selector aside) is such a column, it answers the first row holding
them all and ``not_found`` where none does (``bind_field_match``). Its other parameters
(Weatherbit's ``units``, ``days``, ``callback``) would change an answer the row does not hold: each is
refused by name for any value but its default, and a required one with no default leaves the read
with the world model (``unhonoured``), as a list's unbindable parameters are.
"""

from __future__ import annotations

from compoworld.manifest import ActionDef, ColumnDef, EntityDef
from compoworld.runtime.actions import dated
from compoworld.specs.model import FieldSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import entity_name, split_words
from compoworld.synth.entities import EntityInference, Target
from compoworld.synth.listparams import json_choices, language_choices
from compoworld.synth.naming import match_key
from compoworld.synth.resources import path_param
from compoworld.synth.responses import holds
from compoworld.synth.unbound import Unbound

__all__ = ["READ_REASON", "bind_field_match", "bind_lookup", "read_params", "row_param_target", "unhonoured"]

#: Why a read action stays with the world model: nothing in its path names a row of typed state.
READ_REASON = "a read action computes its answer (world model); its path names no row of typed state"


def _names_entity(param_key: str, semantic: str | None, entity: EntityDef) -> bool:
    """Whether a path parameter is the key of ``entity`` (``employee_id``, ``FileId``, ``id:file``)."""
    if semantic and semantic.startswith("id:"):
        return semantic[3:] == entity.name
    pk = entity.column(entity.pk)
    names = {match_key(entity.name + "_id"), match_key(entity.name + "id")}
    if pk is not None and match_key(pk.source_name or pk.name) != "id":
        names.add(match_key(pk.source_name or pk.name))
    return param_key in names


def row_param_target(tool: ToolSpec, target: Target, inference: EntityInference) -> Target:
    """The target with its row argument: a path parameter, last or before the verb, that is the key
    of an entity the path names (``/hris/payrolls/employees/{employee_id}``) or its tag names."""
    if target.pk_param is not None:
        return target
    segments = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s]
    literals = {match_key(entity_name(s)) for s in segments if "{" not in s}
    for segment in reversed(segments[-2:]):
        if not (segment.startswith("{") and segment.endswith("}")):
            continue
        param = path_param(tool, segment[1:-1])
        if param is None:
            continue
        key = match_key(param.original_name or param.name)
        for entity in inference.entities:
            named = param.semantic == f"id:{entity.name}" or match_key(entity.name) in literals
            if named and _names_entity(key, param.semantic, entity):
                parents = {a: e for a, e in target.parent_params.items() if a != param.name}
                return Target(entity.name, "action", pk_param=param.name, parent_params=parents)
        return target
    return target


def _verb(tool: ToolSpec) -> str:
    """What the read is called: the path's last literal (``download``, ``events``), else ``read``."""
    literals = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s and "{" not in s]
    words = split_words(literals[-1]) if literals else []
    return "_".join(words) or "read"


def bind_lookup(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionDef:
    """The lookup binding of a read action whose path addresses a row (:class:`Unbound`: why none).

    ``target`` must already name the row argument (``row_param_target``); the caller decides the
    answer's shape (``returns``) from the response schema.
    """
    entity = inference.entity(target.entity)
    if target.pk_param is None or entity is None:
        raise Unbound(READ_REASON)
    scope = {}
    for arg, parent in target.parent_params.items():
        column = next((c for c in entity.columns if c.ref == parent), None)
        if column is not None:
            scope[arg] = column.name
    return ActionDef(kind="lookup", verb=_verb(tool), target=entity.name, scope=scope)


#: Words a row's field adds to the thing it names (``city_name`` is the city, ``country_code`` the country).
_QUALIFIERS = ("name", "code")


def _field_column(key: str, semantic: str | None, entity: EntityDef) -> ColumnDef | None:
    """The column a path parameter names: by name (``playerid`` -> ``PlayerID``), or as the one column
    that is its name or code (Weatherbit's ``?city={city}&country={country}`` -> ``city_name``,
    ``country_code``), else, for a date parameter (``{date}``), the entity's one date column or the
    one whose name says date."""
    columns = [c for c in entity.columns if c.type not in ("json", "boolean")]
    named = next((c for c in columns if match_key(c.source_name or c.name) == key), None)
    if named is None:  # ``city`` names ``city_name``, ``country`` names ``country_code``
        spelled = [c for c in columns if match_key(c.source_name or c.name) in {key + q for q in _QUALIFIERS}]
        named = spelled[0] if len(spelled) == 1 else None
    if named is not None or not (semantic == "date" or key == "date"):
        return named
    days = [c for c in columns if dated(c)]
    if len(days) == 1:
        return days[0]
    return next((c for c in days if "date" in match_key(c.source_name or c.name)), None)


def bind_field_match(tool: ToolSpec, entity: EntityDef) -> ActionDef:
    """A lookup of the ``entity`` row whose fields the path's parameters name (:class:`Unbound`:
    some parameter names no column, or the path has none)."""
    match: dict[str, str] = {}
    for p in tool.params:
        if p.location != "path" or json_choices(p) is not None:
            continue  # ``{format}``: the wire format, answered as JSON elsewhere
        column = _field_column(match_key(p.original_name or p.name), p.semantic, entity)
        if column is None or column.primary_key:
            raise Unbound(READ_REASON)
        match[p.name] = column.name
    if not match or len(set(match.values())) != len(match):
        raise Unbound(READ_REASON)
    return ActionDef(kind="lookup", verb=_verb(tool), target=entity.name, match=match)


#: Names of a parameter choosing the encoding of a binary answer (an export's file format).
_ENCODINGS = frozenset({"format", "fileformat", "exportformat", "mimetype", "contenttype"})

#: Why a field-match lookup refuses a parameter it does not match on.
_UNMATCHED = "the lookup answers the stored row its fields name; this argument would change that answer"


def unhonoured(tool: ToolSpec, bound: set[str]) -> dict[str, str]:
    """Argument -> why a lookup cannot honour it, for each parameter outside ``bound`` (a response
    format selector takes its JSON values by schema; a language selector is served in the state's
    one language); :class:`Unbound` where one is required and has no default to be served at."""
    refused: dict[str, str] = {}
    for p in tool.params:
        if p.name in bound or json_choices(p) is not None:
            continue
        served = language_choices(p)
        if served is not None:
            refused[p.name] = (
                f"chooses the language of the answer's text, which this service holds in {served[0]!r} only"
            )
        elif p.required and p.json_schema.get("default") is None:
            raise Unbound(f"required argument '{p.name}' names no field of the row the read answers")
        else:
            refused[p.name] = _UNMATCHED
    return refused


def _same_kind(column: ColumnDef, p: FieldSpec) -> bool:
    """Whether an argument can name the column's values: a flag a flag, a number a number or its text."""
    kind = json_type(p.json_schema)
    if column.type == "boolean" or kind == "boolean":
        return column.type == "boolean" and kind == "boolean"
    return holds(column, p.json_schema)


def read_params(tool: ToolSpec, entity: EntityDef, bound: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """What a one-row read does with each query or body parameter outside ``bound`` (its key, its
    parents): an optional one is refused by name at any value but its default (argument -> why); a
    required one must name a field of the row, which must hold the value given (argument -> column),
    else (roaring's ``countryCode``, weatherbit's ``start_date``) the read cannot answer it from the
    row: :class:`Unbound`. A required header (an application key) is taken as given (a parameter of one
    allowed value, AWS's ``Action``, is no argument at all: ``ToolSpec.fixed_query``)."""
    named: dict[str, str] = {}
    refused: dict[str, str] = {}
    opaque = isinstance(tool.output_schema, dict) and tool.output_schema.get("format") == "binary"
    for p in tool.params:
        if p.name in bound or p.location == "path" or json_choices(p) is not None:
            continue
        if opaque and match_key(p.original_name or p.name) in _ENCODINGS:
            continue  # ``/files/{id}/export?format=pdf``: the encoding of content no state holds
        served = language_choices(p)
        if served is not None:
            refused[p.name] = (
                f"chooses the language of the answer's text, which this service holds in {served[0]!r} only"
            )
            continue
        if not p.required or p.json_schema.get("default") is not None:
            refused[p.name] = _UNMATCHED  # ``fields``, ``expand``, ``units``: served at its default only
            continue
        if p.location == "header":
            continue
        column = _field_column(match_key(p.original_name or p.name), None, entity)
        if column is None or column.primary_key or not _same_kind(column, p):
            raise Unbound(f"required argument '{p.name}' names nothing the read answers from")
        named[p.name] = column.name
    return named, refused
