"""A list's required request header that selects no rows (an application key) is taken as given.

Hetras declares ``App-Id`` and ``App-Key`` as required headers of every list. Unbindable, they were
refused at any value but their (absent) default, so every call was refused, and the lists failed
their own checks. A required header with no default that binds no column is recorded as a header
the list takes as given (``ListBinding.headers``), as reads and writes take it; an optional one
that binds nothing is still refused by name. Built from an inline document, conformance-checked.
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

_KEY = {"name": "App-Key", "in": "header", "required": True, "schema": {"type": "string"}}
_TRACE = {"name": "X-Trace", "in": "header", "required": False, "schema": {"type": "string"}}


def _doc() -> dict[str, Any]:
    hotel = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    ok = {
        "200": {
            "description": "ok",
            "content": {"application/json": {"schema": {"type": "array", "items": hotel}}},
        }
    }
    one = {"200": {"description": "ok", "content": {"application/json": {"schema": hotel}}}}
    hotel_id = {"name": "hotelId", "in": "path", "required": True, "schema": {"type": "integer"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Hotels", "version": "1"},
        "paths": {
            "/hotels": {"get": {"operationId": "listHotels", "parameters": [_KEY, _TRACE], "responses": ok}},
            "/hotels/{hotelId}": {
                "get": {"operationId": "getHotel", "parameters": [_KEY, hotel_id], "responses": one}
            },
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("hotels"), "hotels", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_a_required_key_header_is_taken_as_given_and_an_optional_one_refused(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("listHotels")
    assert tool is not None and tool.backend == "implemented" and tool.listing is not None
    assert tool.listing.headers == ["App_Key"] and set(tool.listing.refused) == {"X_Trace"}
    listed = call(rt, None, "listHotels", {"App_Key": "k-123"})
    assert listed["success"] and len(listed["data"]) == len(rt.select(None, "hotel")), listed
    traced = call(rt, None, "listHotels", {"App_Key": "k-123", "X_Trace": "t"})
    assert not traced["success"] and "X_Trace" in traced["error"]["message"], traced


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
