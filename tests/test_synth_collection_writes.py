"""Writes that address their row by a body key or name their delete only in the operation's name.

keyserv's shape: ``PATCH /v1/ProductsApi {serial, name}`` updates the product whose key the body
carries (the method is the verb; the path is the collection's own), and ``POST
/v1/ProductsApi/{serial}`` named ``DeleteProduct2`` with no body is the delete for clients without
DELETE. A PUT on a collection under an item (``PUT /bundles/{id}/tracks``) replaces that item's
children and is not taken for an update of the item. Built from an inline document, called on real
SQLite over the uniform and REST routes, and conformance-checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.verify import verify_service
from tests.inline_service import build_inline
from tests.runtime_call import call

_PRODUCT = {
    "type": "object",
    "properties": {
        "serial": {"type": "string", "format": "uuid"},
        "name": {"type": "string"},
        "custom": {"type": "string"},
    },
}
_TRACK = {"type": "object", "properties": {"track_id": {"type": "string"}, "label": {"type": "string"}}}
_BUNDLE = {"type": "object", "properties": {"bundle_id": {"type": "string"}, "label": {"type": "string"}}}


def _ok(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    if schema is None:
        return {"200": {"description": "ok"}}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _key(name: str) -> list[dict[str, Any]]:
    return [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}]


def _doc() -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "Keys", "version": "1"},
        "paths": {
            "/v1/ProductsApi": {
                "post": {
                    "operationId": "ProductsApi_Create",
                    "requestBody": _body(_PRODUCT),
                    "responses": _ok(_PRODUCT),
                },
                "patch": {
                    "operationId": "ProductsApi_PatchProduct",
                    "requestBody": _body(_PRODUCT),
                    "responses": _ok(),
                },
                "get": {
                    "operationId": "ProductsApi_List",
                    "responses": _ok({"type": "array", "items": _PRODUCT}),
                },
            },
            "/v1/ProductsApi/{serial}": {
                "get": {
                    "operationId": "ProductsApi_Get",
                    "parameters": _key("serial"),
                    "responses": _ok(_PRODUCT),
                },
                "delete": {
                    "operationId": "ProductsApi_DeleteProduct",
                    "parameters": _key("serial"),
                    "responses": _ok(),
                },
                "post": {
                    "operationId": "ProductsApi_DeleteProduct2",
                    "parameters": _key("serial"),
                    "responses": _ok(),
                },
            },
            "/bundles": {
                "get": {"operationId": "listBundles", "responses": _ok({"type": "array", "items": _BUNDLE})},
                "post": {
                    "operationId": "createBundle",
                    "requestBody": _body(_BUNDLE),
                    "responses": _ok(_BUNDLE),
                },
            },
            "/bundles/{bundle_id}": {
                "get": {
                    "operationId": "getBundle",
                    "parameters": _key("bundle_id"),
                    "responses": _ok(_BUNDLE),
                }
            },
            "/bundles/{bundle_id}/tracks": {
                "put": {
                    "operationId": "putTracks",
                    "parameters": _key("bundle_id"),
                    "requestBody": _body(_TRACK),
                    "responses": _ok(),
                }
            },
        },
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("collection_writes"), "keys", _doc())


@pytest.fixture()
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def test_a_patch_on_the_collection_updates_the_row_its_body_key_names(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("ProductsApi_PatchProduct")
    assert tool is not None and tool.action is not None and tool.action.kind == "set"
    product = rt.select(None, "product")[0]
    out = call(rt, "e1", "ProductsApi_PatchProduct", {"serial": product["serial"], "name": "Renamed"})
    assert out["success"] and out["backend"] == "action"
    assert call(rt, "e1", "ProductsApi_Get", {"serial": product["serial"]})["data"]["name"] == "Renamed"
    assert call(rt, "e2", "ProductsApi_Get", {"serial": product["serial"]})["data"]["name"] == product["name"]


def test_a_patch_naming_an_unknown_key_is_not_found(rt: ServiceRuntime) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    out = call(rt, "e3", "ProductsApi_PatchProduct", {"serial": unknown, "name": "x"})
    assert not out["success"] and out["error"]["code"] == "not_found"


def test_a_post_on_an_item_named_delete_with_no_body_deletes_it(rt: ServiceRuntime) -> None:
    assert rt.tools["ProductsApi_DeleteProduct2"].backend == "implemented"
    serial = rt.select(None, "product")[0]["serial"]
    rt.fork("e4")
    app = create_service_app(rt, Settings())

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            headers = {"X-Episode-Id": "e4"}
            gone = await client.post(f"/v1/ProductsApi/{serial}", headers=headers)
            return gone, await client.get(f"/v1/ProductsApi/{serial}", headers=headers)

    gone, after = asyncio.run(go())
    assert gone.status_code < 300 and after.status_code == 404
    assert rt.select(None, "product", {"serial": serial})  # the seed view keeps it


def test_a_put_on_a_collection_under_an_item_is_no_update_of_the_item(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("putTracks")
    assert tool is not None
    assert not (tool.action is not None and tool.action.kind == "set" and tool.action.target == "bundle")


def test_the_conformance_checker_verifies_the_update_and_the_delete(folder: Path) -> None:
    report = verify_service(folder)
    assert report.passed, report.failed_tools
    checks = {t.tool: t.checks for t in report.tools}
    assert "set visible to a later read" in checks["ProductsApi_PatchProduct"]
