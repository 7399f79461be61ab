"""Two operations on one path told apart by their bodies' media (Azure's ``/analyze#overload=stream``).

A client never sends a URL's fragment: the overload is served at ``/analyze`` beside the JSON
operation, and the request's ``Content-Type`` picks the operation. Built from an inline document,
called over real HTTP (ASGI) with real SQLite state.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.runtime.app import create_service_app
from compoworld.settings import Settings
from tests.inline_service import build_inline

_ANSWER = {
    "200": {
        "description": "ok",
        "content": {
            "application/json": {"schema": {"type": "object", "properties": {"tags": {"type": "string"}}}}
        },
    }
}


def _doc() -> dict[str, Any]:
    url_body = {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}}
    image = {"type": "string", "format": "binary"}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Vision", "version": "1"},
        "paths": {
            "/analyze": {
                "post": {
                    "operationId": "AnalyzeImage",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": url_body}}},
                    "responses": _ANSWER,
                }
            },
            "/analyze#overload=stream": {
                "post": {
                    "operationId": "AnalyzeImageInStream",
                    "requestBody": {
                        "required": True,
                        "content": {"application/octet-stream": {"schema": image}},
                    },
                    "responses": _ANSWER,
                }
            },
        },
    }


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("overloads"), "vision", _doc(), verify=False)
    return ServiceRuntime.from_folder(folder, Settings())


def _post(runtime: ServiceRuntime, **kwargs: Any) -> httpx.Response:
    if not runtime.has_episode("ep-1"):
        runtime.fork("ep-1")
    app = create_service_app(runtime, Settings())

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            return await client.post(
                "/analyze", headers={"X-Episode-Id": "ep-1", **kwargs.pop("headers", {})}, **kwargs
            )

    return asyncio.run(send())


def test_the_fragment_path_is_served_at_the_path_before_it(runtime: ServiceRuntime) -> None:
    assert runtime.manifest.tool("AnalyzeImageInStream") is not None
    raw = _post(runtime, content=b"\x89PNG image bytes", headers={"content-type": "application/octet-stream"})
    assert raw.status_code == 200, raw.text  # the stream operation answered, not the JSON one's refusal
    assert set(raw.json()) <= {"tags"}


def test_a_json_request_goes_to_the_json_operation(runtime: ServiceRuntime) -> None:
    missing = _post(runtime, json={})
    assert missing.status_code in (400, 422) and "url" in missing.text, missing.text
    given = _post(runtime, json={"url": "https://images.example.com/cat.png"})
    assert given.status_code == 200, given.text
