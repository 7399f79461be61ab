"""Spec paths that carry a query string (``/forecast/daily?city_id={city_id}``).

Some documents (Weatherbit's) declare one operation per combination of query parameters and
write the combination into the path, with the parameters declared ``in: path``. A client sends
``GET /forecast/daily?city_id=5&days=3``: the route is the path before ``?``, the ``{var}``
values come from the query string, and where several operations share one route, the request
goes to the one whose templated keys (and fixed values) it carries, the most specific first.
A request that fits none is refused by name, never answered by a guess.

Paths that carry a fragment (``/analyze#overload=stream``: Azure's way to declare two operations on
one path, one taking a JSON ``{url}``, the other the image itself) are routed at the path before
``#`` (a client never sends the fragment), and the operations sharing a route are told apart by
the request's ``Content-Type`` where their bodies are declared in different media.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.responses import Response

from compoworld.contracts import ToolResult
from compoworld.runtime.wire import media_kind

__all__ = ["QueryTemplate", "dispatching_handler", "query_template", "route_groups"]

Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class QueryTemplate:
    """A spec path split at ``?``: the route, the keys whose values fill ``{var}`` arguments, and
    the keys the path fixes to a value (``?format=json``)."""

    route: str
    args: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, str] = field(default_factory=dict)
    media: str = ""  # the body's media kind (``media_kind``); "" for an operation without a body

    def fits(self, query: dict[str, str]) -> bool:
        """Whether a request's query string carries every templated key and every fixed value."""
        return all(k in query for k in self.args) and all(query.get(k) == v for k, v in self.fixed.items())

    @property
    def specificity(self) -> int:
        return len(self.args) + len(self.fixed)


def query_template(path: str, media: str = "") -> QueryTemplate:
    """``/current?city={city}&country={country}`` -> route ``/current``, ``{city: city, country:
    country}``; a path without ``?`` (or ``#``) is its own route."""
    route, sep, query = path.partition("#")[0].partition("?")
    if not sep:
        return QueryTemplate(route or "/", media=media)
    args: dict[str, str] = {}
    fixed: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if value.startswith("{") and value.endswith("}") and len(value) > 2:
            args[key] = value[1:-1]
        else:
            fixed[key] = value
    return QueryTemplate(route or "/", args, fixed, media)


def route_groups(spec_routes: list[tuple[str, str, str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(method, route) -> the (path, tool) pairs served there, in the manifest's order."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for method, path, name in spec_routes:
        groups.setdefault((method, query_template(path).route), []).append((path, name))
    return groups


def dispatching_handler(variants: list[tuple[QueryTemplate, Handler]]) -> Handler:
    """One route's handler for the operations sharing it: the most specific whose query it fits."""
    ordered = sorted(enumerate(variants), key=lambda iv: (-iv[1][0].specificity, iv[0]))
    by_media = len({template.media for template, _ in variants}) > 1

    async def handler(request: Request) -> Response:
        query = dict(request.query_params)
        fitting = [(t, run) for _, (t, run) in ordered if t.fits(query)]
        if by_media and len(fitting) > 1:  # one path, bodies in different media: the Content-Type says
            sent = media_kind(request.headers.get("content-type"))
            same = [v for v in fitting if v[0].media == sent]
            # raw bytes (octet-stream, an image) go to an operation whose body is not JSON
            raw = [v for v in fitting if v[0].media not in ("", "json")] if sent != "json" else []
            fitting = same or raw or fitting
        if fitting:
            return await fitting[0][1](request)
        wanted = " or ".join(
            "&".join(sorted([*template.args, *template.fixed])) or "no query" for template, _ in variants
        )
        refused = ToolResult.fail(
            "invalid_arguments", f"{request.url.path} takes the query parameters {wanted}"
        )
        body = json.dumps(refused.envelope(), ensure_ascii=False, separators=(",", ":"))
        return Response(body, status_code=400, media_type="application/json")

    return handler
