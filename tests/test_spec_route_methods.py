"""A spec route answers the methods the spec declares on it, and only those.

Spec routes are plain Starlette routes (``compoworld.runtime.app``), which would add HEAD to every
GET route; a service answers HEAD only where the spec declares a HEAD operation, as it did when
they were FastAPI routes: anything else on a declared path is 405 with the declared methods in
``Allow``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from tests.inline_service import build_inline

_ITEM = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}


def _ok(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    if schema is None:
        return {"200": {"description": "ok"}}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _id() -> list[dict[str, Any]]:
    return [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]


def _doc() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Items", "version": "1"},
        "paths": {
            "/items": {
                "get": {"operationId": "list_items", "responses": _ok({"type": "array", "items": _ITEM})}
            },
            "/items/{id}": {"get": {"operationId": "get_item", "parameters": _id(), "responses": _ok(_ITEM)}},
            "/files/{id}": {"head": {"operationId": "head_file", "parameters": _id(), "responses": _ok()}},
        },
    }


def _call(folder: Path, method: str, path: str) -> httpx.Response:
    runtime = ServiceRuntime.from_folder(folder, Settings.defaults())
    app = create_service_app(runtime, Settings.defaults(admin_token="t"))

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return await client.request(method, path)

    return asyncio.run(go())


def test_a_get_route_refuses_head_and_other_methods_naming_the_declared_one(tmp_path: Path) -> None:
    folder = build_inline(tmp_path, "items", _doc(), verify=False)
    assert _call(folder, "GET", "/items").status_code == 200
    for method in ("HEAD", "POST", "DELETE"):
        refused = _call(folder, method, "/items")
        assert refused.status_code == 405, method
        assert refused.headers["allow"] == "GET"


def test_a_declared_head_operation_is_served_and_its_path_refuses_get(tmp_path: Path) -> None:
    folder = build_inline(tmp_path, "items", _doc(), verify=False)
    assert _call(folder, "HEAD", "/files/a1").status_code < 405
    refused = _call(folder, "GET", "/files/a1")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "HEAD"
