"""Classify every tool (create/read/list/search/update/delete/action, read vs write) and bind it.

A binding says which argument names the row (``pk_arg``), which arguments set or filter which
columns (``arg_columns``), and where paging and free text go. A tool whose binding would be
incomplete (an update without an id argument, a create whose required arguments have no column)
is served by the world model instead: ``backend: "simulated"`` with the reason.
"""

from __future__ import annotations

import re
from typing import Any

from compoworld.manifest import READ_OPERATIONS, ColumnDef, EntityDef, ListBinding, ResponseShape, ToolDef
from compoworld.specs.model import FieldSpec, ServiceSpec, ToolSpec
from compoworld.specs.semantic import value_tag
from compoworld.specs.shapes import json_type
from compoworld.synth.actions import ActionBinding, bind_action, bind_patch
from compoworld.synth.bulkreads import bind_bulk_reads
from compoworld.synth.entities import EntityInference, Target
from compoworld.synth.filterexprs import bind_query_strings, open_values, searches_by_body
from compoworld.synth.listparams import ListBinder, json_choices, language_choices
from compoworld.synth.naming import match_key
from compoworld.synth.outputs import (
    delete_schema,
    entity_schema,
    list_schema,
    row_semantics,
    schema_semantics,
)
from compoworld.synth.readside import read_params
from compoworld.synth.resources import path_param
from compoworld.synth.responses import holds, json_schema_of, response_shape, status_shape
from compoworld.synth.toolnames import READ_ACTION_VERBS, VERBS, parse_tool_name
from compoworld.synth.unbound import Unbound

__all__ = ["classify_tool", "classify_tools", "fastapi_path"]

_IGNORED_LOCATIONS = {"header", "query"}
_PATH_PARAM = re.compile(r"\{([^{}]+)\}")
_MAX_DESCRIPTION = 1000


def fastapi_path(tool: ToolSpec) -> str | None:
    """The REST path with its {variables} renamed to the sanitised argument names."""
    if not tool.path:
        return None

    def rename(match: re.Match[str]) -> str:
        param = path_param(tool, match.group(1))
        return "{" + (param.name if param is not None else match.group(1)) + "}"

    return _PATH_PARAM.sub(rename, tool.path)


def _column_for(entity: EntityDef, name: str, original: str | None = None) -> ColumnDef | None:
    """The column an argument (or a nested property) names, blind to case and separators."""
    for candidate in (name, original):
        if not candidate:
            continue
        for c in entity.columns:
            if c.name == candidate or c.source_name == candidate:
                return c
        key = match_key(candidate)
        found = next((c for c in entity.columns if match_key(c.source_name or c.name) == key), None)
        if found is not None:
            return found
    return None


def _nested_entity_arg(tool: ToolSpec, entity: EntityDef) -> FieldSpec | None:
    """An object argument whose properties are mostly the entity's columns."""
    for p in tool.params:
        props = p.json_schema.get("properties")
        if json_type(p.json_schema) != "object" or not isinstance(props, dict) or not props:
            continue
        if p.location not in ("body", "arg"):
            continue
        own = _column_for(entity, p.name, p.original_name)
        if own is not None and own.type == "json" and match_key(p.name) != match_key(entity.name):
            continue  # a task's ``assignee: {id, name, email}`` is a column of the task, not the task
        hits = sum(1 for k in props if _column_for(entity, k) is not None)
        if match_key(p.name) == match_key(entity.name) or hits * 2 >= len(props):
            return p
    return None


def _kind(tool: ToolSpec, operation: str) -> str:
    if operation in READ_OPERATIONS:
        return "read"
    if operation != "action":
        return "write"
    if tool.method:
        return "read" if tool.method.upper() in ("GET", "HEAD") else "write"
    parsed = parse_tool_name(tool.original_name or tool.name)
    verb = parsed.verb or ""
    if VERBS.get(verb) in READ_OPERATIONS or verb in READ_ACTION_VERBS:
        return "read"
    return "write"


class _Binder:
    """Builds the binding of one tool to its entity, collecting why it cannot be implemented."""

    def __init__(self, tool: ToolSpec, target: Target, entity: EntityDef) -> None:
        self.tool = tool
        self.target = target
        self.entity = entity
        self.operation = target.operation
        self.fields: dict[str, Any] = {}
        self.problem: str | None = None

    def bind(self) -> None:
        op = self.operation
        if op in ("read", "update", "delete"):
            if self.target.pk_param is None:
                self.problem = f"{op} tool has no argument naming the {self.entity.name}"
                return
            self.fields["pk_arg"] = self.target.pk_param
            self.fields["arg_columns"] = self._parent_columns()
        if op == "read":
            self._bind_read_params()
        if op in ("list", "search"):
            self._bind_list()
        if op in ("create", "update"):
            self._bind_write()

    def _bind_read_params(self) -> None:
        """A read's other parameters: a field the row must hold, else refused by name (an unbindable
        required one leaves the read with the world model: ``readside.read_params``)."""
        bound = {self.target.pk_param, *self.target.parent_params, *self.fields["arg_columns"]}
        try:
            named, refused = read_params(self.tool, self.entity, bound)
        except Unbound as unbound:
            self.problem = str(unbound)
            return
        self.fields["arg_columns"].update(named)
        if refused:
            self.fields["listing"] = ListBinding(refused=refused)

    def _parent_columns(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for arg, parent in self.target.parent_params.items():
            column = next((c for c in self.entity.columns if c.ref == parent), None)
            if column is not None:
                out[arg] = column.name
        return out

    def _bind_list(self) -> None:
        binder = ListBinder(self.entity, self._parent_columns())
        binder.bind(list(self.tool.params))
        self.fields.update(binder.fields)
        if "search_arg" in binder.fields:
            self.operation = "search"
        self.fields["arg_columns"] = binder.arg_columns
        self.fields["listing"] = binder.listing
        self.problem = binder.problem

    def _bind_write(self) -> None:
        # an update never moves a row to another parent: parent path arguments only scope it
        arg_columns = self._parent_columns() if self.operation == "create" else {}
        nested = _nested_entity_arg(self.tool, self.entity)
        if nested is not None:
            self.fields["body_arg"] = nested.name
        pk_arg = self.fields.get("pk_arg")
        # body fields first: a body ``status`` wins over a query ``status`` for the same column
        ordered = sorted(self.tool.params, key=lambda q: q.location not in ("body", "arg"))
        for p in ordered:
            if p.name in arg_columns or p.name == pk_arg or p.name in self.target.parent_params:
                continue
            if json_choices(p) is not None:  # a response format, not a field
                continue
            if nested is not None and p.name == nested.name:
                continue
            column = _column_for(self.entity, p.name, p.original_name)
            if column is not None and not holds(column, p.json_schema):  # an object of another shape
                column = None
            if column is None and language_choices(p) is not None:  # the answer's language
                continue
            if column is not None and column.name in arg_columns.values():
                continue
            if column is not None and not (self.operation == "update" and column.primary_key):
                arg_columns[p.name] = column.name
            elif p.required and p.location not in _IGNORED_LOCATIONS:
                self.problem = f"required argument '{p.name}' maps to no column of {self.entity.name}"
        if self.operation == "create":
            bound = set(arg_columns.values())
            for c in self.entity.columns:
                if not c.nullable and not c.primary_key and c.name not in bound and nested is None:
                    self.problem = f"required column '{c.name}' of {self.entity.name} is set by no argument"
        if (
            set(arg_columns) <= set(self.target.parent_params)
            and nested is None
            and self.operation == "update"
        ):
            self.problem = f"update tool sets no column of {self.entity.name}"
        self.fields["arg_columns"] = arg_columns


def _input_schema(
    tool: ToolSpec, binding: dict[str, Any], entity: EntityDef | None, *, typed: bool
) -> dict[str, Any]:
    """The spec's argument schema, closed; an id argument declared as text for an integer key
    (``/customers/{id}`` with ``id: string``) also accepts the integer the service returns, and an
    argument stored in a column with an enum (a form field ``status`` for ``Pet.status``) takes that enum,
    and a selector of the answer's wire format or (on a tool served from typed state) of its text's
    language takes only the values the service can answer: JSON, and the one language its state holds."""
    schema = dict(tool.input_schema) if tool.input_schema else {}
    schema["type"] = "object"
    props = dict(schema.get("properties") or {})
    if entity is not None:
        id_args = {binding.get("pk_arg"): entity.pk, **binding.get("arg_columns", {})}
        for arg, column_name in id_args.items():
            column = entity.column(column_name) if arg in props else None
            if column is None or not (column.primary_key or column.ref) or column.type != "integer":
                continue
            if (
                isinstance(props[arg], dict)
                and props[arg].get("type") == "string"
                and "enum" not in props[arg]
            ):
                props[arg] = {**props[arg], "type": ["string", "integer"]}
        for arg, column_name in binding.get("arg_columns", {}).items():
            column = entity.column(column_name) if arg in props else None
            allowed = [v for v in (column.enum or []) if v is not None] if column is not None else []
            if allowed and isinstance(props[arg], dict) and "enum" not in props[arg]:
                # the state only holds these values: say so to the caller instead of storing another
                props[arg] = {**props[arg], "enum": allowed}
    listing = binding.get("listing")
    expressions = listing.expressions if isinstance(listing, ListBinding) else None
    if expressions is not None and isinstance(props.get(expressions.arg), dict):
        props[expressions.arg] = open_values(props[expressions.arg], expressions)
    bound = set(binding.get("arg_columns", {}))
    for p in tool.params:  # the service answers JSON (in its one language): a selector takes only that
        choices, language = json_choices(p), None
        if choices is None and typed and p.name not in bound:
            choices = language = language_choices(p)
        if choices is not None and isinstance(props.get(p.name), dict):
            props[p.name] = {**props[p.name], "enum": choices}
            if props[p.name].get("default") not in (None, *choices) or (
                language and "default" not in props[p.name]
            ):
                props[p.name]["default"] = choices[0]  # a list serves a refused argument at its default
    schema["properties"] = props
    schema["additionalProperties"] = False
    return schema


def _arg_semantics(
    tool: ToolSpec, binding: dict[str, Any], entity: EntityDef | None, target: Target
) -> dict[str, str]:
    out: dict[str, str] = {}
    columns = binding.get("arg_columns", {})
    for p in tool.params:
        tag: str | None = p.semantic
        if entity is not None and p.name in (binding.get("pk_arg"), target.pk_param):
            tag = f"id:{entity.name}"
        elif p.name in target.parent_params:
            tag = f"id:{target.parent_params[p.name]}"
        elif entity is not None and p.name in columns:
            column = entity.column(columns[p.name])
            tag = tag or (column.semantic if column is not None else None)
        tag = tag or value_tag(p.name, p.json_schema)
        if tag:
            out[p.name] = tag
    return out


def _wire_names(tool: ToolSpec) -> dict[str, str]:
    """Argument -> the spec's own name, for query, header and body fields named otherwise (``from``,
    ``page[size]``, ``_id``); path variables are renamed in the route itself."""
    return {
        p.name: p.original_name
        for p in tool.params
        if p.original_name and p.original_name != p.name and p.location in ("query", "header", "body")
    }


def _arg_styles(tool: ToolSpec) -> dict[str, str]:
    """Argument -> how a query array or object travels, where not one repeated key per value."""
    out: dict[str, str] = {}
    for p in tool.params:
        if p.location != "query" or json_type(p.json_schema) not in ("array", "object"):
            continue
        if p.style == "deepObject":
            out[p.name] = "deepObject"
        elif p.style in ("spaceDelimited", "pipeDelimited", "tabDelimited"):
            out[p.name] = p.style
        elif p.explode is False and json_type(p.json_schema) == "array":
            out[p.name] = "csv"
    return out


def _whole_body(tool: ToolSpec) -> str | None:
    """The argument carrying a request body that is not an object (it travels as the body itself)."""
    if tool.body_is_object:
        return None
    return next((p.name for p in tool.params if p.location == "body"), None)


def _implemented_output(
    tool: ToolSpec, operation: str, entity: EntityDef
) -> tuple[dict[str, Any], dict[str, str], ResponseShape]:
    """The body schema, output semantics and response shape of an implemented tool.

    The spec's declared success body where it declares one (``compoworld.synth.responses``),
    else CompoWorld's own: a row, ``{"items": [...], "total": n}``, ``{"deleted": true, "id": key}``.
    """
    declared, shape = response_shape(tool, operation, entity)
    prefix = "".join(f"{k}." for k in shape.rows_at)
    if shape.many:
        prefix = prefix[:-1] + "[]." if prefix else "[]."
    semantics = row_semantics(entity, prefix, shape.fields)
    if declared is not None:
        return declared, semantics, shape
    if not shape.body:
        return {}, {}, shape
    if operation in ("list", "search"):
        return list_schema(entity), semantics, shape
    if operation == "delete":
        return delete_schema(entity), {"id": f"id:{entity.name}"}, shape
    return entity_schema(entity), semantics, shape


def _spec_output(tool: ToolSpec) -> tuple[dict[str, Any], dict[str, str]]:
    """The declared body schema (as JSON Schema) and its semantics, for a tool without typed rows."""
    hints = {f.name: f.semantic for f in tool.response_fields if f.semantic}
    output_schema = json_schema_of(tool.output_schema) if tool.output_schema else {"type": "object"}
    return output_schema, schema_semantics(tool.output_schema, hints)


def _action_tool(tool: ToolSpec, target: Target, bound: ActionBinding, inference: EntityInference) -> ToolDef:
    """The ToolDef of an action served as a typed state change (backend ``action``)."""
    entity = inference.entity(bound.entity)
    written = inference.entity(bound.action.target)
    assert entity is not None and written is not None
    binding = {"pk_arg": bound.pk_arg, "arg_columns": bound.arg_columns, "listing": bound.listing}
    response: ResponseShape | None
    lookup = bound.action.kind in ("lookup", "count")  # reads of typed state
    if bound.action.returns == "row":  # the written row, in the body the spec declares (the shaper's)
        output_schema, output_semantics, response = _implemented_output(
            tool, "read" if lookup else "update", written
        )
    else:
        output_schema, output_semantics = _spec_output(tool)
        response = status_shape(tool)
    return ToolDef(
        name=tool.name,
        description=tool.description[:_MAX_DESCRIPTION],
        kind="read" if lookup else "write",
        operation="action",
        backend="action",
        entity=entity.name,
        method=(tool.method or "POST").upper(),
        path=fastapi_path(tool),
        input_schema=_input_schema(tool, binding, entity if bound.pk_arg else written, typed=True),
        output_schema=output_schema,
        arg_locations={p.name: p.location if p.location != "arg" else "body" for p in tool.params},
        arg_columns=bound.arg_columns,
        pk_arg=bound.pk_arg,
        body_arg=bound.body_arg,
        arg_semantics=_arg_semantics(tool, binding, entity, target),
        output_semantics=output_semantics,
        action=bound.action,
        listing=bound.listing or (ListBinding(refused=bound.refused) if bound.refused else None),
        search_arg=bound.search_arg,
        response=response,
        wire_names=_wire_names(tool),
        arg_styles=_arg_styles(tool),
        body_media=tool.body_media,
        body_whole=_whole_body(tool),
        fixed_headers=tool.fixed_headers,
        fixed_query=tool.fixed_query,
    )


def _read_by_fields(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionBinding | None:
    """A read that names no key but whose path parameters all name fields of the row it answers
    (Weatherbit's ``/forecast/daily?lat={lat}&lon={lon}``, read by its name): the lookup of the row
    holding them (``readside.bind_field_match``), as a keyless REST read is; else None."""
    if target.operation != "read" or target.pk_param is not None or target.entity is None:
        return None
    if (tool.method or "GET").upper() != "GET":
        return None
    try:
        return bind_action(
            tool, Target(target.entity, "action", parent_params=target.parent_params), inference
        )
    except Unbound:
        return None


def classify_tool(tool: ToolSpec, target: Target, inference: EntityInference) -> ToolDef:
    """The ToolDef of one tool: operation, kind, backend, binding, schemas and semantics."""
    entity = inference.entity(target.entity)
    binding: dict[str, Any] = {}
    operation = target.operation
    reason = target.reason
    if operation == "action" and entity is not None and target.pk_param is None and searches_by_body(tool):
        operation = "search"  # ``POST /V1.0/Contracts/query {"filter": [...]}``: the entity's search
    if operation == "action":
        try:
            bound = bind_action(tool, target, inference)
        except Unbound as unbound:
            reason = reason or str(unbound)
        else:
            return _action_tool(tool, target, bound, inference)
    patched = bind_patch(tool, target, inference) if operation == "update" else None
    if patched is not None:  # ``PATCH /rooms/{roomNumber} [{op, path, value}]``: RFC 6902
        return _action_tool(tool, target, patched, inference)
    by_fields = _read_by_fields(tool, target, inference)
    if by_fields is not None:
        return _action_tool(tool, target, by_fields, inference)
    if entity is not None and operation != "action":
        binder = _Binder(tool, target, entity)
        binder.bind()
        operation, binding = binder.operation, binder.fields
        reason = binder.problem
    elif operation != "action":
        reason = reason or "no entity to bind to"
    implemented = reason is None and entity is not None and operation != "action"
    response: ResponseShape | None = None
    if implemented:
        assert entity is not None
        output_schema, output_semantics, response = _implemented_output(tool, operation, entity)
    else:
        output_schema, output_semantics = _spec_output(tool)
        response = status_shape(tool)
    return ToolDef(
        name=tool.name,
        description=tool.description[:_MAX_DESCRIPTION],
        kind=_kind(tool, operation),  # type: ignore[arg-type]
        operation=operation,  # type: ignore[arg-type]
        backend="implemented" if implemented else "simulated",
        simulated_reason=None if implemented else reason,
        entity=entity.name if entity is not None else None,
        method=(tool.method or "POST").upper(),
        path=fastapi_path(tool),
        input_schema=_input_schema(tool, binding if implemented else {}, entity, typed=implemented),
        output_schema=output_schema,
        arg_locations={p.name: p.location if p.location != "arg" else "body" for p in tool.params},
        wire_names=_wire_names(tool),
        arg_styles=_arg_styles(tool),
        body_media=tool.body_media,
        body_whole=_whole_body(tool),
        fixed_headers=tool.fixed_headers,
        fixed_query=tool.fixed_query,
        arg_columns=binding.get("arg_columns", {}) if implemented else {},
        pk_arg=binding.get("pk_arg") if implemented else None,
        body_arg=binding.get("body_arg") if implemented else None,
        search_arg=binding.get("search_arg") if implemented else None,
        limit_arg=binding.get("limit_arg") if implemented else None,
        offset_arg=binding.get("offset_arg") if implemented else None,
        listing=binding.get("listing") if implemented else None,
        arg_semantics=_arg_semantics(tool, binding, entity, target),
        output_semantics=output_semantics,
        response=response,
    )


def classify_tools(spec: ServiceSpec, inference: EntityInference) -> list[ToolDef]:
    """ToolDefs for every tool of the service, in source order (a batch read of a one-row read's
    rows is bound to that read: ``compoworld.synth.bulkreads``; a GET twin of a filter-expression
    POST reads its query string as that POST's body: ``compoworld.synth.filterexprs``)."""
    tools = [
        classify_tool(tool, inference.targets.get(tool.name) or Target(None, "action"), inference)
        for tool in spec.tools
    ]
    return bind_query_strings(bind_bulk_reads(tools))
