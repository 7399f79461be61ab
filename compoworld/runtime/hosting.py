"""A whole library in one process, each service loaded on its first request.

The eager ``create_library_app`` mounts every service's app at start; for thousands of
services that is minutes and gigabytes. ``create_pooled_app`` answers ``/health`` and
``/services`` from the library's catalog and routes ``/services/<name>/...`` to the service's
app, built from the pool on first use and dropped with the runtime when the pool unloads it.
A service that does not load answers 503 with the folder and the reason.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

from compoworld.errors import ServiceUnavailable
from compoworld.runtime.app import create_service_app
from compoworld.runtime.pool import ServicePool, rss_mb
from compoworld.runtime.rest import json_response
from compoworld.settings import Settings

__all__ = ["create_pooled_app", "service_rows"]


def service_rows(pool: ServicePool) -> list[dict[str, Any]]:
    """``GET /services``: one row per catalog entry (no service is loaded), broken ones with the reason."""
    rows: list[dict[str, Any]] = []
    for entry in pool.catalog.services:
        row: dict[str, Any] = {
            "name": entry.name,
            "title": entry.title,
            "description": entry.description,
            "domain": entry.domain,
            "tools": entry.tools,
            "implemented": entry.implemented,
            "loaded": pool.is_resident(entry.name),
        }
        if entry.name in pool.broken:
            row["error"] = pool.broken[entry.name]
        rows.append(row)
    return rows


class _ServiceDispatch:
    """ASGI app behind ``/services/{service}``: the named service's own app, built on first use."""

    def __init__(self, pool: ServicePool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope.get("path_params", {}).get("service", "")
        if name not in self.pool:
            response = json_response({"detail": f"no service '{name}' in {self.pool.library}"}, 404)
            await response(scope, receive, send)
            return
        try:
            app = self.pool.attached(name, "app", lambda rt: create_service_app(rt, self.settings))
        except ServiceUnavailable as exc:
            await json_response({"detail": str(exc)}, 503)(scope, receive, send)
            return
        # the mount's own ``{service}`` must not reach the service: its REST routes read every path
        # parameter as a tool argument (and a spec may name one ``service`` itself)
        await app({**scope, "path_params": {}}, receive, send)


def create_pooled_app(pool: ServicePool, settings: Settings | None = None) -> FastAPI:
    """The embedded library app over a pool (``compoworld up``)."""
    settings = settings or pool.settings
    app = FastAPI(title="CompoWorld library", version="1")
    app.state.runtimes = pool

    @app.get("/health")
    async def health() -> Response:
        body = {
            "status": "ok",
            "services": len(pool),
            "resident": len(pool.resident()),
            "broken": len(pool.broken),
            "rss_mb": round(rss_mb(), 1),
        }
        return json_response(body)

    @app.get("/services")
    async def services() -> Response:
        return json_response(service_rows(pool))

    app.router.routes.append(Mount("/services/{service}", app=_ServiceDispatch(pool, settings)))
    return app
