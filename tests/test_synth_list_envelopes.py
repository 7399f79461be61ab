"""List answers in envelopes no wrapper name announces are lists of typed rows, not computed reads.

``{"posts": [...], "group_ids": ["7"], "num_posts": 40}`` (an array of scalars beside the rows),
``{"orders": [...], "warnings": [...], "total": 3}`` (two arrays of objects, one named for the
collection) and a bare array of a schema that has the entity's exact properties under another
name (pandascore's ``BettingLeague`` beside ``League``): built from an inline document, then
created and listed over the service's REST routes on real SQLite, and conformance-checked.
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
from compoworld.synth.verify import verify_runtime

_POST = {
    "type": "object",
    "properties": {"post_id": {"type": "string"}, "title": {"type": "string"}, "body": {"type": "string"}},
}
_ORDER = {
    "type": "object",
    "properties": {"orderId": {"type": "string"}, "buyer": {"type": "string"}, "total": {"type": "number"}},
}
_LEAGUE = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "slug": {"type": "string"}},
}
_WARNING = {"type": "object", "properties": {"message": {"type": "string"}, "code": {"type": "integer"}}}

#: Two sort parameters (opendatasoft's deprecated ``sort`` beside ``order_by``).
_SORTS = [
    {"name": n, "in": "query", "schema": {"type": "array", "items": {"type": "string"}}, "explode": False}
    for n in ("sort", "order_by")
]


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _id(name: str) -> list[dict[str, Any]]:
    return [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}]


def _collection(plural: str, schema: str, listing: dict[str, Any], key: str) -> dict[str, Any]:
    body = {"required": True, "content": {"application/json": {"schema": _ref(schema)}}}
    return {
        f"/{plural}": {
            "get": {"operationId": f"list_{plural}", "parameters": _SORTS, "responses": _ok(listing)},
            "post": {"operationId": f"create_{plural}", "requestBody": body, "responses": _ok(_ref(schema))},
        },
        f"/{plural}/{{{key}}}": {
            "get": {"operationId": f"get_{plural}", "parameters": _id(key), "responses": _ok(_ref(schema))}
        },
    }


def _doc() -> dict[str, Any]:
    posts = {
        "type": "object",
        "properties": {
            "posts": {"type": "array", "items": _ref("Post")},
            "group_ids": {"type": "array", "items": {"type": "string"}},
            "num_posts": {"type": "integer"},
            "page": {"type": "integer"},
        },
    }
    orders = {
        "type": "object",
        "properties": {
            "orders": {"type": "array", "items": _ref("Order")},
            "warnings": {"type": "array", "items": _WARNING},
            "total": {"type": "integer"},
            "href": {"type": "string"},
        },
    }
    paths = {
        **_collection("posts", "Post", posts, "post_id"),
        **_collection("orders", "Order", orders, "orderId"),
        **_collection("leagues", "League", {"type": "array", "items": _ref("BettingLeague")}, "id"),
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Envelopes", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": {"Post": _POST, "Order": _ORDER, "League": _LEAGUE, "BettingLeague": dict(_LEAGUE)}
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("envelopes")
    spec = root / "envelopes.json"
    spec.write_text(json.dumps(_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_enveloped_and_aliased_lists_are_implemented(rt: ServiceRuntime) -> None:
    tools = {t.name: t for t in rt.manifest.tools}
    for name in ("list_posts", "list_orders", "list_leagues"):
        assert tools[name].backend == "implemented", (name, tools[name].simulated_reason)
        assert tools[name].operation == "list"
    assert tools["list_posts"].response is not None and tools["list_posts"].response.rows_at == ["posts"]
    assert tools["list_orders"].response is not None and tools["list_orders"].response.rows_at == ["orders"]


def test_a_second_sort_parameter_is_refused_by_name_not_ignored(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("list_posts")
    assert tool is not None and tool.listing is not None
    assert tool.listing.sort_arg == "sort" and "second sort parameter" in tool.listing.refused["order_by"]


def test_a_created_row_is_listed_in_the_spec_s_own_envelope(rt: ServiceRuntime) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
        rt.fork("env")
        app = create_service_app(rt, Settings(admin_token="t"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as http:
            h = {"X-Episode-Id": "env"}
            made = (
                await http.post("/posts", json={"title": "Sofa", "body": "Free to collect"}, headers=h)
            ).json()
            posts = (await http.get("/posts", headers=h)).json()
            await http.post("/orders", json={"buyer": "Ada", "total": 12.5}, headers=h)
            orders = (await http.get("/orders", headers=h)).json()
            await http.post("/leagues", json={"name": "Premier", "slug": "premier"}, headers=h)
            leagues = (await http.get("/leagues", headers=h)).json()
            return made, {"posts": posts, "orders": orders}, leagues

    made, lists, leagues = asyncio.run(go())
    posts, orders = lists["posts"], lists["orders"]
    assert made["post_id"] in [p["post_id"] for p in posts["posts"]]
    assert set(posts) <= {"posts", "group_ids", "num_posts", "page"}
    seed_posts = rt.select(None, "post")
    assert len(posts["posts"]) == len(seed_posts) + 1  # the episode's rows, not invented ones
    assert "Ada" in [o.get("buyer") for o in orders["orders"]] and "warnings" not in [
        k for o in orders["orders"] for k in o
    ]
    assert "premier" in [row.get("slug") for row in leagues]


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
