"""A service's own REST routes: the spec's paths and methods, its request formats, its response bodies.

``plan_routes`` decides where everything is mounted. The spec's paths win: a runtime route
(``/health``, ``/tools``, ``/admin``, ``/openapi.json``, ``/docs``, ``/redoc``) whose first
segment a spec path also uses is served only under ``RESERVED_PREFIX`` (``/_compoworld``); every
runtime route is served there too, so a client that must not guess (the orchestrator) always
uses the prefixed form. ``rest_handler`` turns one request in the spec's wire format into tool
arguments (``compoworld.runtime.wire``) and answers the spec's body and status. A path naming
one parameter twice (Azure's ``/resourceGroups/System.{location}/.../fabricLocations/{location}``)
is routed with the repeat renamed (``route_path``; Starlette refuses a repeated name): the tool
takes the parameter from its first place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from compoworld.contracts import ToolResult
from compoworld.manifest import ServiceManifest, XmlWire
from compoworld.runtime.query_routes import query_template
from compoworld.runtime.service import ServiceRuntime
from compoworld.runtime.shape import Shaper
from compoworld.runtime.wire import WireFormat, is_xml_media, media_kind, parse_form
from compoworld.runtime.xml_body import render, render_error, request_id
from compoworld.sanitize import InputRefused, Limits, load_json

__all__ = [
    "RESERVED_PREFIX",
    "RUNTIME_ROUTES",
    "Rejected",
    "RoutePlan",
    "json_response",
    "plan_routes",
    "rest_handler",
    "rest_response",
    "route_path",
]

#: Where the runtime's own routes are always served, whatever paths the spec declares.
RESERVED_PREFIX = "/_compoworld"
#: The runtime's own top-level routes, by first path segment.
RUNTIME_ROUTES = ("health", "tools", "admin", "openapi.json", "docs", "redoc")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_PATH_PARAM = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)(:[a-zA-Z_][a-zA-Z0-9_]*)?\}")  # Starlette's


def route_path(path: str) -> str:
    """``path`` as a Starlette route: each repeat of a parameter name captured as ``<name>__<n>``."""
    found = [m.group(1) for m in _PATH_PARAM.finditer(path)]
    if len(set(found)) == len(found):
        return path
    taken = set(found)
    seen: set[str] = set()

    def rename(match: re.Match[str]) -> str:
        name, n = match.group(1), 2
        if name not in seen:
            seen.add(name)
            return match.group(0)
        while f"{name}__{n}" in taken:
            n += 1
        taken.add(f"{name}__{n}")
        return "{" + f"{name}__{n}" + (match.group(2) or "") + "}"

    return _PATH_PARAM.sub(rename, path)


def json_response(payload: Any, status: int = 200) -> Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return Response(body, status_code=status, media_type="application/json")


class Rejected(Exception):
    """A request refused before any tool ran; carries the failure to answer with."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.message)
        self.result = result


@dataclass
class RoutePlan:
    """Which runtime routes stay at the root, and which spec routes are served."""

    root: set[str] = field(default_factory=set)
    moved: set[str] = field(default_factory=set)
    spec_routes: list[tuple[str, str, str]] = field(default_factory=list)

    def at(self, route: str) -> list[str]:
        """The prefixes a runtime route is served under ("" is the root)."""
        return ["", RESERVED_PREFIX] if route in self.root else [RESERVED_PREFIX]


def _first_segment(path: str) -> str:
    return path.strip("/").split("/", 1)[0].lower()


def plan_routes(manifest: ServiceManifest) -> RoutePlan:
    """Spec routes (method, path, tool; first tool wins a duplicate) and where the runtime's go."""
    plan = RoutePlan()
    seen: set[tuple[str, str]] = set()
    for tool in manifest.tools:
        if not tool.path or (tool.method, tool.path) in seen or tool.path.startswith(RESERVED_PREFIX):
            continue
        seen.add((tool.method, tool.path))
        plan.spec_routes.append((tool.method, tool.path, tool.name))
        first = _first_segment(tool.path)
        if first in RUNTIME_ROUTES:
            plan.moved.add(first)
    plan.root = {r for r in RUNTIME_ROUTES if r not in plan.moved}
    return plan


def rest_response(result: ToolResult, shaper: Shaper | None = None) -> Response:
    """A REST route's answer: the success body itself with its status (nothing at all for a 204);
    a failure as the spec's declared error body where it declares one, else as the envelope. A tool
    whose spec declares its body only as XML answers both in that XML (``compoworld.runtime.xml_body``)."""
    wire = shaper.shape.xml if shaper is not None else None
    if wire is not None and shaper is not None:
        return _xml_response(result, shaper, wire)
    if result.success:
        if not result.has_body:
            return Response(status_code=result.status)
        return json_response(result.data, result.status)
    body = shaper.error(result.code, result.message, result.status) if shaper is not None else None
    return json_response(body if body is not None else result.envelope(), result.status)


def _xml_response(result: ToolResult, shaper: Shaper, wire: XmlWire) -> Response:
    tool = shaper.tool
    if result.success:
        if not result.has_body:
            return Response(status_code=result.status)
        rid = request_id(tool.name, result.data)
        content = render(result.data, tool.output_schema, wire, rid, declared=shaper.shape.declared)
        return Response(content, status_code=result.status, media_type=wire.media if content else None)
    rid = request_id(tool.name, result.code, result.message)
    body = shaper.error(result.code, result.message, result.status)
    content = render_error(
        wire, result.code, result.message, result.status, rid, body, shaper.shape.error_schema
    )
    return Response(content, status_code=result.status, media_type=wire.media)


async def read_body(request: Request, limit: int) -> bytes:
    """The raw request body; ``Rejected`` when it is larger than ``limit`` (by its declared length
    before a byte is read, else as read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Rejected(
            ToolResult.fail("payload_too_large", f"request body is {declared} bytes; the limit is {limit}")
        )
    body = await request.body()
    if len(body) > limit:
        raise Rejected(
            ToolResult.fail("payload_too_large", f"request body is {len(body)} bytes; the limit is {limit}")
        )
    return body


def parse_json(raw: bytes, limits: Limits | None = None) -> Any:
    """A JSON request body (``{}`` when empty); ``Rejected`` when it is not clean JSON within ``limits``
    (``compoworld.sanitize``: finite numbers, encodable strings, bounded depth)."""
    if not raw.strip():
        return {}
    try:
        return load_json(raw, limits or Limits(max_bytes=max(len(raw), 1)))
    except InputRefused as exc:
        raise Rejected(exc.result()) from exc


async def _form_items(request: Request) -> list[tuple[str, str]]:
    """A multipart body's fields as text (a file part's content, decoded)."""
    items: list[tuple[str, str]] = []
    try:
        form = await request.form()
    except Exception as exc:  # a malformed multipart body is the client's error
        raise Rejected(
            ToolResult.fail("invalid_arguments", f"multipart body cannot be parsed: {exc}")
        ) from exc
    for key, value in form.multi_items():
        if isinstance(value, str):
            items.append((key, value))
        else:
            items.append((key, (await value.read()).decode("utf-8", errors="replace")))
    return items


def rest_handler(
    runtime: ServiceRuntime, name: str, limit: int, episode_of: Callable[[Request], str | None]
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of one tool's REST route."""
    bound = runtime.tools[name]
    limits = runtime.limits
    wire = WireFormat(bound.defn)
    reads_body = any(loc == "body" for loc in bound.defn.arg_locations.values())
    path = bound.defn.path or ""
    template = query_template(path)  # ``/forecast/daily?city_id={city_id}``: values from the query
    repeats = {m.group(1) for m in _PATH_PARAM.finditer(route_path(template.route))} - {
        m.group(1) for m in _PATH_PARAM.finditer(template.route)
    }

    async def handler(request: Request) -> Response:
        shaper = bound.shaper
        try:
            episode = episode_of(request)
            body: Any = None
            form: list[tuple[str, str]] | None = None
            if request.method in _BODY_METHODS or reads_body:
                raw = await read_body(request, limit)
                kind = media_kind(request.headers.get("content-type"))
                raw_whole = kind == "other" or (kind == "form" and not wire.whole_has_fields)
                xml_sent = wire.xml_request and is_xml_media(request.headers.get("content-type"))
                if xml_sent and raw.strip():  # a body the spec declares in XML, sent so
                    try:
                        body = wire.from_xml(raw)
                    except ValueError as exc:
                        raise Rejected(bound.failure("invalid_arguments", str(exc))) from exc
                elif wire.whole_body is not None and raw_whole and raw.strip():
                    # the body is the one argument, in its own media (bytes, text; JSON text of
                    # a number, array or object that a text media carries)
                    body = (
                        raw.decode("utf-8", errors="replace")
                        if wire.whole_is_text
                        else parse_json(raw, limits)
                    )
                elif kind == "form":
                    form = parse_form(raw)
                elif kind == "multipart" and raw.strip():
                    form = await _form_items(request)
                elif raw.strip():
                    body = parse_json(raw, limits)
                    if body is None and wire.whole_body is None:  # a JSON null is a body, not none
                        raise Rejected(
                            bound.failure("invalid_arguments", "request body must be a JSON object")
                        )
                elif raw and kind == "json":  # bytes, all blank: not JSON (no body is no bytes)
                    raise Rejected(InputRefused("invalid_json", "request body is blank, not JSON").result())
                if form is None and wire.whole_body is None and not isinstance(body, dict | None):
                    raise Rejected(bound.failure("invalid_arguments", "request body must be a JSON object"))
            try:
                params = request.path_params
                if repeats:  # a parameter the path names twice is read from its first place
                    params = {k: v for k, v in params.items() if k not in repeats}
                query = request.query_params.multi_items()
                if template.args or template.fixed:
                    given = request.query_params
                    params = {**params, **{a: given[k] for k, a in template.args.items() if k in given}}
                    query = [(k, v) for k, v in query if k not in template.args and k not in template.fixed]
                wrong = wire.misfixed(query, request.headers, form)
                if wrong is not None:  # ``alt=xml`` where the spec allows ``alt=json`` only
                    raise Rejected(bound.failure("invalid_arguments", wrong))
                args = wire.decode(params, query, request.headers, body, form)
            except RecursionError:  # a JSON-valued parameter nested beyond the parser's recursion
                raise Rejected(
                    InputRefused("invalid_json", "a parameter is nested too deeply").result()
                ) from None
        except Rejected as refused:
            return rest_response(refused.result, shaper)
        return rest_response(await runtime.call_tool(episode, name, args), shaper)

    return handler
