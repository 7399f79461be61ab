"""Every declared list parameter is bound (equality, set, range, text, sort, page, cursor) or refused by name.

One OpenAPI document declares an orders API whose list operations carry the parameter spellings the
corpus uses (``status``, ``ids``, ``created_after``, ``min_total``, ``q[customer_cont]``, ``sort``,
``order``, ``limit``/``offset``, ``starting_after``, ``expand``); it is built, verified, and called
over the uniform route and the spec's REST route, and every answer is compared with the typed state.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.build import build_service
from compoworld.synth.verify import verify_service

STATUSES = ["open", "paid", "void"]
ORDER = {
    "type": "object",
    "required": ["id", "status"],
    "properties": {
        "id": {"type": "string"},
        "status": {"type": "string", "enum": STATUSES},
        "customer": {"type": "string"},
        "total": {"type": "integer"},
        "created_at": {"type": "string", "format": "date-time"},
    },
}
LIST_PARAMS = [
    {"name": "status", "in": "query", "schema": {"type": "string", "enum": STATUSES}},
    {"name": "ids", "in": "query", "schema": {"type": "string"}, "description": "Comma-separated ids"},
    {"name": "created_after", "in": "query", "schema": {"type": "string", "format": "date"}},
    {"name": "min_total", "in": "query", "schema": {"type": "integer"}},
    {"name": "q[customer_cont]", "in": "query", "schema": {"type": "string"}},
    {"name": "sort", "in": "query", "schema": {"type": "string"}},
    {"name": "order", "in": "query", "schema": {"type": "string", "enum": ["asc", "desc"]}},
    {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 10, "maximum": 100}},
    {"name": "starting_after", "in": "query", "schema": {"type": "string"}},
    {"name": "expand", "in": "query", "schema": {"type": "string"}},
]


def _spec() -> dict[str, Any]:
    listing = {
        "type": "object",
        "properties": {
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/Order"}},
            "has_more": {"type": "boolean"},
            "next_cursor": {"type": ["string", "null"]},
        },
    }
    ok = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Ledgerly Orders", "version": "1.0"},
        "paths": {
            "/orders": {
                "get": {
                    "operationId": "listOrders",
                    "parameters": LIST_PARAMS,
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": listing}}}
                    },
                },
                "post": {
                    "operationId": "createOrder",
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}
                    },
                    "responses": {"201": {"description": "created", **ok}},
                },
            },
            "/orders/{id}": {
                "get": {
                    "operationId": "getOrder",
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "ok", **ok}},
                }
            },
        },
        "components": {"schemas": {"Order": ORDER}},
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lists")
    spec = root / "ledgerly.json"
    spec.write_text(json.dumps(_spec()))
    return Path(build_service(spec, root / "lib", verify=False).folder)


@pytest.fixture(scope="module")
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def _orders(rt: ServiceRuntime) -> list[dict[str, Any]]:
    return rt.select(None, "order")


def call(rt: ServiceRuntime, args: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(rt.call_tool(None, "listOrders", args)).envelope()


def ids(envelope: dict[str, Any]) -> list[str]:
    assert envelope["success"], envelope
    return [row["id"] for row in envelope["data"]["data"]]


def test_every_declared_parameter_is_bound_or_refused_in_the_manifest(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("listOrders")
    assert tool is not None and tool.listing is not None
    listing = tool.listing
    assert tool.arg_columns == {"status": "status"}
    assert {a: (f.column, f.op) for a, f in listing.filters.items()} == {
        "ids": ("id", "in"),
        "created_after": ("created_at", "gt"),
        "min_total": ("total", "gte"),
        "q_customer_cont": ("customer", "contains"),
    }
    assert (listing.sort_arg, listing.order_arg, tool.limit_arg) == ("sort", "order", "limit")
    assert (listing.cursor_arg, listing.cursor_by) == ("starting_after", "key")
    assert set(listing.refused) == {"expand"} and listing.defaults == {"limit": 10}


def test_seed_values_of_an_enum_column_are_the_enums_own(rt: ServiceRuntime) -> None:
    assert {r["status"] for r in _orders(rt)} <= set(STATUSES)


def test_equality_set_range_and_text_filters_answer_exactly_the_matching_rows(rt: ServiceRuntime) -> None:
    rows = _orders(rt)
    big = {"limit": 100}
    for status in STATUSES:
        want = sorted(r["id"] for r in rows if r["status"] == status)
        assert sorted(ids(call(rt, {**big, "status": status}))) == want
    two = [rows[0]["id"], rows[-1]["id"]]
    assert sorted(ids(call(rt, {**big, "ids": ",".join(two)}))) == sorted(two)
    totals = sorted(r["total"] for r in rows if r.get("total") is not None)
    middle = totals[len(totals) // 2]
    want = sorted(r["id"] for r in rows if r.get("total") is not None and r["total"] >= middle)
    assert sorted(ids(call(rt, {**big, "min_total": middle}))) == want
    days = sorted(r["created_at"][:10] for r in rows if r.get("created_at"))
    day = days[len(days) // 2]
    want = sorted(r["id"] for r in rows if (r.get("created_at") or "")[:10] > day)
    assert sorted(ids(call(rt, {**big, "created_after": day}))) == want
    piece = next(r["customer"] for r in rows if r.get("customer"))[1:4]
    want = sorted(r["id"] for r in rows if piece.lower() in (r.get("customer") or "").lower())
    assert sorted(ids(call(rt, {**big, "q_customer_cont": piece}))) == want


def test_sort_order_page_size_and_cursor(rt: ServiceRuntime) -> None:
    rows = _orders(rt)

    def totals(args: dict[str, Any]) -> list[int]:
        return [r["total"] for r in call(rt, {"limit": 100, **args})["data"]["data"] if "total" in r]

    by_total = totals({"sort": "total"})
    assert len(by_total) > 2 and by_total == sorted(by_total)
    down = totals({"sort": "-total"})
    assert down == sorted(down, reverse=True) and totals({"sort": "total", "order": "desc"}) == down
    first = call(rt, {"limit": 2})
    assert len(ids(first)) == min(2, len(rows)) and len(ids(call(rt, {}))) == min(10, len(rows))
    assert first["data"]["has_more"] is (len(rows) > 2)
    cursor = first["data"]["next_cursor"]
    assert cursor == ids(first)[-1]
    second = ids(call(rt, {"limit": 2, "starting_after": cursor}))
    everything = ids(call(rt, {"limit": 100}))
    assert second == everything[2:4]


def test_a_parameter_that_cannot_be_bound_or_an_unknown_value_is_refused_by_name(rt: ServiceRuntime) -> None:
    out = call(rt, {"expand": "customer"})
    assert not out["success"] and "expand" in out["error"]["message"]
    out = call(rt, {"sort": "no_such_field"})
    assert not out["success"] and "sort" in out["error"]["message"]
    out = call(rt, {"starting_after": "nobody"})
    assert not out["success"] and "starting_after" in out["error"]["message"]


def test_the_rest_route_takes_the_specs_own_names(rt: ServiceRuntime) -> None:
    app = create_service_app(rt, Settings(admin_token="t"))

    async def go() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            piece = next(r["customer"] for r in _orders(rt) if r.get("customer"))[1:4]
            ok = await client.get("/orders", params={"q[customer_cont]": piece, "limit": "100"})
            refused = await client.get("/orders", params={"expand": "customer"})
            return ok, refused

    ok, refused = asyncio.run(go())
    assert ok.status_code == 200 and all("id" in r for r in ok.json()["data"])
    assert refused.status_code in (400, 422) and "expand" in refused.text


def test_the_conformance_checker_verifies_the_bindings(folder: Path) -> None:
    report = verify_service(folder)
    check = next(t for t in report.tools if t.tool == "listOrders")
    assert check.passed, check.failure
    assert check.list_params is not None
    # every bound parameter's effect shown: the day bound on a timestamp (``created_after``), the
    # order both ways with the sort field, the page and the cursor
    assert check.list_params.refused == 1 and check.list_params.verified == 9
    assert check.list_params.untested == 0
