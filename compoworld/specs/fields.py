"""Building FieldSpecs: sanitised names, semantic tags, the flattened input schema, response fields.

Shared by every ingester so a parameter looks the same whether it came from an
OpenAPI query string, a request body property, an MCP input schema or an OpenAI
function: an identifier ``name`` (the source spelling kept in ``original_name``),
its resolved schema, and a semantic tag.
"""

from __future__ import annotations

from typing import Any

from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.model import FieldSpec, ParamLocation
from compoworld.specs.naming import identifier, unique
from compoworld.specs.semantic import tag
from compoworld.specs.shapes import find_wrapper, object_view, primary_type

__all__ = ["input_schema", "make_field", "object_fields", "response_fields"]


def _description(schema: Any, given: Any = None) -> str:
    if isinstance(given, str) and given:
        return given
    if isinstance(schema, dict) and isinstance(schema.get("description"), str):
        return str(schema["description"])
    return ""


def make_field(
    raw_name: str,
    schema: Any,
    *,
    location: ParamLocation,
    required: bool,
    taken: set[str],
    file: str,
    pointer: str | tuple[object, ...],
    entity: str | None = None,
    description: Any = None,
    wanted: str | None = None,
    tag_by_name: bool = True,
) -> FieldSpec:
    """One FieldSpec; ``wanted`` is the name to sanitise if not ``raw_name`` (``body_x`` on a clash).

    ``pointer`` (a string, or tokens joined only on error) locates it for error messages;
    ``tag_by_name=False`` (a made-up name such as ``body``) tags by ``format`` only.
    """
    name = identifier(wanted or raw_name)
    if not name:
        where = pointer if isinstance(pointer, str) else join_pointer(pointer)
        raise SpecError(file, where, f"parameter name {raw_name!r} cannot be sanitised to an identifier")
    name = unique(name, taken)
    schema = schema if isinstance(schema, dict) else {}
    desc = _description(schema, description)
    return FieldSpec(
        name=name,
        original_name=None if name == raw_name else raw_name,
        schema=schema,
        required=required,
        description=desc,
        location=location,
        semantic=tag(raw_name if tag_by_name else "", schema, desc, entity),
    )


def object_fields(
    view: dict[str, Any],
    *,
    location: ParamLocation,
    file: str,
    pointer: tuple[object, ...],
    taken: set[str],
    entity: str | None = None,
    required_ok: bool = True,
    skip_read_only: bool = False,
    clash: set[str] | None = None,
) -> list[FieldSpec]:
    """The properties of an object view as FieldSpecs (``clash``: names that get a ``body_`` prefix)."""
    required = set(view.get("required") or []) if required_ok else set()
    out: list[FieldSpec] = []
    for raw, sub in (view.get("properties") or {}).items():
        if not isinstance(raw, str) or (
            skip_read_only and isinstance(sub, dict) and sub.get("readOnly") is True
        ):
            continue
        wanted = None
        if clash is not None and (raw in clash or identifier(raw) in clash):
            wanted = "body_" + raw
        out.append(
            make_field(
                raw,
                sub,
                location=location,
                required=raw in required,
                taken=taken,
                file=file,
                pointer=(*pointer, "properties", raw),
                entity=entity,
                wanted=wanted,
            )
        )
    return out


def input_schema(params: list[FieldSpec]) -> dict[str, Any]:
    """JSON schema (type object, closed) over flattened params, keyed by their sanitised names."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in params:
        schema = p.json_schema
        if p.description and "description" not in schema:
            schema = {**schema, "description": p.description}
        props[p.name] = schema
        if p.required:
            required.append(p.name)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _response_field(
    raw: str, sub: Any, required: bool, entity: str | None, prefix: tuple[str, str] | None, taken: set[str]
) -> FieldSpec | None:
    name = identifier(raw)
    if not name:
        return None
    full_raw, full = (f"{prefix[0]}.{raw}", f"{prefix[1]}.{name}") if prefix else (raw, name)
    full = unique(full, taken)
    desc = _description(sub)
    return FieldSpec(
        name=full,
        original_name=None if full == full_raw else full_raw,
        schema=sub if isinstance(sub, dict) else {},
        required=required,
        description=desc,
        location="body",
        semantic=tag(raw, sub, desc, entity),
    )


def response_fields(schema: Any, entity: str | None, warnings: list[str], where: str) -> list[FieldSpec]:
    """Top-level fields of a response (an array's items' fields), plus ``data.x`` fields of a wrapper.

    ``entity`` is what the response carries: it tags a bare ``id`` (of the wrapped
    object when there is a wrapper, else of the top level).
    """
    view = object_view(schema)
    if view is None and primary_type(schema) == "array" and isinstance(schema, dict):
        view = object_view(schema.get("items"))
    if view is None:
        return []
    wrapper = find_wrapper(view)
    out: list[FieldSpec] = []
    taken: set[str] = set()
    required = set(view.get("required") or [])
    for raw, sub in (view.get("properties") or {}).items():
        if isinstance(sub, dict) and sub.get("writeOnly") is True:
            continue
        top_entity = None if wrapper is not None else entity
        field = _response_field(str(raw), sub, raw in required, top_entity, None, taken)
        if field is None:
            warnings.append(f"{where}: response field {raw!r} has no usable name; skipped")
            continue
        out.append(field)
        if wrapper is None or raw != wrapper.key:
            continue
        inner_required = set(wrapper.inner.get("required") or [])
        for iraw, isub in wrapper.inner["properties"].items():
            if isinstance(isub, dict) and isub.get("writeOnly") is True:
                continue
            inner = _response_field(str(iraw), isub, iraw in inner_required, entity, (raw, field.name), taken)
            if inner is not None:
                out.append(inner)
    return out
