"""OpenAPI 3.0 / 3.1 ingester, and the service assembly shared with Swagger 2.0.

A defective operation (a parameter whose name sanitises to nothing, a dangling
``$ref``, an operationId used twice...) is left out and listed in ``ServiceSpec.defects``
as ``file#pointer: message``; the rest of the document is still built. Only a document
with no usable operation is a SpecError (the first defect). Operations without an
operationId get ``<method>_<path words>``. Named
``components.schemas`` that describe objects are kept, resolved, on the service
for synthesis to build entities from.
"""

from __future__ import annotations

from typing import Any

from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.model import ServiceSpec, SourceKind, ToolSpec
from compoworld.specs.naming import derive_operation_name, service_slug, tool_name, unique_tool_name
from compoworld.specs.refs import Resolver
from compoworld.specs.registry import Ingester, register
from compoworld.specs.rest import HTTP_METHODS, RestBuilder, RestOperation
from compoworld.specs.shapes import object_view, text_of
from compoworld.specs.xml_media import XmlDocument

__all__ = ["INGESTER", "build_rest_service", "detect", "ingest", "security_names"]

_OP_ERRORS = (KeyError, TypeError, AttributeError, IndexError, ValueError)


def detect(doc: Any) -> bool:
    """An OpenAPI 3.x document: ``{"openapi": "3.x", ...}``."""
    return isinstance(doc, dict) and isinstance(doc.get("openapi"), str) and doc["openapi"].startswith("3.")


def security_names(schemes: Any, resolver: Resolver, at: tuple[object, ...]) -> dict[str, set[str]]:
    """Header/query/cookie names that carry API keys, from security schemes."""
    out: dict[str, set[str]] = {}
    if not isinstance(schemes, dict):
        return out
    for key, raw in schemes.items():
        scheme, _ = resolver.deref(raw, (*at, key))
        if (
            isinstance(scheme, dict)
            and scheme.get("type") == "apiKey"
            and isinstance(scheme.get("name"), str)
        ):
            out.setdefault(str(scheme.get("in")), set()).add(scheme["name"])
    return out


def _operations(doc: dict[str, Any], resolver: Resolver) -> list[RestOperation]:
    paths = doc.get("paths")
    if paths is None:
        return []
    if not isinstance(paths, dict):
        raise SpecError(resolver.file, "/paths", "'paths' must be an object")
    ops: list[RestOperation] = []
    for path, raw_item in paths.items():
        if str(path).startswith("x-"):
            continue
        item, item_at = resolver.deref(raw_item, ("paths", path))
        if not isinstance(item, dict):
            raise SpecError(resolver.file, join_pointer(item_at), "path item must be an object")
        shared = item.get("parameters")
        for method, op in item.items():
            if not isinstance(method, str) or method.lower() not in HTTP_METHODS:
                continue
            if not isinstance(op, dict):
                raise SpecError(
                    resolver.file, join_pointer((*item_at, method)), "operation must be an object"
                )
            ops.append(
                RestOperation(
                    method=method,
                    path=str(path),
                    op=op,
                    at=(*item_at, method),
                    shared_params=shared if isinstance(shared, list) else [],
                    shared_at=(*item_at, "parameters"),
                )
            )
    return ops


def _names(
    ops: list[RestOperation], file: str, warnings: list[str]
) -> list[tuple[str, str | None] | SpecError]:
    """A tool name (and the operationId it came from) per operation, or the SpecError that rules it out."""
    seen: dict[str, str] = {}
    taken: set[str] = set()
    names: list[tuple[str, str | None] | SpecError] = []
    for rop in ops:
        pointer = join_pointer(rop.at)
        opid = rop.op.get("operationId")
        if isinstance(opid, int | float) and not isinstance(opid, bool):
            opid = str(opid)
        if isinstance(opid, str) and opid.strip():
            if opid in seen:
                names.append(
                    SpecError(file, pointer, f"duplicate operationId {opid!r} (also at #{seen[opid]})")
                )
                continue
            seen[opid] = pointer
            base = tool_name(opid)
            if not base:
                names.append(
                    SpecError(file, pointer, f"operationId {opid!r} cannot be sanitised to a tool name")
                )
                continue
        else:
            opid, base = None, derive_operation_name(rop.method, rop.path)
        name = unique_tool_name(base, taken)
        if name != base:
            warnings.append(f"#{pointer}: tool name {base!r} taken; renamed {name!r}")
        names.append((name, None if opid == name else opid))
    return names


def build_rest_service(
    doc: dict[str, Any],
    source_file: str,
    kind: SourceKind,
    resolver: Resolver,
    ops: list[RestOperation],
    schemas_at: tuple[str, ...],
    security: dict[str, set[str]],
) -> ServiceSpec:
    """Assemble a ServiceSpec from REST operations (OpenAPI 3 shaped) of ``doc``."""
    if not ops:
        raise SpecError(source_file, "/paths", "no operations")
    builder = RestBuilder(resolver, security, len(ops), XmlDocument(doc))
    tools: list[ToolSpec] = []
    defects: list[SpecError] = []
    for rop, named in zip(ops, _names(ops, source_file, resolver.warnings), strict=True):
        if isinstance(named, SpecError):
            defects.append(named)
            continue
        try:
            tools.append(builder.tool(rop, *named))
        except SpecError as exc:
            defects.append(exc)
        except _OP_ERRORS as exc:
            defects.append(SpecError(source_file, join_pointer(rop.at), f"malformed operation: {exc}"))
    if not tools:  # nothing usable: the document itself is the defect
        raise defects[0]
    schemas: dict[str, dict[str, Any]] = {}
    node: Any = doc
    for token in schemas_at:
        node = node.get(token) if isinstance(node, dict) else None
    if isinstance(node, dict):
        for key, raw in node.items():
            resolved = resolver.schema_within(raw, (*schemas_at, key), builder.budget)
            if isinstance(resolved, dict) and object_view(resolved) is not None:
                schemas[str(key)] = resolved
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    assert isinstance(info, dict)
    title = info.get("title") if isinstance(info.get("title"), str) else ""
    provider, service = info.get("x-providerName"), info.get("x-serviceName")
    categories = info.get("x-apisguru-categories")
    return ServiceSpec(
        name=service_slug(
            source_file,
            str(title),
            provider if isinstance(provider, str) else None,
            service if isinstance(service, str) else None,
        ),
        title=str(title),
        description=text_of(info.get("description")),
        version=str(info.get("version", "")),
        source_kind=kind,
        source_file=source_file,
        categories=[str(c) for c in categories if isinstance(c, str)] if isinstance(categories, list) else [],
        tools=tools,
        schemas=schemas,
        warnings=resolver.warnings,
        defects=[str(d) for d in defects],
    )


def ingest(doc: Any, source_file: str) -> ServiceSpec:
    """Ingest an OpenAPI 3.0/3.1 document."""
    if not isinstance(doc, dict):
        raise SpecError(source_file, "", "an OpenAPI document must be an object")
    resolver = Resolver(doc, source_file)
    components = doc.get("components") if isinstance(doc.get("components"), dict) else {}
    security = security_names(
        components.get("securitySchemes") if isinstance(components, dict) else None,
        resolver,
        ("components", "securitySchemes"),
    )
    ops = _operations(doc, resolver)
    return build_rest_service(
        doc, source_file, "openapi3", resolver, ops, ("components", "schemas"), security
    )


INGESTER = register(Ingester(name="openapi3", detect=detect, ingest=ingest, priority=10))
