"""A body field or argument of a column's name that cannot carry the column's values is not that column.

Salesforce Einstein's dataset has ``type: image|text-intent``; its deletion answers ``{"id", "type":
DATASET|MODEL}``, the type of the deleted *object*. Filled from the dataset's column, every delete
answered ``type: "image"`` and failed its own schema. Adyen's account is created with ``payoutSchedule:
"WEEKLY"`` (a string) and updated with ``payoutSchedule: {"action", "schedule"}`` (an object): bound to
the string column, the update refused every argument the checker sent from a stored row. A field
whose enum shares no member with the column's, or whose structure differs (object, list, scalar), is
another thing of that name (``responses.holds``): the body fills it as it fills a field no column
gives, and the argument binds no column. Built from an inline document, conformance-checked.
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


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def _doc() -> dict[str, Any]:
    dataset = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "type": {"type": "string", "enum": ["image", "text-intent"]},
            "payoutSchedule": {"type": "string", "enum": ["DAILY", "WEEKLY"]},
        },
    }
    create = {
        "type": "object",
        "required": ["name", "type"],
        "properties": {
            "name": {"type": "string"},
            "type": {"type": "string", "enum": ["image", "text-intent"]},
            "payoutSchedule": {"type": "string", "enum": ["DAILY", "WEEKLY"]},
        },
    }
    update = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "payoutSchedule": {
                "type": "object",
                "properties": {"action": {"type": "string"}, "schedule": {"type": "string"}},
            },
        },
    }
    deletion = {
        "type": "object",
        "required": ["id", "type"],
        "properties": {
            "id": {"type": "string"},
            "type": {"type": "string", "enum": ["DATASET", "MODEL"]},
            "message": {"type": "string"},
        },
    }
    listed = {"type": "object", "properties": {"data": {"type": "array", "items": dataset}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Datasets", "version": "1"},
        "paths": {
            "/datasets": {
                "get": {"operationId": "listDatasets", "responses": _ok(listed)},
                "post": {
                    "operationId": "createDataset",
                    "requestBody": _body(create),
                    "responses": _ok(dataset),
                },
            },
            "/datasets/{id}": {
                "get": {"operationId": "getDataset", "parameters": [_ID], "responses": _ok(dataset)},
                "patch": {
                    "operationId": "updateDataset",
                    "parameters": [_ID],
                    "requestBody": _body(update),
                    "responses": _ok(dataset),
                },
                "delete": {"operationId": "deleteDataset", "parameters": [_ID], "responses": _ok(deletion)},
            },
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("shapes"), "datasets", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_a_field_whose_enum_shares_no_value_with_the_column_is_not_the_column(rt: ServiceRuntime) -> None:
    delete = rt.manifest.tool("deleteDataset")
    read = rt.manifest.tool("getDataset")
    assert delete is not None and delete.backend == "implemented"
    assert read is not None and read.response is not None and read.response.fields.get("type") == "type"
    assert delete.response is not None and "type" not in delete.response.fields


def test_an_object_argument_binds_no_string_column(rt: ServiceRuntime) -> None:
    update = rt.manifest.tool("updateDataset")
    assert update is not None and update.backend == "implemented"
    assert update.arg_columns.get("name") == "name" and "payoutSchedule" not in update.arg_columns


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    assert {t.tool for t in report.tools if t.backend == "implemented"} >= {"deleteDataset", "updateDataset"}
