"""Operations that share a path, told apart by what their path's fragment names (AWS's documents).

AWS's JSON protocol serves every operation at ``POST /`` and picks one by the ``X-Amz-Target``
header; the corpus writes that as ``/#X-Amz-Target=Widgets.CreateWidget``. Its REST protocols
write required query parameters into the fragment (``/v1/widget#name``). A client never sends the
fragment: the request carries the header or the parameter. Built from inline documents (real
synthesis and verification), called over real HTTP (ASGI) with real SQLite state.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.manifest import load_manifest
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.app import create_service_app
from compoworld.runtime.query_routes import query_template
from compoworld.settings import Settings
from tests.inline_service import build_inline
from tests.spec_parts import ok

_WIDGET = {
    "type": "object",
    "properties": {"WidgetId": {"type": "string"}, "Name": {"type": "string"}, "Color": {"type": "string"}},
}


def _target(op: str) -> dict[str, Any]:
    return {
        "name": "X-Amz-Target",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "enum": [op]},
    }


def _op(name: str, body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            "operationId": name,
            "parameters": [_target(f"Widgets.{name}")],
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": answer}}}},
        }
    }


def _json_protocol() -> dict[str, Any]:
    key = {"type": "object", "required": ["WidgetId"], "properties": {"WidgetId": {"type": "string"}}}
    create = {
        "type": "object",
        "required": ["Name"],
        "properties": {"Name": {"type": "string"}, "Color": {"type": "string"}},
    }
    wrapped = {"type": "object", "properties": {"Widget": _WIDGET}}
    paging = {
        "type": "object",
        "properties": {"MaxResults": {"type": "integer"}, "NextToken": {"type": "string"}},
    }
    listed = {
        "type": "object",
        "properties": {"Widgets": {"type": "array", "items": _WIDGET}, "NextToken": {"type": "string"}},
    }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Widgets", "version": "2020-01-01"},
        "paths": {
            "/#X-Amz-Target=Widgets.CreateWidget": _op("CreateWidget", create, wrapped),
            "/#X-Amz-Target=Widgets.DescribeWidget": _op("DescribeWidget", key, wrapped),
            "/#X-Amz-Target=Widgets.ListWidgets": _op("ListWidgets", paging, listed),
            "/#X-Amz-Target=Widgets.DeleteWidget": _op("DeleteWidget", key, {"type": "object"}),
        },
    }


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("fragments"), "widgets", _json_protocol())


class _Client:
    """One episode of the service over real HTTP (ASGI), as an AWS SDK sends its requests."""

    def __init__(self, folder: Path) -> None:
        runtime = ServiceRuntime.from_folder(folder, Settings())
        runtime.fork("ep-1")
        self.app = create_service_app(runtime, Settings())

    def post(self, target: str, body: dict[str, Any]) -> httpx.Response:
        headers = {"X-Episode-Id": "ep-1", "Content-Type": "application/x-amz-json-1.1"}
        if target:
            headers["X-Amz-Target"] = target

        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
                return await client.post("/", headers=headers, content=json.dumps(body).encode())

        return asyncio.run(send())


def test_the_target_header_picks_the_operation_and_the_checks_pass(widgets: Path) -> None:
    backends = {t.name: t.backend for t in load_manifest(widgets).tools}
    # each verified over both routes: before, every request went to the first operation at POST /
    names = ["CreateWidget", "DescribeWidget", "ListWidgets", "DeleteWidget"]
    assert backends == dict.fromkeys(names, "implemented")
    client = _Client(widgets)
    made = client.post("Widgets.CreateWidget", {"Name": "Sprocket", "Color": "red"})
    assert made.status_code == 200, made.text
    wid = made.json()["Widget"]["WidgetId"]
    listed = client.post("Widgets.ListWidgets", {})
    assert wid in [w["WidgetId"] for w in listed.json()["Widgets"]]
    assert client.post("Widgets.DescribeWidget", {"WidgetId": wid}).json()["Widget"]["Name"] == "Sprocket"
    assert client.post("Widgets.DeleteWidget", {"WidgetId": wid}).status_code == 200
    assert client.post("Widgets.DescribeWidget", {"WidgetId": wid}).status_code == 404


def test_a_request_without_the_target_is_refused_naming_it(widgets: Path) -> None:
    missing = _Client(widgets).post("", {"Name": "x"})
    assert missing.status_code == 400
    message = missing.json()["error"]["message"]
    assert "header X-Amz-Target=Widgets.CreateWidget" in message and "Widgets.DeleteWidget" in message


def test_a_fragment_names_query_parameters_a_request_must_carry() -> None:
    params = {"name": "query", "domain-owner": "query", "X-Amz-Target": "header"}
    template = query_template("/v1/widget#name&domain-owner", params=params)
    assert template.route == "/v1/widget" and template.specificity == 2
    assert template.fits({"name": "a", "domain-owner": "b"}) and not template.fits({"name": "a"})
    labelled = query_template("/analyze#overload=stream", params=params)  # a word no parameter has
    assert labelled.marks == () and labelled.fits({})
    header = query_template("/#X-Amz-Target=Widgets.CreateWidget", params=params)
    assert header.fits({}, {"X-Amz-Target": "Widgets.CreateWidget"})
    assert not header.fits({}, {"X-Amz-Target": "Widgets.DeleteWidget"}) and not header.fits({})


def test_the_more_literal_route_is_matched_first(tmp_path: Path) -> None:
    """``/v1/{name}:getIamPolicy`` declared after ``/v1/{name}`` (Google's documents) is still
    reached: a request for ``/v1/t1:getIamPolicy`` is not a read of the thing ``t1:getIamPolicy``."""
    thing = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    policy = {
        "type": "object",
        "required": ["etag", "bindings"],
        "properties": {
            "etag": {"type": "string"},
            "bindings": {"type": "array", "items": {"type": "string"}},
        },
    }
    name = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Things", "version": "1"},
        "paths": {
            "/v1/{name}": {"get": {"operationId": "things.get", "parameters": name, "responses": ok(thing)}},
            "/v1/{name}:getIamPolicy": {
                "get": {"operationId": "things.getIamPolicy", "parameters": name, "responses": ok(policy)}
            },
        },
    }
    runtime = ServiceRuntime.from_folder(build_inline(tmp_path, "things", doc, verify=False), Settings())
    runtime.fork("ep-1")
    app = create_service_app(runtime, Settings())

    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            return await client.get(path, headers={"X-Episode-Id": "ep-1"})

    answer = asyncio.run(get("/v1/t1:getIamPolicy"))
    assert answer.status_code == 200, answer.text
    assert set(answer.json()) >= {"etag", "bindings"}
