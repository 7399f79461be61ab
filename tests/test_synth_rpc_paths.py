"""REST operations whose paths are operation names bind to one entity's typed state.

``POST /createAccountHolder``, ``/getAccountHolder``, ``/updateAccountHolder`` (Adyen's style),
``/v1/ProductsApi`` + ``/v1/ProductsApi/List`` (an endpoint named ``Api``) and a data feed
``GET /{format}/GamesByDate/{date}`` are read by their names: built, then called on real SQLite.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.build import build_service
from compoworld.synth.rpcpaths import operation_name
from compoworld.synth.verify import verify_runtime
from tests.runtime_call import call

_HOLDER = {
    "type": "object",
    "required": ["accountHolderCode"],
    "properties": {
        "accountHolderCode": {"type": "string"},
        "email": {"type": "string", "format": "email"},
        "description": {"type": "string"},
    },
}
_PRODUCT = {
    "type": "object",
    "properties": {"serial": {"type": "string"}, "name": {"type": "string"}, "price": {"type": "number"}},
}
_GAME = {
    "type": "object",
    "properties": {
        "GameID": {"type": "integer"},
        "Day": {"type": "string", "format": "date"},
        "HomeTeam": {"type": "string"},
    },
}


def _body(ref: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": ref}}}}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _post(op: str, body: str, answer: dict[str, Any]) -> dict[str, Any]:
    return {"post": {"operationId": op, "requestBody": _body(body), "responses": _ok(answer)}}


def _doc() -> dict[str, Any]:
    holder = {"$ref": "#/components/schemas/AccountHolder"}
    product = {"$ref": "#/components/schemas/Product"}
    date = {"name": "date", "in": "path", "required": True, "schema": {"type": "string", "format": "date"}}
    serial = {"name": "serial", "in": "path", "required": True, "schema": {"type": "string"}}
    fmt = {"name": "format", "in": "path", "required": True, "schema": {"type": "string", "enum": ["json"]}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Rpc", "version": "1"},
        "paths": {
            "/createAccountHolder": _post(
                "post-createAccountHolder", "#/components/schemas/AccountHolder", holder
            ),
            "/getAccountHolder": _post("post-getAccountHolder", "#/components/schemas/HolderRef", holder),
            "/updateAccountHolder": _post(
                "post-updateAccountHolder", "#/components/schemas/AccountHolder", holder
            ),
            "/v1/ProductsApi": _post("ProductsApi_Create", "#/components/schemas/Product", product),
            "/v1/ProductsApi/Save": _post("ProductsApi_Save", "#/components/schemas/Product", product),
            "/v1/ProductsApi/{serial}": {  # a product is keyed by its serial
                "get": {"operationId": "ProductsApi_Get", "parameters": [serial], "responses": _ok(product)}
            },
            "/v1/ProductsApi/List": {
                "post": {
                    "operationId": "ProductsApi_List",
                    "responses": _ok({"type": "array", "items": product}),
                }
            },
            "/{format}/GamesByDate/{date}": {
                "get": {
                    "operationId": "GamesByDate",
                    "parameters": [fmt, date],
                    "responses": _ok({"type": "array", "items": {"$ref": "#/components/schemas/Game"}}),
                }
            },
        },
        "components": {
            "schemas": {
                "AccountHolder": _HOLDER,
                "HolderRef": {
                    "type": "object",
                    "required": ["accountHolderCode"],
                    "properties": {"accountHolderCode": {"type": "string"}},
                },
                "Product": _PRODUCT,
                "Game": _GAME,
            }
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("rpc")
    spec = root / "rpc.json"
    spec.write_text(json.dumps(_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_operation_names_are_read_from_paths_not_resource_paths() -> None:
    assert operation_name("/createAccountHolder") == "createAccountHolder"
    assert operation_name("/v1/ProductsApi/List") == "list_products"
    assert operation_name("/contacts/{id}") is None
    assert operation_name("/pets/findByStatus") is None  # a search on the pets collection stays REST


def test_verb_named_paths_bind_to_one_entity(rt: ServiceRuntime) -> None:
    tools = {t.name: t for t in rt.manifest.tools}
    expected = {
        "post-createAccountHolder": ("create", "account_holder"),
        "post-getAccountHolder": ("read", "account_holder"),
        "post-updateAccountHolder": ("update", "account_holder"),
        "ProductsApi_Create": ("create", "product"),
        "ProductsApi_List": ("list", "product"),
    }
    for name, (operation, entity) in expected.items():
        tool = tools[name]
        assert (tool.backend, tool.operation, tool.entity) == ("implemented", operation, entity), name
    feed = tools["GamesByDate"]  # a data feed lists games; its bare ``date`` names no column (yet)
    assert (feed.operation, feed.entity) == ("list", "game")


def test_a_created_holder_reads_back_and_an_update_is_seen(rt: ServiceRuntime) -> None:
    made = call(rt, "e1", "post-createAccountHolder", {"accountHolderCode": "AH-1", "email": "a@example.com"})
    assert made["success"], made
    got = call(rt, "e1", "post-getAccountHolder", {"accountHolderCode": "AH-1"})
    assert got["success"] and got["data"]["email"] == "a@example.com", got
    upd = call(rt, "e1", "post-updateAccountHolder", {"accountHolderCode": "AH-1", "email": "b@example.com"})
    assert upd["success"], upd
    assert (
        call(rt, "e1", "post-getAccountHolder", {"accountHolderCode": "AH-1"})["data"]["email"]
        == "b@example.com"
    )
    missing = call(rt, "e1", "post-getAccountHolder", {"accountHolderCode": "nobody"})
    assert not missing["success"] and missing["error"]["code"] == "not_found"


def test_a_created_product_is_listed(rt: ServiceRuntime) -> None:
    made = call(rt, "e2", "ProductsApi_Create", {"name": "Widget", "price": 3.5})
    assert made["success"], made
    listed = call(rt, "e2", "ProductsApi_List", {})["data"]
    assert "Widget" in [row["name"] for row in listed]


def test_save_on_an_endpoint_inserts_a_new_key_and_updates_an_existing_one(rt: ServiceRuntime) -> None:
    save = rt.manifest.tool("ProductsApi_Save")
    assert save is not None and save.backend == "action", save and save.simulated_reason
    assert save.action is not None and save.action.target == "product" and save.action.upsert
    assert call(rt, "e3", "ProductsApi_Save", {"serial": "SN-9", "name": "Gadget", "price": 2.0})["success"]
    again = call(rt, "e3", "ProductsApi_Save", {"serial": "SN-9", "name": "Gadget II"})
    assert again["success"] and again["data"]["name"] == "Gadget II", again
    saved = [row for row in call(rt, "e3", "ProductsApi_List", {})["data"] if row["serial"] == "SN-9"]
    assert [(row["name"], row["price"]) for row in saved] == [("Gadget II", 2.0)]


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    failing = [(t.tool, t.failure) for t in report.tools if not t.passed]
    assert failing == []
