"""A DELETE on a collection under a parent's item deletes that parent's rows of it (an action).

``DELETE /buckets/{bucketKey}/messages`` (Runscope's style) names no verb; REST makes its effect
evident: the bucket's messages are gone, another bucket's stay, an unknown bucket is not found.
Built from an inline document, called over the service's REST routes on real SQLite.
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

_BUCKET = {"type": "object", "properties": {"key": {"type": "string"}, "name": {"type": "string"}}}
_MESSAGE = {
    "type": "object",
    "properties": {"uuid": {"type": "string"}, "body": {"type": "string"}, "status": {"type": "integer"}},
}

_LABEL = {"type": "object", "properties": {"uid": {"type": "string"}, "text": {"type": "string"}}}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _doc() -> dict[str, Any]:
    bucket, message = {"$ref": "#/components/schemas/Bucket"}, {"$ref": "#/components/schemas/Message"}
    key, uuid = _param("bucketKey"), _param("messageId")
    body = {"required": True, "content": {"application/json": {"schema": message}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Buckets", "version": "1"},
        "paths": {
            "/buckets": {
                "get": {"operationId": "listBuckets", "responses": _ok({"type": "array", "items": bucket})}
            },
            "/buckets/{bucketKey}": {
                "get": {"operationId": "getBucket", "parameters": [key], "responses": _ok(bucket)}
            },
            "/buckets/{bucketKey}/messages": {
                "get": {
                    "operationId": "listMessages",
                    "parameters": [key],
                    "responses": _ok({"type": "array", "items": message}),
                },
                "post": {
                    "operationId": "createMessage",
                    "parameters": [key],
                    "requestBody": body,
                    "responses": _ok(message),
                },
                "delete": {
                    "operationId": "clearMessages",
                    "parameters": [key],
                    "responses": {"204": {"description": "deleted"}},
                },
            },
            "/buckets/{bucketKey}/labels": {
                "get": {
                    "operationId": "listLabels",
                    "parameters": [key],
                    "responses": _ok({"type": "array", "items": {"$ref": "#/components/schemas/Label"}}),
                },
                "delete": {  # names which label goes: not a clear of them all
                    "operationId": "removeLabel",
                    "parameters": [key],
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Label"}}}
                    },
                    "responses": {"204": {"description": "deleted"}},
                },
            },
            "/buckets/{bucketKey}/messages/{messageId}": {
                "get": {"operationId": "getMessage", "parameters": [key, uuid], "responses": _ok(message)}
            },
        },
        "components": {"schemas": {"Bucket": _BUCKET, "Message": _MESSAGE, "Label": _LABEL}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("buckets")
    spec = root / "buckets.json"
    spec.write_text(json.dumps(_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_the_delete_on_the_child_collection_is_a_clear_action(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("clearMessages")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "clear" and tool.action.target == "message"


def test_a_delete_whose_arguments_name_the_rows_is_no_clear(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("removeLabel")
    assert tool is not None and tool.backend == "simulated" and tool.action is None
    assert "names which of its rows" in (tool.simulated_reason or "")


def test_clearing_deletes_the_bucket_s_messages_and_no_other_bucket_s(rt: ServiceRuntime) -> None:
    first, second = (b["key"] for b in rt.select(None, "bucket")[:2])

    async def go() -> tuple[int, list[Any], list[Any], int]:
        rt.fork("clr")
        app = create_service_app(rt, Settings(admin_token="t"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as http:
            h = {"X-Episode-Id": "clr"}
            for k in (first, first, second):
                made = await http.post(
                    f"/buckets/{k}/messages", json={"body": "hello", "status": 200}, headers=h
                )
                assert made.status_code == 200, made.text
            cleared = await http.delete(f"/buckets/{first}/messages", headers=h)
            left = (await http.get(f"/buckets/{first}/messages", headers=h)).json()
            other = (await http.get(f"/buckets/{second}/messages", headers=h)).json()
            unknown = await http.delete("/buckets/no-such-bucket/messages", headers=h)
            return cleared.status_code, left, other, unknown.status_code

    status, left, other, unknown = asyncio.run(go())
    assert status == 204 and left == []
    tool = rt.manifest.tool("clearMessages")
    assert tool is not None and tool.action is not None and tool.action.parent_column is not None
    column = tool.action.parent_column
    after, seed = rt.select("clr", "message"), rt.select(None, "message")
    assert first not in {r[column] for r in after} and len(other) >= 1
    assert len(after) == sum(1 for r in seed if r[column] != first) + 1  # only the first bucket's went
    assert unknown == 404


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


# -- ``DELETE /bundles/{bundle_id}/tracks``: a parameter named for the parent's key is no verb's row --

_TRACK = {"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string"}}}


def _bundles_doc() -> dict[str, Any]:
    bundle, track = (
        {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}},
        _TRACK,
    )
    bid = _param("bundle_id")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Bundles", "version": "1"},
        "paths": {
            "/bundles": {
                "get": {"operationId": "listBundles", "responses": _ok({"type": "array", "items": bundle})}
            },
            "/bundles/{bundle_id}": {
                "get": {"operationId": "getBundle", "parameters": [bid], "responses": _ok(bundle)}
            },
            "/bundles/{bundle_id}/tracks": {
                "get": {
                    "operationId": "listTracks",
                    "parameters": [bid],
                    "responses": _ok({"type": "array", "items": track}),
                },
                "delete": {
                    "operationId": "deleteTracks",
                    "parameters": [bid],
                    "responses": {"204": {"description": "deleted"}},
                },
            },
        },
    }


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("bundles")
    spec = root / "bundles.json"
    spec.write_text(json.dumps(_bundles_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_delete_under_an_item_named_by_its_key_clears_that_items_children(bundles: ServiceRuntime) -> None:
    tool = bundles.manifest.tool("deleteTracks")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "clear" and tool.action.target == "track"
    tracks = bundles.select(None, "track")
    mine = tracks[0]["bundle_id"]
    assert (
        asyncio.run(bundles.call_tool("d1", "deleteTracks", {"bundle_id": mine})).success is False
    )  # no fork
    bundles.fork("d1")
    assert asyncio.run(bundles.call_tool("d1", "deleteTracks", {"bundle_id": mine})).success
    left = bundles.select("d1", "track")
    assert [t for t in left if t["bundle_id"] == mine] == []
    assert len(left) == len([t for t in tracks if t["bundle_id"] != mine])
    report = asyncio.run(verify_runtime(bundles))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
