"""Swagger 2.0 ingester: operations are converted to the OpenAPI 3 shape, then built like OpenAPI.

Only the operation envelope is converted (``in: body`` -> ``requestBody``,
``formData`` -> a form body, parameter type keywords -> ``schema``, response
``schema`` -> ``content``); schemas keep their ``#/definitions/...`` references,
which resolve against the original document, so pointers in errors stay true.
"""

from __future__ import annotations

from typing import Any

from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.model import ServiceSpec
from compoworld.specs.openapi import build_rest_service, security_names
from compoworld.specs.refs import Resolver, file_as_binary
from compoworld.specs.registry import Ingester, register
from compoworld.specs.rest import HTTP_METHODS, RestOperation

__all__ = ["INGESTER", "convert_operation", "detect", "ingest"]

_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
    "x-nullable",
)


def detect(doc: Any) -> bool:
    """A Swagger 2.0 document: ``{"swagger": "2.0", ...}``."""
    return isinstance(doc, dict) and str(doc.get("swagger", "")).startswith("2")


def _param_schema(param: dict[str, Any]) -> dict[str, Any]:
    schema = {k: param[k] for k in _SCHEMA_KEYS if k in param}
    return file_as_binary(schema) if schema else {"type": "string"}


def _json_media(types: Any) -> str:
    if isinstance(types, list):
        for t in types:
            if isinstance(t, str) and "json" in t:
                return t
    return "application/json"


def convert_operation(
    doc: dict[str, Any],
    resolver: Resolver,
    op: dict[str, Any],
    at: tuple[object, ...],
    shared: list[Any],
    shared_at: tuple[object, ...],
) -> dict[str, Any]:
    """One Swagger 2.0 operation (with its path-level parameters merged in) in OpenAPI 3 shape."""
    consumes = op.get("consumes") or doc.get("consumes") or []
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for source, base in ((shared, shared_at), (op.get("parameters") or [], (*at, "parameters"))):
        if not isinstance(source, list):
            raise SpecError(resolver.file, join_pointer(base), "parameters must be a list")
        for i, raw in enumerate(source):
            param, p_at = resolver.deref(raw, (*base, i))
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                raise SpecError(resolver.file, join_pointer(p_at), "parameter needs a string 'name' and 'in'")
            merged[(param["name"], str(param.get("in")))] = param
    params: list[dict[str, Any]] = []
    body: dict[str, Any] | None = None
    form: dict[str, Any] = {}
    form_required: list[str] = []
    has_file = False
    for (name, where), param in merged.items():
        if where == "body":
            body = {"content": {_json_media(consumes): {"schema": param.get("schema", {})}}}
            if "required" in param:
                body["required"] = param["required"] is True
            if isinstance(param.get("description"), str):
                body["description"] = param["description"]
        elif where == "formData":
            form[name] = {
                **_param_schema(param),
                **({"description": param["description"]} if "description" in param else {}),
            }
            has_file = has_file or param.get("type") == "file"
            if param.get("required") is True:
                form_required.append(name)
        else:
            converted = {k: v for k, v in param.items() if k not in _SCHEMA_KEYS and k != "collectionFormat"}
            converted["schema"] = _param_schema(param)
            if param.get("type") == "array":
                # Swagger's default is csv (one comma-joined value), OpenAPI 3's is exploded form
                fmt = str(param.get("collectionFormat") or "csv")
                converted["style"], converted["explode"] = _COLLECTION_STYLES.get(fmt, ("form", False))
            params.append(converted)
    if body is None and form:
        media = "multipart/form-data" if has_file or "multipart/form-data" in consumes else _FORM
        body = {
            "content": {media: {"schema": {"type": "object", "properties": form, "required": form_required}}}
        }
    responses: dict[str, Any] = {}
    raw_responses = op.get("responses")
    for code, raw in raw_responses.items() if isinstance(raw_responses, dict) else []:
        resp, _ = resolver.deref(raw, (*at, "responses", str(code)))
        if not isinstance(resp, dict):
            continue
        converted_resp: dict[str, Any] = {"description": resp.get("description", "")}
        if "schema" in resp:
            converted_resp["content"] = {"application/json": {"schema": resp["schema"]}}
        responses[str(code)] = converted_resp
    out = {k: v for k, v in op.items() if k not in ("parameters", "responses", "consumes", "produces")}
    out["parameters"] = params
    out["responses"] = responses
    if body is not None:
        out["requestBody"] = body
    return out


_FORM = "application/x-www-form-urlencoded"
#: Swagger 2 ``collectionFormat`` -> OpenAPI 3 (style, explode).
_COLLECTION_STYLES = {
    "csv": ("form", False),
    "multi": ("form", True),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "tsv": ("tabDelimited", False),
}


def ingest(doc: Any, source_file: str) -> ServiceSpec:
    """Ingest a Swagger 2.0 document."""
    if not isinstance(doc, dict):
        raise SpecError(source_file, "", "a Swagger document must be an object")
    resolver = Resolver(doc, source_file)
    paths = doc.get("paths")
    if paths is not None and not isinstance(paths, dict):
        raise SpecError(source_file, "/paths", "'paths' must be an object")
    ops: list[RestOperation] = []
    for path, raw_item in (paths or {}).items():
        if str(path).startswith("x-"):
            continue
        item, item_at = resolver.deref(raw_item, ("paths", path))
        if not isinstance(item, dict):
            raise SpecError(source_file, join_pointer(item_at), "path item must be an object")
        shared = item.get("parameters") or []
        for method, op in item.items():
            if not isinstance(method, str) or method.lower() not in HTTP_METHODS:
                continue
            at = (*item_at, method)
            if not isinstance(op, dict):
                raise SpecError(source_file, join_pointer(at), "operation must be an object")
            converted = convert_operation(doc, resolver, op, at, shared, (*item_at, "parameters"))
            ops.append(RestOperation(method=method, path=str(path), op=converted, at=at))
    security = security_names(doc.get("securityDefinitions"), resolver, ("securityDefinitions",))
    return build_rest_service(doc, source_file, "swagger2", resolver, ops, ("definitions",), security)


INGESTER = register(Ingester(name="swagger2", detect=detect, ingest=ingest, priority=10))
