"""Counts of a collection bound as its list is: Graph's ``/$count`` with ``$search`` and ``$filter``.

``GET /users/$count`` answers (its digits, the spec's ``text/plain`` integer) how many users the list with the same ``$search``
would hold; ``GET /groups/{group-id}/members/$count`` counts one group's members only; a create is
counted by the next call; a ``$filter`` the rows cannot answer is refused by name (as the list
refuses it), never ignored, and so is a paging argument (a count counts every match). Built from an inline document, called over the REST routes on real SQLite, verified.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from tests.inline_service import build_inline
from tests.spec_parts import json_body, ok, path_param

_USER = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "displayName": {"type": "string"},
        "city": {"type": "string"},
        "groupId": {"type": "string"},
    },
}
_QUERY = [
    {"name": "$top", "in": "query", "schema": {"type": "integer", "minimum": 0}},
    {"name": "$skip", "in": "query", "schema": {"type": "integer", "minimum": 0}},
    {"name": "$search", "in": "query", "schema": {"type": "string"}},
    {"name": "$filter", "in": "query", "schema": {"type": "string"}},
]
_COUNT = {
    "200": {
        "description": "The count of the resource",
        "content": {"text/plain": {"schema": {"type": "integer", "format": "int32"}}},
    }
}


def _page(ref: str) -> dict[str, Any]:
    return ok({"type": "object", "properties": {"value": {"type": "array", "items": {"$ref": ref}}}})


def _doc() -> dict[str, Any]:
    user, group, event = ("#/components/schemas/" + n for n in ("user", "group", "event"))
    gid = path_param("group-id")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Directory", "version": "1"},
        "paths": {
            "/users": {
                "get": {"operationId": "users.List", "parameters": _QUERY, "responses": _page(user)},
                "post": {
                    "operationId": "users.Create",
                    "requestBody": json_body({"$ref": user}),
                    "responses": ok({"$ref": user}),
                },
            },
            "/users/{user-id}": {
                "get": {
                    "operationId": "users.Get",
                    "parameters": [path_param("user-id")],
                    "responses": ok({"$ref": user}),
                }
            },
            "/users/$count": {
                "get": {"operationId": "Get.Count.users", "parameters": _QUERY[2:], "responses": _COUNT}
            },
            "/users/count": {  # a count with a page size: refused by name
                "get": {"operationId": "Get.Paged.count", "parameters": _QUERY[:1], "responses": _COUNT}
            },
            "/groups": {"get": {"operationId": "groups.List", "responses": _page(group)}},
            "/groups/{group-id}/events": {
                "get": {
                    "operationId": "events.List",
                    "parameters": [gid, *_QUERY],
                    "responses": _page(event),
                },
                "post": {
                    "operationId": "events.Create",
                    "parameters": [gid],
                    "requestBody": json_body({"$ref": event}),
                    "responses": ok({"$ref": event}),
                },
            },
            "/groups/{group-id}/events/$count": {
                "get": {
                    "operationId": "Get.Count.events",
                    "parameters": [gid, *_QUERY[2:]],
                    "responses": _COUNT,
                }
            },
        },
        "components": {
            "schemas": {
                "user": _USER,
                "group": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                },
                "event": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "subject": {"type": "string"}},
                },
            }
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("counts"), "directory", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def _client(rt: ServiceRuntime) -> httpx.AsyncClient:
    app = create_service_app(rt, Settings(admin_token="t"))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc")


def test_graph_counts_are_count_actions_and_a_page_size_is_refused(rt: ServiceRuntime) -> None:
    """Built with verification on: a count left as an action passed the conformance checks."""
    for name in ("Get_Count_users", "Get_Count_events"):
        tool = rt.manifest.tool(name)
        assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
        assert tool.action is not None and tool.action.kind == "count" and tool.kind == "read"
        assert tool.search_arg == "search" and tool.listing is not None and "filter" in tool.listing.refused
    paged = rt.manifest.tool("Get_Paged_count")
    assert paged is not None and paged.backend == "action", paged and paged.simulated_reason
    assert paged.listing is not None and "top" in paged.listing.refused


def test_a_count_answers_the_number_the_list_holds_and_sees_a_create(rt: ServiceRuntime) -> None:
    users = rt.select(None, "user")
    word = str(users[0]["displayName"]).split()[0]

    async def go() -> dict[str, Any]:
        rt.fork("cnt")
        out: dict[str, Any] = {}
        async with _client(rt) as http:
            h = {"X-Episode-Id": "cnt"}
            every = await http.get("/users/$count", headers=h)
            out["every"] = every.text
            listed = (await http.get("/users", params={"$search": word, "$top": 500}, headers=h)).json()
            out["listed"] = len(listed["value"])
            out["searched"] = (await http.get("/users/$count", params={"$search": word}, headers=h)).text
            made = await http.post("/users", json={"displayName": f"{word} Newcomer"}, headers=h)
            assert made.status_code in (200, 201), made.text
            out["after"] = (await http.get("/users/$count", params={"$search": word}, headers=h)).text
            refused = await http.get("/users/$count", params={"$filter": "city eq 'Oslo'"}, headers=h)
            out["refused"] = (refused.status_code, refused.text)
            out["seed"] = (await http.get("/users/$count")).text
        return out

    out = asyncio.run(go())
    assert out["every"].isdigit()  # the digits a text/plain client reads
    assert int(out["every"]) == len(users) and int(out["seed"]) == len(users)
    assert int(out["searched"]) == out["listed"] >= 1 and int(out["after"]) == out["listed"] + 1
    assert out["refused"][0] in (400, 422) and "filter" in out["refused"][1]


def test_a_count_under_a_parent_counts_that_parent_s_rows_only(rt: ServiceRuntime) -> None:
    group = rt.select(None, "group")[0]["id"]
    mine = [e for e in rt.select(None, "event") if e.get("group_id") == group]

    async def go() -> tuple[str, str]:
        rt.fork("grp")
        async with _client(rt) as http:
            h = {"X-Episode-Id": "grp"}
            before = (await http.get(f"/groups/{group}/events/$count", headers=h)).text
            await http.post(f"/groups/{group}/events", json={"subject": "Offsite"}, headers=h)
            return before, (await http.get(f"/groups/{group}/events/$count", headers=h)).text

    before, after = asyncio.run(go())
    assert int(before) == len(mine) and int(after) == len(mine) + 1
