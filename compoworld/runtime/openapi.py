"""A service's own ``/openapi.json``: its REST routes with their real parameters, bodies and responses.

Written from the manifest (OpenAPI 3.1, whose schemas are JSON Schema), so it says exactly what
the service accepts and answers: parameters under the spec's own names and styles, the request
body in the declared media type (and JSON, which every route also accepts), the declared success
status and body, and the error statuses with the spec's error body or CompoWorld's envelope. An
external client or a fuzzer (schemathesis) can drive the service from it. The uniform tool route
is described too; the admin routes are not (agents never see them).
"""

from __future__ import annotations

import re
from typing import Any

from compoworld.manifest import ServiceManifest, ToolDef
from compoworld.runtime.listquery import INTEGER_TEXT, OPERATORS
from compoworld.runtime.rest import RESERVED_PREFIX, RoutePlan
from compoworld.runtime.validate import shapes_typed

__all__ = ["ENVELOPE_SCHEMA", "openapi_document"]

ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "success": {"type": "boolean"},
        "data": {},
        "backend": {"type": "string", "enum": ["implemented", "action", "simulated"]},
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        },
    },
    "required": ["success"],
}
_EPISODE_HEADER: dict[str, Any] = {
    "name": "X-Episode-Id",
    "in": "header",
    "required": False,
    "description": "The episode whose state the call sees (none: the read-only seed view).",
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$"},
}
_ERRORS = {
    "400": "Invalid request (malformed body, episode id or arguments)",
    "404": "Not found (an unknown id)",
    "409": "Conflict (the row exists)",
    "413": "Request body too large",
    "422": "Invalid arguments",
}


def _style(tool: ToolDef, arg: str) -> dict[str, Any]:
    style = tool.arg_styles.get(arg)
    if style == "deepObject":
        return {"style": "deepObject", "explode": True}
    if style == "csv":
        return {"style": "form", "explode": False}
    if style in ("spaceDelimited", "pipeDelimited"):
        return {"style": style, "explode": False}
    return {}


_NOT_HONOURED = "Not honoured by this service ({reason}): a value other than the default is refused (422)."


_VALUE_SCHEMAS: dict[str, dict[str, Any]] = {
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
}


def _column_type(manifest: ServiceManifest | None, tool: ToolDef, column: str) -> str | None:
    entity = next((e for e in manifest.entities if e.name == tool.entity), None) if manifest else None
    found = next((c for c in entity.columns if c.name == column), None) if entity else None
    return found.type if found is not None else None


def _honest(tool: ToolDef, arg: str, schema: Any, manifest: ServiceManifest | None = None) -> Any:
    """The schema of ``arg`` as this service takes it: a list parameter the service refuses
    (``ListBinding.refused``: an option it cannot interpret, a filter on no field it holds)
    admits only its default, or nothing when it has none (``"not": {}``), and says why."""
    refused = tool.listing.refused if tool.listing is not None else {}
    if (
        arg in (tool.limit_arg, tool.offset_arg)
        and isinstance(schema, dict)
        and schema.get("type") == "string"
    ):
        return {**schema, "pattern": "^" + INTEGER_TEXT.pattern + "$"}  # a page size as text: digits
    flt = tool.listing.filters.get(arg) if tool.listing is not None else None
    if flt is not None and flt.op == "ops" and isinstance(schema, dict) and schema.get("type") == "object":
        # an object of operators (created[gte]=...): its keys are operator names, its values the
        # column's type (a number column compares numbers)
        out = {**schema, "propertyNames": {"enum": sorted(OPERATORS)}}
        value = _VALUE_SCHEMAS.get(_column_type(manifest, tool, flt.column) or "")
        if value is not None and "additionalProperties" not in schema and "properties" not in schema:
            out["additionalProperties"] = value
        return out
    if arg not in refused:
        return schema
    note = _NOT_HONOURED.format(reason=refused[arg])
    if isinstance(schema, dict) and "default" in schema:
        return {"const": schema["default"], "default": schema["default"], "description": note}
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "object":  # an empty one asks for nothing, so it is taken
        return {"type": ["object", "null"], "maxProperties": 0, "description": note}
    if kind == "array":
        return {"type": ["array", "null"], "maxItems": 0, "description": note}
    return {"not": {}, "description": note}


def _parameters(tool: ToolDef, manifest: ServiceManifest | None = None) -> list[dict[str, Any]]:
    props = tool.input_schema.get("properties") or {}
    needs = _create_needs(tool, manifest)[0]
    required = set(tool.input_schema.get("required") or []) | needs
    out: list[dict[str, Any]] = []
    for arg, schema in props.items():
        if arg in needs:
            schema = _given(schema)
        where = tool.arg_locations.get(arg, "body")
        if where not in ("path", "query", "header"):
            continue
        schema = _honest(tool, arg, schema, manifest)
        param: dict[str, Any] = {
            "name": arg if where == "path" else tool.wire_names.get(arg, arg),
            "in": where,
            "required": where == "path" or arg in required,
            "schema": schema,
        }
        if isinstance(schema, dict) and isinstance(schema.get("description"), str):
            param["description"] = schema["description"][:500]
        out.append({**param, **_style(tool, arg)})
    marked = set(re.findall(r"[#&]([^=&#]+)=", tool.path or ""))  # what the route dispatches on
    for where, fixed in (("query", tool.fixed_query), ("header", tool.fixed_headers)):
        out += [
            {
                "name": name,
                "in": where,
                "required": name in marked,
                "schema": {"type": "string", "enum": [value]},
            }
            for name, value in fixed.items()
        ]
    return [*out, _EPISODE_HEADER]


def _create_needs(tool: ToolDef, manifest: ServiceManifest | None) -> tuple[set[str], set[str]]:
    """What a create call must give that its input schema may not require: the arguments bound to
    a NOT NULL column the service does not fill itself, and those columns' names inside the nested
    entity object (``body_arg``). ``op_create`` refuses a call without them."""
    if manifest is None or tool.operation != "create" or tool.entity is None:
        return set(), set()
    entity = next((e for e in manifest.entities if e.name == tool.entity), None)
    if entity is None:
        return set(), set()
    args: set[str] = set()
    nested: set[str] = set()
    for column in entity.columns:
        if column.nullable or column.primary_key or column.read_only:
            continue
        bound = [a for a, c in tool.arg_columns.items() if c == column.name and a != tool.pk_arg]
        if bound:
            args.add(bound[0])
        elif tool.body_arg:
            nested.add(column.source_name or column.name)
    return args, nested


_NOT_NULL: dict[str, Any] = {"not": {"type": "null"}}


def _given(schema: Any) -> Any:
    """``schema`` for a create's argument bound to a NOT NULL column: present and not null."""
    return {"allOf": [schema, _NOT_NULL]} if isinstance(schema, dict) else schema


def _request_body(tool: ToolDef, manifest: ServiceManifest | None = None) -> dict[str, Any] | None:
    props = dict(tool.input_schema.get("properties") or {})
    needs, nested = _create_needs(tool, manifest)
    props.update({a: _given(props[a]) for a in needs if a in props})
    required = set(tool.input_schema.get("required") or []) | needs
    body_arg = props.get(tool.body_arg) if tool.body_arg else None
    if nested and isinstance(body_arg, dict) and isinstance(body_arg.get("properties"), dict):
        inner = sorted(set(body_arg.get("required") or []) | (nested & set(body_arg["properties"])))
        props[tool.body_arg] = {**body_arg, "required": inner}  # type: ignore[index]
        required.add(tool.body_arg)  # type: ignore[arg-type]
    if tool.body_whole is not None and tool.body_whole in props:
        schema = props[tool.body_whole]
        whole = {"application/json": {"schema": schema}}
        declared = (tool.body_media or "").split(";")[0].strip().lower()
        if declared and "json" not in declared and declared != "*/*":  # its own media (bytes, text)
            whole[declared] = {"schema": schema}
        return {"required": tool.body_whole in required, "content": whole}
    body = {a: s for a, s in props.items() if tool.arg_locations.get(a, "body") == "body"}
    if not body:
        return None
    wire = {tool.wire_names.get(a, a): _honest(tool, a, s, manifest) for a, s in body.items()}
    body_schema: dict[str, Any] = {"type": "object", "properties": wire, "additionalProperties": False}
    needed = [tool.wire_names.get(a, a) for a in body if a in required]
    if needed:
        body_schema["required"] = needed
    content = {"application/json": {"schema": body_schema}}
    media = (tool.body_media or "").split(";")[0].strip().lower()
    if media and media != "application/json" and ("form" in media or "multipart" in media):
        content[media] = {"schema": body_schema}
    return {"required": bool(needed), "content": content}


def _no_min_items(node: Any) -> Any:
    """A response schema without ``minItems``: a world can hold none of a thing (a page past the
    end, a list with no rows yet), and an answer never invents one to fill a minimum."""
    if isinstance(node, list):
        return [_no_min_items(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {k: _no_min_items(v) for k, v in node.items() if k != "minItems"}


def _responses(tool: ToolDef) -> dict[str, Any]:
    shape = tool.shape
    success: dict[str, Any] = {"description": "Success"}
    if shape.body:
        body = _no_min_items(tool.output_schema or {})
        success["content"] = {"application/json": {"schema": body}}
    error_schema = shape.error_schema or ENVELOPE_SCHEMA
    out: dict[str, Any] = {str(shape.status): success}
    for code_status, text in _ERRORS.items():
        out[code_status] = {"description": text, "content": {"application/json": {"schema": error_schema}}}
    for code, status in shape.errors.items():
        out.setdefault(
            str(status),
            {"description": code, "content": {"application/json": {"schema": error_schema}}},
        )
    return out


def _operation(tool: ToolDef, manifest: ServiceManifest | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": tool.name,
        "summary": tool.description.split("\n", 1)[0][:120],
        "parameters": _parameters(tool, manifest),
        "responses": _responses(tool),
    }
    if tool.description:
        op["description"] = tool.description
    body = _request_body(tool, manifest)
    if body is not None:
        for media in body["content"].values():  # what the argument check holds (shapes_typed)
            media["schema"] = shapes_typed(media["schema"])
        op["requestBody"] = body
    for param in op["parameters"]:
        param["schema"] = shapes_typed(param["schema"])
    return op


def _runtime_paths(plan: RoutePlan) -> dict[str, Any]:
    envelope = {"application/json": {"schema": ENVELOPE_SCHEMA}}
    call = {
        "post": {
            "operationId": "compoworld_call_tool",
            "summary": "Call any tool with JSON arguments; answers the envelope",
            "parameters": [
                {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                _EPISODE_HEADER,
            ],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": {
                "200": {"description": "The tool's result envelope", "content": envelope},
                "404": {"description": "No such tool", "content": envelope},
            },
        }
    }
    listing = {
        "get": {
            "operationId": "compoworld_list_tools",
            "summary": "The tools as OpenAI function schemas",
            "responses": {
                "200": {
                    "description": "Tool schemas",
                    "content": {"application/json": {"schema": {"type": "array"}}},
                }
            },
        }
    }
    health = {
        "get": {
            "operationId": "compoworld_health",
            "summary": "Liveness",
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}
            },
        }
    }
    prefix = "" if "tools" in plan.root else RESERVED_PREFIX
    health_prefix = "" if "health" in plan.root else RESERVED_PREFIX
    return {
        f"{prefix}/tools/{{name}}": call,
        f"{prefix}/tools": listing,
        f"{health_prefix}/health": health,
    }


def _world_ids(node: Any) -> Any:
    """``node`` (a copy) without ``format: uuid``: a simulated service's ids are its world's own
    (``com_uigwq7zkc3``, 32 hex digits), where the real API's are UUIDs, and it takes and answers
    them wherever the spec says uuid; its document says what it does."""
    if isinstance(node, list):
        return [_world_ids(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {k: _world_ids(v) for k, v in node.items() if not (k == "format" and v == "uuid")}


def openapi_document(manifest: ServiceManifest, plan: RoutePlan) -> dict[str, Any]:
    """The service's OpenAPI 3.1 document."""
    paths: dict[str, Any] = {}
    by_name = {t.name: t for t in manifest.tools}
    for method, path, name in plan.spec_routes:
        paths.setdefault(path, {})[method.lower()] = _operation(by_name[name], manifest)
    for path, item in _runtime_paths(plan).items():
        paths.setdefault(path, item)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": manifest.title or manifest.name,
            "version": manifest.version or "0",
            "description": manifest.description[:2000],
        },
        "paths": _world_ids(paths),
    }
