"""An action binds every path parameter it is called with, and ``write`` is a field write.

Opto22's ``POST /analogOutputs/{ioName}/eu {value}`` (``writeAnalogOutputEu``) writes the point's
value, which ``GET /analogOutputs/{ioName}/eu`` and the point list read back: ``write`` is a ``set``.
Its ``GET /tables/int64s/{tableName}/{index}/_string`` was bound as a lookup of the table row by
``tableName`` that never read ``index``: any element asked for answered the same row. A path
parameter an action does not use is now either the parent its literal names (``/calendars/{calendarId}
/events/{eventId}/details`` reads an event only under its own calendar) or the reason the action
stays with the world model. A verb before the collection (VTEX's ``POST /archive/calculatorConfiguration/
{idCalculatorConfiguration}``) addresses the row the trailing key names. Built from an inline
document, called on real SQLite, conformance-checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline
from tests.runtime_call import call


def _ok(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    if schema is None:
        return {"200": {"description": "ok"}}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _param(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": kind}}


_VALUE = {"type": "object", "properties": {"value": {"type": "number"}}}


def _doc() -> dict[str, Any]:
    point = {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "number"}}}
    table = {"type": "object", "properties": {"name": {"type": "string"}, "length": {"type": "integer"}}}
    event = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "summary": {"type": "string"}, "status": {"type": "string"}},
    }
    promotion = {
        "type": "object",
        "properties": {
            "idPromotion": {"type": "string"},
            "name": {"type": "string"},
            "isArchived": {"type": "boolean"},
        },
    }
    body = {"required": True, "content": {"application/json": {"schema": _VALUE}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Device", "version": "1"},
        "paths": {
            "/points": {
                "get": {"operationId": "readPoints", "responses": _ok({"type": "array", "items": point})}
            },
            "/points/{pointName}/eu": {
                "get": {
                    "operationId": "readPointEu",
                    "parameters": [_param("pointName")],
                    "responses": _ok(_VALUE),
                },
                "post": {
                    "operationId": "writePointEu",
                    "parameters": [_param("pointName")],
                    "requestBody": body,
                    "responses": _ok(),
                },
            },
            "/promotionconfiguration": {
                "get": {
                    "operationId": "listPromotions",
                    "responses": _ok({"type": "array", "items": promotion}),
                }
            },
            "/promotionconfiguration/{idPromotion}": {
                "get": {
                    "operationId": "getPromotion",
                    "parameters": [_param("idPromotion")],
                    "responses": _ok(promotion),
                }
            },
            "/archive/promotionConfiguration/{idPromotion}": {
                "post": {
                    "operationId": "ArchivePromotion",
                    "parameters": [_param("idPromotion")],
                    "responses": _ok(),
                }
            },
            "/unarchive/promotionConfiguration/{idPromotion}": {
                "post": {
                    "operationId": "UnarchivePromotion",
                    "parameters": [_param("idPromotion")],
                    "responses": _ok(),
                }
            },
            "/tables": {
                "get": {"operationId": "readTables", "responses": _ok({"type": "array", "items": table})}
            },
            "/tables/{tableName}": {
                "get": {
                    "operationId": "readTable",
                    "parameters": [_param("tableName")],
                    "responses": _ok(table),
                }
            },
            "/tables/{tableName}/{index}/_string": {
                "get": {
                    "operationId": "readTableElementAsString",
                    "parameters": [_param("tableName"), _param("index", "integer")],
                    "responses": _ok({"type": "object", "properties": {"value": {"type": "string"}}}),
                }
            },
            "/calendars/{calendarId}/events": {
                "get": {
                    "operationId": "listEvents",
                    "parameters": [_param("calendarId")],
                    "responses": _ok(
                        {"type": "object", "properties": {"items": {"type": "array", "items": event}}}
                    ),
                }
            },
            "/calendars/{calendarId}/events/{eventId}": {
                "get": {
                    "operationId": "getEvent",
                    "parameters": [_param("calendarId"), _param("eventId")],
                    "responses": _ok(event),
                }
            },
            "/calendars/{calendarId}/events/{eventId}/details": {
                "get": {
                    "operationId": "eventDetails",
                    "parameters": [_param("calendarId"), _param("eventId")],
                    "responses": _ok(event),
                }
            },
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("device"), "device", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_write_sets_the_value_a_later_read_returns(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("writePointEu")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "set" and tool.arg_columns == {"value": "value"}
    entity = rt.manifest.entity("point")
    assert entity is not None
    name = rt.select(None, "point")[0][entity.pk]
    written = call(rt, "ep-write", "writePointEu", {"pointName": name, "value": 12.5})
    assert written["success"], written
    read = call(rt, "ep-write", "readPointEu", {"pointName": name})
    assert read["success"] and read["data"] == {"value": 12.5}, read


def test_an_action_that_would_leave_a_path_parameter_unread_stays_with_the_world_model(
    rt: ServiceRuntime,
) -> None:
    tool = rt.manifest.tool("readTableElementAsString")
    assert tool is not None and tool.backend == "simulated"
    assert "index" in (tool.simulated_reason or "")


def test_a_parent_the_path_names_scopes_the_addressed_row(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("eventDetails")
    assert tool is not None and tool.backend == "action" and tool.action is not None
    assert tool.action.scope == {"calendarId": "calendar_id"}
    row = rt.select(None, "event")[0]
    other = next(r["id"] for r in rt.select(None, "calendar") if r["id"] != row["calendar_id"])
    found = call(rt, None, "eventDetails", {"calendarId": row["calendar_id"], "eventId": row["id"]})
    elsewhere = call(rt, None, "eventDetails", {"calendarId": other, "eventId": row["id"]})
    assert found["success"], found
    assert not elsewhere["success"] and elsewhere["error"]["code"] == "not_found", elsewhere


def test_a_verb_before_the_collection_addresses_the_row_its_key_names(rt: ServiceRuntime) -> None:
    archive, unarchive = rt.manifest.tool("ArchivePromotion"), rt.manifest.tool("UnarchivePromotion")
    assert archive is not None and archive.backend == "action", archive and archive.simulated_reason
    assert archive.pk_arg == "idPromotion"
    assert archive.action is not None and archive.action.sets == {"isArchived": True}
    assert unarchive is not None and unarchive.action is not None
    assert unarchive.action.sets == {"isArchived": False} and unarchive.action.requires == {
        "isArchived": [True]
    }


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    assert any("later read" in c for c in checks["writePointEu"]), checks["writePointEu"]
