"""Actions over a whole collection: count endpoints and the clear of a whole table.

``POST /products/count {key}`` (keyserv's style) and ``GET /shops/{shopId}/orders/count`` answer
how many typed rows hold the values their arguments name, so a create is counted by the next
call; an argument-free ``DELETE /mappings`` (WireMock's admin style) deletes every mapping, so the
next list is empty. Built from an inline document, called over the service's REST routes on real
SQLite, conformance-checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline

_PRODUCT = {
    "type": "object",
    "properties": {"serial": {"type": "string"}, "key": {"type": "string"}, "name": {"type": "string"}},
}
_ORDER = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "total": {"type": "number"}, "status": {"type": "string"}},
}
_MAPPING = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "url": {"type": "string"}, "priority": {"type": "integer"}},
}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _doc() -> dict[str, Any]:
    product, order, mapping = (
        {"$ref": "#/components/schemas/Product"},
        {"$ref": "#/components/schemas/Order"},
        {"$ref": "#/components/schemas/Mapping"},
    )
    count = {"type": "object", "properties": {"count": {"type": "integer", "format": "int32"}}}
    shop = _path("shopId")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Collections", "version": "1"},
        "paths": {
            "/products": {
                "get": {"operationId": "listProducts", "responses": _ok({"type": "array", "items": product})},
                "post": {
                    "operationId": "createProduct",
                    "requestBody": _body(product),
                    "responses": _ok(product),
                },
            },
            "/products/{serial}": {
                "get": {
                    "operationId": "getProduct",
                    "parameters": [_path("serial")],
                    "responses": _ok(product),
                }
            },
            "/products/count": {
                "post": {
                    "operationId": "Products_Count",
                    "requestBody": _body({"type": "object", "properties": {"key": {"type": "string"}}}),
                    "responses": _ok({"anyOf": [count, {"type": "null"}]}),
                }
            },
            "/shops": {
                "get": {
                    "operationId": "listShops",
                    "responses": _ok(
                        {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                            },
                        }
                    ),
                }
            },
            "/shops/{shopId}/orders": {
                "get": {
                    "operationId": "listOrders",
                    "parameters": [shop],
                    "responses": _ok({"type": "array", "items": order}),
                },
                "post": {
                    "operationId": "createOrder",
                    "parameters": [shop],
                    "requestBody": _body(order),
                    "responses": _ok(order),
                },
            },
            "/shops/{shopId}/orders/count": {
                "get": {
                    "operationId": "countOrders",
                    "parameters": [shop],
                    "responses": _ok({"type": "integer"}),
                }
            },
            "/products/stats/count": {  # a count of what a free-text query matches: not a column
                "post": {
                    "operationId": "countMatching",
                    "requestBody": _body({"type": "object", "properties": {"query": {"type": "string"}}}),
                    "responses": _ok(count),
                }
            },
            "/mappings": {
                "get": {"operationId": "listMappings", "responses": _ok({"type": "array", "items": mapping})},
                "post": {
                    "operationId": "createMapping",
                    "requestBody": _body(mapping),
                    "responses": _ok(mapping),
                },
                "delete": {"operationId": "deleteAllMappings", "responses": _ok({"type": "object"})},
            },
        },
        "components": {"schemas": {"Product": _PRODUCT, "Order": _ORDER, "Mapping": _MAPPING}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("collections"), "collections", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def _client(rt: ServiceRuntime) -> httpx.AsyncClient:
    app = create_service_app(rt, Settings(admin_token="t"))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc")


def test_count_endpoints_are_count_actions_served_from_typed_state(rt: ServiceRuntime) -> None:
    for name, answer in (("Products_Count", "count"), ("countOrders", None)):
        tool = rt.manifest.tool(name)
        assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
        assert tool.action is not None and tool.action.kind == "count" and tool.kind == "read"
        assert tool.action.answer == answer


def test_a_count_whose_argument_names_no_column_stays_with_the_world_model(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("countMatching")
    assert tool is not None and tool.backend == "simulated"


def test_a_count_answers_the_rows_holding_its_arguments_and_sees_a_create(rt: ServiceRuntime) -> None:
    products = rt.select(None, "product")
    key = products[0]["key"]
    holding = sum(1 for p in products if p["key"] == key)
    shop = rt.select(None, "shop")[0]["id"]
    orders = sum(1 for o in rt.select(None, "order") if o["shop_id"] == shop)

    async def go() -> list[Any]:
        rt.fork("cnt")
        async with _client(rt) as http:
            h = {"X-Episode-Id": "cnt"}
            every = (await http.post("/products/count", json={}, headers=h)).json()
            keyed = (await http.post("/products/count", json={"key": key}, headers=h)).json()
            made = await http.post("/products", json={"key": key, "name": "Widget"}, headers=h)
            assert made.status_code in (200, 201), made.text
            after = (await http.post("/products/count", json={"key": key}, headers=h)).json()
            none = (await http.post("/products/count", json={"key": "no-such-key"}, headers=h)).json()
            mine = (await http.get(f"/shops/{shop}/orders/count", headers=h)).json()
            await http.post(f"/shops/{shop}/orders", json={"total": 3.5, "status": "new"}, headers=h)
            more = (await http.get(f"/shops/{shop}/orders/count", headers=h)).json()
            seed = (await http.post("/products/count", json={"key": key})).json()  # the seed view
            return [every, keyed, after, none, mine, more, seed]

    every, keyed, after, none, mine, more, seed = asyncio.run(go())
    assert every == {"count": len(products)} and keyed == {"count": holding}
    assert after == {"count": holding + 1} and none == {"count": 0} and seed == {"count": holding}
    assert mine == orders and more == orders + 1


def test_an_argument_free_delete_on_a_collection_clears_the_whole_table(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("deleteAllMappings")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "clear" and tool.action.parent_column is None
    assert rt.select(None, "mapping")

    async def go() -> tuple[int, Any, list[Any], list[Any]]:
        rt.fork("clr")
        async with _client(rt) as http:
            h = {"X-Episode-Id": "clr"}
            gone = await http.delete("/mappings", headers=h)
            listed = (await http.get("/mappings", headers=h)).json()
            seed = (await http.get("/mappings")).json()
            return gone.status_code, gone.json(), listed, seed

    status, body, listed, seed = asyncio.run(go())
    assert status == 200 and body == {} and listed == [] and len(seed) == len(rt.select(None, "mapping"))
    assert rt.select("clr", "mapping") == [] and rt.select("clr", "product")  # only mappings went


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    assert "count answers the typed rows holding its arguments" in checks["Products_Count"]
    assert "a value no row holds counts 0" in checks["Products_Count"]
    assert "count answers the typed rows holding its arguments" in checks["countOrders"]
    assert "clear visible to a later read" in checks["deleteAllMappings"]
