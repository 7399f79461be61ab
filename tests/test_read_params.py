"""A one-row read binds every parameter it is called with, or refuses it by name (issue 10 item 3).

A read by key answered the stored row whatever else it was asked: ``?fields=name`` (a sparse field
set), ``?status=open``, a required ``countryCode`` that names nothing the row holds. Now an optional
parameter is refused by name at any value but its default; a required one must name a field the
row holds (the row must hold the value given: another is ``not_found``), else the read cannot answer
from the row and stays with the world model. The encoding of a binary answer (an export's
``format``) chooses nothing typed state holds and is taken as given. Built from an inline document,
called on real SQLite, conformance-checked.
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


def _q(name: str, *, required: bool = False, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": {"type": kind}}


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _doc() -> dict[str, Any]:
    ticket = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "string"}},
    }
    binary = {
        "200": {
            "description": "ok",
            "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
        }
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Tickets", "version": "1"},
        "paths": {
            "/tickets": {
                "get": {"operationId": "listTickets", "responses": _ok({"type": "array", "items": ticket})}
            },
            "/tickets/{id}": {
                "get": {
                    "operationId": "getTicket",
                    "parameters": [_ID, _q("fields")],
                    "responses": _ok(ticket),
                }
            },
            "/open/tickets/{id}": {
                "get": {
                    "operationId": "getTicketInStatus",
                    "parameters": [_ID, _q("status", required=True)],
                    "responses": _ok(ticket),
                }
            },
            "/regional/tickets/{id}": {
                "get": {
                    "operationId": "getRegionalTicket",
                    "parameters": [_ID, _q("countryCode", required=True)],
                    "responses": _ok(ticket),
                }
            },
            "/tickets/{id}/export": {
                "get": {
                    "operationId": "exportTicket",
                    "parameters": [_ID, _q("format", required=True)],
                    "responses": binary,
                }
            },
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("tickets"), "tickets", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_an_optional_parameter_is_refused_by_name(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("getTicket")
    assert tool is not None and tool.backend == "implemented" and tool.listing is not None
    assert set(tool.listing.refused) == {"fields"}
    key = rt.select(None, "ticket")[0]["id"]
    assert call(rt, None, "getTicket", {"id": key})["success"]
    refused = call(rt, None, "getTicket", {"id": key, "fields": "title"})
    assert not refused["success"] and "fields" in refused["error"]["message"], refused


def test_a_required_parameter_names_a_field_the_row_must_hold(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("getTicketInStatus")
    assert tool is not None and tool.backend in ("implemented", "action"), tool and tool.simulated_reason
    row = rt.select(None, "ticket")[0]
    held = call(rt, None, "getTicketInStatus", {"id": row["id"], "status": row["status"]})
    other = call(rt, None, "getTicketInStatus", {"id": row["id"], "status": f"not-{row['status']}"})
    assert held["success"], held
    assert not other["success"] and other["error"]["code"] == "not_found", other


def test_a_required_parameter_naming_nothing_leaves_the_read_with_the_world_model(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("getRegionalTicket")
    assert tool is not None and tool.backend == "simulated"
    assert "countryCode" in (tool.simulated_reason or "")


def test_the_encoding_of_a_binary_answer_is_taken_as_given(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("exportTicket")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    assert "unhonoured 'fields' refused by name" in checks["getTicket"]
