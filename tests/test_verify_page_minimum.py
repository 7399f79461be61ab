"""The checker pages a list at the smallest page size its spec allows.

CORE's ``GET /articles/{id}/history?pageSize=&page=`` declares ``pageSize >= 10``: the checker
asked for a page of one row, which the service rightly refused, and an honest list failed its
check. It now asks for a page of the declared minimum and wants the next page to answer the rows
after it. Built from an inline document, called over HTTP on real SQLite.
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

_NOTE = {"type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"}}}


def _doc() -> dict[str, Any]:
    note = {"$ref": "#/components/schemas/Note"}
    size = {"name": "pageSize", "in": "query", "schema": {"type": "integer", "minimum": 10, "maximum": 100}}
    page = {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}}
    ok = {
        "200": {
            "description": "ok",
            "content": {"application/json": {"schema": {"type": "array", "items": note}}},
        }
    }
    one = {"200": {"description": "ok", "content": {"application/json": {"schema": note}}}}
    key = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Notes", "version": "1"},
        "paths": {
            "/notes": {"get": {"operationId": "listNotes", "parameters": [size, page], "responses": ok}},
            "/notes/{id}": {"get": {"operationId": "getNote", "parameters": [key], "responses": one}},
        },
        "components": {"schemas": {"Note": _NOTE}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("notes"), "notes", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_pages_of_the_minimum_size_follow_each_other(rt: ServiceRuntime) -> None:
    async def go() -> tuple[list[Any], list[Any], int]:
        app = create_service_app(rt, Settings(admin_token="t"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as http:
            first = (await http.get("/notes", params={"pageSize": 10, "page": 1})).json()
            second = (await http.get("/notes", params={"pageSize": 10, "page": 2})).json()
            small = await http.get("/notes", params={"pageSize": 1})
            return first, second, small.status_code

    first, second, small = asyncio.run(go())
    assert len(first) == 10 and second and {n["id"] for n in first}.isdisjoint(n["id"] for n in second)
    assert small in (400, 422)  # below the declared minimum


def test_the_list_passes_the_checker_with_its_paging_verified(rt: ServiceRuntime) -> None:
    assert len(rt.select(None, "note")) > 10
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
