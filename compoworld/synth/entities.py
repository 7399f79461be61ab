"""Infer the typed state of a service: which entities exist, their columns, and what each tool targets.

OpenAPI sources are read by their REST resource structure (``compoworld.synth.resources``), MCP
and function sources by their tool names (``compoworld.synth.toolnames``); both produce entity
drafts that ``compoworld.synth.drafts`` turns into EntityDefs.
"""

from __future__ import annotations

from dataclasses import dataclass

from compoworld.manifest import EntityDef
from compoworld.specs.model import ServiceSpec
from compoworld.specs.shapes import json_type
from compoworld.synth.drafts import EntityDraft, finalize_entities
from compoworld.synth.listparams import json_choices
from compoworld.synth.naming import match_key
from compoworld.synth.paths import sub_record_of
from compoworld.synth.resources import Target, rest_entities
from compoworld.synth.rpcpaths import read_by_name, rpc_tools, scope_by_key_args, scope_by_path
from compoworld.synth.toolnames import tool_entities

__all__ = ["EntityInference", "Target", "infer_entities"]


@dataclass
class EntityInference:
    """Entities (sorted by name) and, per tool name, the entity and operation its structure suggests."""

    entities: list[EntityDef]
    targets: dict[str, Target]

    def entity(self, name: str | None) -> EntityDef | None:
        return next((e for e in self.entities if e.name == name), None)


def _rpc_style(spec: ServiceSpec) -> bool:
    """Paths that carry no resource structure (``/#X-Amz-Target=Svc.CreateThing``): read names instead."""
    paths = [t.path or "" for t in spec.tools]
    rpc = sum(1 for p in paths if not p or "#" in p or "=" in p or "?" in p)
    return rpc * 2 > len(paths) or (len(paths) > 3 and len(set(paths)) == 1)


def _keep_sub_records(spec: ServiceSpec, drafts: list[EntityDraft], targets: dict[str, Target]) -> None:
    """A JSON field that a write's last path literal names (``PUT /employees/{id}/primaryStateTax``)
    is the sub-record that write sets: kept under the column cap, so the write has its column."""
    by_name = {d.name: d for d in drafts}
    for tool in spec.tools:
        target = targets.get(tool.name)
        if target is None or target.pk_param is None or target.entity not in by_name:
            continue
        sub = sub_record_of(tool.method, tool.path)
        if sub is None:
            continue
        names = sub[1]
        draft = by_name[target.entity or ""]
        draft.filtered |= {
            name
            for name, f in draft.fields.items()
            if match_key(name) in names and json_type(f.schema) in ("object", "array")
        }


def _keep_match_fields(spec: ServiceSpec, drafts: list[EntityDraft], targets: dict[str, Target]) -> None:
    """Fields a keyless read's path parameters all name (``/PlayerGameStatsByPlayer/{date}/{playerid}``
    -> ``PlayerID``) are kept under the column cap, so the read can address the row holding them
    (``compoworld.synth.readside.bind_field_match``)."""
    by_name = {d.name: d for d in drafts}
    for tool in spec.tools:
        target = targets.get(tool.name)
        if (tool.method or "").upper() != "GET" or target is None or target.pk_param is not None:
            continue
        draft = by_name.get(target.entity or "")
        if draft is None:
            continue
        fields = {match_key(f): f for f in draft.fields}
        keys = [
            match_key(p.original_name or p.name)
            for p in tool.params
            if p.location == "path" and json_choices(p) is None
        ]
        named = [fields[k] for k in keys if k in fields]
        if named and all(k in fields or k == "date" for k in keys):
            draft.filtered |= set(named)


def infer_entities(spec: ServiceSpec) -> EntityInference:
    """Entities and tool targets of one service, deterministic for a given spec."""
    if spec.source_kind in ("openapi3", "swagger2") and not _rpc_style(spec):
        drafts, targets = rest_entities(spec)
        named = rpc_tools(spec, targets, {d.name for d in drafts})
        if named:  # operations whose paths are names (``/createAccountHolder``): read by name
            drafts, targets = rest_entities(
                spec.model_copy(update={"tools": [t for t in spec.tools if t.name not in named]})
            )
            more, by_name = read_by_name(spec, named)
            taken = {d.name for d in drafts}
            drafts += [d for d in more if d.name not in taken]
            targets.update(by_name)
            scope_by_path(spec, named, drafts, targets)
        scope_by_key_args(spec, drafts, targets)
        _keep_sub_records(spec, drafts, targets)
        _keep_match_fields(spec, drafts, targets)
    else:
        drafts, targets = tool_entities(spec)
    return EntityInference(finalize_entities(drafts), targets)
