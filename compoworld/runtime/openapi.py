"""A service's own ``/openapi.json``: its REST routes with their real parameters, bodies and responses.

Written from the manifest (OpenAPI 3.1, whose schemas are JSON Schema), so it says exactly what
the service accepts and answers: parameters under the spec's own names and styles, the request
body in the declared media type (and JSON, which every route also accepts), the declared success
status and body, and the error statuses with the spec's error body or CompoWorld's envelope. An
external client or a fuzzer (schemathesis) can drive the service from it. The uniform tool route
is described too; the admin routes are not (agents never see them).
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ServiceManifest, ToolDef
from compoworld.runtime.rest import RESERVED_PREFIX, RoutePlan

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


def _honest(tool: ToolDef, arg: str, schema: Any) -> Any:
    """The schema of ``arg`` as this service takes it: a list parameter the service refuses
    (``ListBinding.refused``: an option it cannot interpret, a filter on no field it holds)
    admits only its default, or nothing when it has none (``"not": {}``), and says why."""
    refused = tool.listing.refused if tool.listing is not None else {}
    if arg not in refused:
        return schema
    note = _NOT_HONOURED.format(reason=refused[arg])
    if isinstance(schema, dict) and "default" in schema:
        return {"const": schema["default"], "default": schema["default"], "description": note}
    return {"not": {}, "description": note}


def _parameters(tool: ToolDef) -> list[dict[str, Any]]:
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    out: list[dict[str, Any]] = []
    for arg, schema in props.items():
        where = tool.arg_locations.get(arg, "body")
        if where not in ("path", "query", "header"):
            continue
        schema = _honest(tool, arg, schema)
        param: dict[str, Any] = {
            "name": arg if where == "path" else tool.wire_names.get(arg, arg),
            "in": where,
            "required": where == "path" or arg in required,
            "schema": schema,
        }
        if isinstance(schema, dict) and isinstance(schema.get("description"), str):
            param["description"] = schema["description"][:500]
        out.append({**param, **_style(tool, arg)})
    return [*out, _EPISODE_HEADER]


def _request_body(tool: ToolDef) -> dict[str, Any] | None:
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    if tool.body_whole is not None and tool.body_whole in props:
        schema = props[tool.body_whole]
        return {"required": tool.body_whole in required, "content": {"application/json": {"schema": schema}}}
    body = {a: s for a, s in props.items() if tool.arg_locations.get(a, "body") == "body"}
    if not body:
        return None
    wire = {tool.wire_names.get(a, a): _honest(tool, a, s) for a, s in body.items()}
    body_schema: dict[str, Any] = {"type": "object", "properties": wire, "additionalProperties": False}
    needed = [tool.wire_names.get(a, a) for a in body if a in required]
    if needed:
        body_schema["required"] = needed
    content = {"application/json": {"schema": body_schema}}
    media = (tool.body_media or "").split(";")[0].strip().lower()
    if media and media != "application/json" and ("form" in media or "multipart" in media):
        content[media] = {"schema": body_schema}
    return {"required": bool(needed), "content": content}


def _responses(tool: ToolDef) -> dict[str, Any]:
    shape = tool.shape
    success: dict[str, Any] = {"description": "Success"}
    if shape.body:
        success["content"] = {"application/json": {"schema": tool.output_schema or {}}}
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


def _operation(tool: ToolDef) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": tool.name,
        "summary": tool.description.split("\n", 1)[0][:120],
        "parameters": _parameters(tool),
        "responses": _responses(tool),
    }
    if tool.description:
        op["description"] = tool.description
    body = _request_body(tool)
    if body is not None:
        op["requestBody"] = body
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


def openapi_document(manifest: ServiceManifest, plan: RoutePlan) -> dict[str, Any]:
    """The service's OpenAPI 3.1 document."""
    paths: dict[str, Any] = {}
    by_name = {t.name: t for t in manifest.tools}
    for method, path, name in plan.spec_routes:
        paths.setdefault(path, {})[method.lower()] = _operation(by_name[name])
    for path, item in _runtime_paths(plan).items():
        paths.setdefault(path, item)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": manifest.title or manifest.name,
            "version": manifest.version or "0",
            "description": manifest.description[:2000],
        },
        "paths": paths,
    }
