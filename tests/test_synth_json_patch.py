"""An update whose body is a JSON Patch document (RFC 6902) applies its operations to the row.

``PATCH /rooms/{roomNumber} [{"op": "replace", "path": "/name", "value": "Deluxe"}]`` (hetras's
rooms and rates, Visma's projects, LaunchDarkly's flags) is served from typed state: each path names
a field of the room (a list field is patched inside: ``/amenities/-`` appends), ``test`` compares,
and a patch naming no field, the key, or failing a test is refused whole, leaving the row as it was.
Where the spec types every ``value`` as something no field of the row holds, nothing could be
patched, and the tool stays with the world model. Built from an inline document, called over the
service's REST routes on real SQLite, conformance-checked.
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
from tests.spec_parts import ok, path_param

_ROOM = {
    "type": "object",
    "required": ["number", "name"],
    "properties": {
        "number": {"type": "string"},
        "name": {"type": "string"},
        "floor": {"type": "integer"},
        "notes": {"type": "string"},
        "amenities": {"type": "array", "items": {"type": "string"}},
    },
}
_BADGE = {"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string"}}}


def _patch_body(value: dict[str, Any]) -> dict[str, Any]:
    op = {
        "type": "object",
        "properties": {
            "op": {"type": "string"},
            "path": {"type": "string"},
            "from": {"type": "string"},
            "value": value,
        },
    }
    schema = {"type": "array", "description": "A set of JSON Patch operations.", "items": op}
    return {"required": True, "content": {"application/json-patch+json": {"schema": schema}}}


def _doc() -> dict[str, Any]:
    room, badge = {"$ref": "#/components/schemas/Room"}, {"$ref": "#/components/schemas/Badge"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Patches", "version": "1"},
        "paths": {
            "/rooms": {
                "get": {"operationId": "listRooms", "responses": ok({"type": "array", "items": room})},
                "post": {
                    "operationId": "createRoom",
                    "requestBody": {"content": {"application/json": {"schema": room}}},
                    "responses": ok(room),
                },
            },
            "/rooms/{roomNumber}": {
                "get": {
                    "operationId": "getRoom",
                    "parameters": [path_param("roomNumber")],
                    "responses": ok(room),
                },
                "patch": {
                    "operationId": "patchRoom",
                    "parameters": [path_param("roomNumber")],
                    "requestBody": _patch_body({}),
                    "responses": {"204": {"description": "patched"}},
                },
            },
            "/badges": {
                "get": {"operationId": "listBadges", "responses": ok({"type": "array", "items": badge})},
                "post": {
                    "operationId": "createBadge",
                    "requestBody": {"content": {"application/json": {"schema": badge}}},
                    "responses": ok(badge),
                },
            },
            "/badges/{badgeId}": {
                "get": {
                    "operationId": "getBadge",
                    "parameters": [path_param("badgeId")],
                    "responses": ok(badge),
                },
                "patch": {  # every value an object: no field of a badge holds one
                    "operationId": "patchBadge",
                    "parameters": [path_param("badgeId")],
                    "requestBody": _patch_body({"type": "object", "properties": {}}),
                    "responses": ok(badge),
                },
            },
        },
        "components": {"schemas": {"Room": _ROOM, "Badge": _BADGE}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("patches"), "patches", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def _client(rt: ServiceRuntime) -> httpx.AsyncClient:
    app = create_service_app(rt, Settings(admin_token="t"))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc")


def test_a_json_patch_update_is_a_patch_of_the_row(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("patchRoom")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "set" and tool.action.patch == tool.body_whole
    badge = rt.manifest.tool("patchBadge")
    assert badge is not None and badge.backend == "simulated"


def test_patch_operations_change_what_a_later_read_returns(rt: ServiceRuntime) -> None:
    row = rt.select(None, "room")[0]
    key, amenities = row["number"], list(row["amenities"] or [])

    async def go() -> list[Any]:
        rt.fork("p")
        async with _client(rt) as http:
            h = {"X-Episode-Id": "p"}
            ops = [
                {"op": "replace", "path": "/name", "value": "Deluxe"},
                {"op": "add", "path": "/amenities/-", "value": "sauna"},
                {"op": "remove", "path": "/notes"},
                {"op": "test", "path": "/name", "value": "Deluxe"},
            ]
            done = await http.patch(f"/rooms/{key}", json=ops, headers=h)
            got = (await http.get(f"/rooms/{key}", headers=h)).json()
            failed = await http.patch(
                f"/rooms/{key}",
                json=[
                    {"op": "replace", "path": "/floor", "value": 9},
                    {"op": "test", "path": "/name", "value": "x"},
                ],
                headers=h,
            )
            unknown = await http.patch(
                f"/rooms/{key}", json=[{"op": "add", "path": "/view", "value": 1}], headers=h
            )
            keyed = await http.patch(
                f"/rooms/{key}", json=[{"op": "replace", "path": "/number", "value": "9"}], headers=h
            )
            typed = await http.patch(
                f"/rooms/{key}", json=[{"op": "replace", "path": "/floor", "value": "9"}], headers=h
            )
            after = (await http.get(f"/rooms/{key}", headers=h)).json()
            seed = (await http.get(f"/rooms/{key}")).json()
            return [
                done.status_code,
                got,
                failed.status_code,
                unknown.status_code,
                keyed.status_code,
                typed.status_code,
                after,
                seed,
            ]

    done, got, failed, unknown, keyed, typed, after, seed = asyncio.run(go())
    assert done == 204
    assert got["name"] == "Deluxe" and got["amenities"] == [*amenities, "sauna"] and "notes" not in got
    assert failed == 409 and after["floor"] == row["floor"]  # a failed test applies nothing
    assert unknown == 422 and keyed == 422 and typed == 422
    assert seed["name"] == row["name"]  # the seed view is untouched


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    assert "patch visible to a later read" in checks["patchRoom"]
