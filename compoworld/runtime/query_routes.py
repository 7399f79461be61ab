"""Spec paths that carry a query string (``/forecast/daily?city_id={city_id}``).

Some documents (Weatherbit's) declare one operation per combination of query parameters and
write the combination into the path, with the parameters declared ``in: path``. A client sends
``GET /forecast/daily?city_id=5&days=3``: the route is the path before ``?``, the ``{var}``
values come from the query string, and where several operations share one route, the request
goes to the one whose templated keys (and fixed values) it carries, the most specific first.
A request that fits none is refused by name, never answered by a guess.

Paths that carry a fragment are routed at the path before ``#`` (a client never sends the
fragment). The fragment is how a document declares several operations on one path, and what it
names says how a request picks one:

- a parameter of the operation with a value, ``/#X-Amz-Target=CertificateManager.DeleteCertificate``
  (AWS's JSON protocol: every operation is ``POST /``, told apart by that header) or
  ``/#Action=DescribeAddresses`` (its query protocol): the request carries that header or query
  parameter with that value;
- a parameter without a value, ``/v1/domain#domain`` or ``/tags#resourceArn``: the request carries
  that query parameter (or header);
- a word that names no parameter, ``/analyze#overload=stream`` (Azure: one operation takes a JSON
  ``{url}``, the other the image itself): nothing, and the operations sharing the route are told
  apart by the request's ``Content-Type`` where their bodies are declared in different media.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

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
    #: What the fragment asks of a request: (``"query"`` or ``"header"``, name, value or None for
    #: "present with any value").
    marks: tuple[tuple[str, str, str | None], ...] = ()

    def fits(self, query: dict[str, str], headers: Mapping[str, str] | None = None) -> bool:
        """Whether a request carries every templated key, every fixed value and every mark."""
        if not all(k in query for k in self.args) or any(query.get(k) != v for k, v in self.fixed.items()):
            return False
        for where, name, value in self.marks:
            given = query.get(name) if where == "query" else (headers or {}).get(name)
            if given is None or (value is not None and given != value):
                return False
        return True

    @property
    def specificity(self) -> int:
        return len(self.args) + len(self.fixed) + len(self.marks)

    def wants(self) -> str:
        """What a request must carry to reach this operation, for a refusal."""
        said = [*self.args, *(f"{k}={v}" for k, v in self.fixed.items())]
        said += [
            f"{'header ' if w == 'header' else ''}{n}{'' if v is None else '=' + v}" for w, n, v in self.marks
        ]
        return " & ".join(sorted(said)) or "nothing more"


def query_template(path: str, media: str = "", params: Mapping[str, str] | None = None) -> QueryTemplate:
    """``/current?city={city}&country={country}`` -> route ``/current``, ``{city: city, country:
    country}``; a path without ``?`` (or ``#``) is its own route. ``params`` (wire name ->
    ``"query"`` or ``"header"``: the operation's parameters) says which fragment names are marks."""
    base, _, fragment = path.partition("#")
    route, sep, query = base.partition("?")
    marks = _marks(fragment, params or {})
    if not sep:
        return QueryTemplate(route or "/", media=media, marks=marks)
    args: dict[str, str] = {}
    fixed: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if value.startswith("{") and value.endswith("}") and len(value) > 2:
            args[key] = value[1:-1]
        else:
            fixed[key] = value
    return QueryTemplate(route or "/", args, fixed, media, marks)


def _marks(fragment: str, params: Mapping[str, str]) -> tuple[tuple[str, str, str | None], ...]:
    headers = {name.lower(): name for name, where in params.items() if where == "header"}
    marks = []
    for part in fragment.split("&") if fragment else ():
        name, eq, value = part.partition("=")
        where = params.get(name) or ("header" if name.lower() in headers else None)
        if where in ("query", "header"):  # a word naming no parameter is a label, not a mark
            marks.append((where, name, unquote(value) if eq else None))
    return tuple(marks)


def route_groups(spec_routes: list[tuple[str, str, str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(method, route) -> the (path, tool) pairs served there, in the manifest's order."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for method, path, name in spec_routes:
        groups.setdefault((method, query_template(path).route), []).append((path, name))
    return groups


def dispatching_handler(
    variants: list[tuple[QueryTemplate, Handler]],
    refuse: Callable[[ToolResult], Response] | None = None,
    limit: int = 1 << 20,
) -> Handler:
    """One route's handler for the operations sharing it: the most specific whose query it fits; a
    request that fits none is refused by ``refuse`` (the route's own error layout: an XML API's XML),
    else as the JSON envelope."""
    ordered = sorted(enumerate(variants), key=lambda iv: (-iv[1][0].specificity, iv[0]))
    by_media = len({template.media for template, _ in variants}) > 1

    async def handler(request: Request) -> Response:
        query = dict(request.query_params)
        size = request.headers.get("content-length", "")
        small = size.isdigit() and int(size) <= limit  # a larger body is the handler's to refuse
        if small and media_kind(request.headers.get("content-type")) == "form":  # AWS's query protocol posts
            # ``Action=CreateQueue&Version=...`` in a form body: its fields pick the operation too
            fields = parse_qsl(
                (await request.body()).decode("utf-8", errors="replace"), keep_blank_values=True
            )
            query = {**dict(fields), **query}
        fitting = [(t, run) for _, (t, run) in ordered if t.fits(query, request.headers)]
        if by_media and len(fitting) > 1:  # one path, bodies in different media: the Content-Type says
            sent = media_kind(request.headers.get("content-type"))
            same = [v for v in fitting if v[0].media == sent]
            # raw bytes (octet-stream, an image) go to an operation whose body is not JSON
            raw = [v for v in fitting if v[0].media not in ("", "json")] if sent != "json" else []
            fitting = same or raw or fitting
        if fitting:
            return await fitting[0][1](request)
        wanted = " or ".join(template.wants() for template, _ in variants)
        refused = ToolResult.fail("invalid_arguments", f"{request.url.path} takes {wanted}", status=400)
        if refuse is not None:
            return refuse(refused)
        body = json.dumps(refused.envelope(), ensure_ascii=False, separators=(",", ":"))
        return Response(body, status_code=400, media_type="application/json")

    return handler
