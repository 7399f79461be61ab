"""A read whose declared answer is a union of object variants answers a body one variant accepts.

Brex's ``GET /api/v1/product/{orderId}`` answers ``oneOf`` two objects, each requiring
``productOrderId``, ``mimeType`` and ``uri``; the rows an order inserts carry the order's own
fields, so the read of a new order used to answer ``{}``, which neither variant accepts. The
body is now completed to the variant whose required fields it holds most of, each missing one
given the fixed default a required field state has nothing for gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.runtime.fit import variant_fit
from compoworld.settings import Settings
from compoworld.synth.verify import verify_service
from tests.inline_service import build_inline
from tests.runtime_call import call

_LINK = {
    "type": "object",
    "required": ["id", "uri", "mimeType"],
    "properties": {"id": {"type": "string"}, "uri": {"type": "string"}, "mimeType": {"type": "string"}},
}
_INLINE = {
    "type": "object",
    "required": ["id", "mimeType", "data"],
    "properties": {"id": {"type": "string"}, "mimeType": {"type": "string"}, "data": {"type": "object"}},
}
_UNION = {"oneOf": [_LINK, _INLINE]}


def _doc() -> dict[str, Any]:
    def ok(schema: dict[str, Any]) -> dict[str, Any]:
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    file_id = {"name": "fileId", "in": "path", "required": True, "schema": {"type": "string"}}
    new = {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string"}}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Exports", "version": "1"},
        "paths": {
            "/files": {
                "get": {"operationId": "listFiles", "responses": ok({"type": "array", "items": _UNION})},
                "post": {
                    "operationId": "createFile",
                    "requestBody": {"content": {"application/json": {"schema": new}}},
                    "responses": ok(new),
                },
            },
            "/files/{fileId}": {
                "get": {"operationId": "getFile", "parameters": [file_id], "responses": ok(_UNION)}
            },
        },
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("exports"), "exports", _doc(), verify=False)


def test_the_read_of_a_row_lacking_every_variants_fields_answers_a_variant(folder: Path) -> None:
    rt = ServiceRuntime.from_folder(folder, Settings())
    assert rt.manifest.tool("getFile").backend == "implemented"  # type: ignore[union-attr]
    made = call(rt, "e1", "createFile", {"title": "Q3 export"})
    assert made["success"], made
    key = made["data"]["id"]
    read = call(rt, "e1", "getFile", {"fileId": key})
    assert read["success"], read
    jsonschema.validate(read["data"], _UNION)  # one variant accepts it (the first: it holds ``id``)
    assert read["data"]["id"] == key and set(read["data"]) == {"id", "uri", "mimeType"}
    again = call(rt, "e1", "getFile", {"fileId": key})
    assert again["data"] == read["data"]  # the defaults are fixed: the same answer every time
    listed = call(rt, "e1", "listFiles", {})
    assert listed["success"] and listed["data"]
    for item in listed["data"]:
        jsonschema.validate(item, _UNION)


def test_a_body_a_variant_accepts_is_kept_and_one_none_accepts_is_completed_to_the_nearest() -> None:
    fit = variant_fit(_UNION, lambda value: value)
    link = {"id": "f1", "uri": "https://files.example.com/f1", "mimeType": "text/csv"}
    assert fit(link) is link  # accepted as it is: not touched
    inline = fit({"id": "f2", "data": {"rows": 3}})  # holds two of the second variant's three
    jsonschema.validate(inline, _INLINE)
    assert inline["data"] == {"rows": 3} and inline["id"] == "f2" and "uri" not in inline
    assert variant_fit({"type": "object", "properties": {"id": {}}}, fit) is fit  # no union: as it was


def test_the_checker_passes_the_union_read(folder: Path) -> None:
    report = verify_service(folder)
    checks = {t.tool: t for t in report.tools}
    assert checks["getFile"].passed and checks["createFile"].passed, (checks["getFile"], checks["createFile"])
