"""Read-only records and lists whose rows sit in a named array are served from typed state.

An argument-free ``GET`` of a keyless path whose answer declares fields (``GET /device``,
``GET /credits/balance``) is one seeded row, read-only, as a read-only collection is; a draw
(``/gifs/random``) or a read with inputs that make its answer computed (``/usage?from=``) stays a
world-model read. A list whose rows sit in one array beside paging scalars (``{"subAccounts":
[...], "statusCode": 200}``, ``{"data": [...], "object": "list"}``) lists rows of the collection,
and where the path's literal only qualifies them (``/sms/incoming`` answers ``incomingMessages``)
the array names the entity; an array under another name breaks a report down (``/deliverystats``
-> ``{"Bounces": [...], "InactiveMails": 3}``) and stays a world-model read. The checker expects
only the rows a required filter of the base call admits. Built from an inline document, called on
real SQLite over the uniform and REST routes, and conformance-checked.
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
from compoworld.synth.verify import verify_service
from tests.inline_service import build_inline
from tests.runtime_call import call

_DEVICE = {
    "type": "object",
    "properties": {
        "controllerType": {"type": "string"},
        "firmwareVersion": {"type": "string"},
        "mac1": {"type": "string"},
        "upTimeSeconds": {"type": "integer"},
    },
}
_BALANCE = {
    "type": "object",
    "properties": {"creditBalance": {"type": "number"}, "statusCode": {"type": "integer"}},
}
_GIF = {"type": "object", "properties": {"url": {"type": "string"}, "title": {"type": "string"}}}
_ACCOUNT = {
    "type": "object",
    "properties": {
        "accountNumber": {"type": "integer"},
        "firstName": {"type": "string"},
        "creditBalance": {"type": "number"},
    },
}
_MESSAGE = {
    "type": "object",
    "properties": {
        "incomingApiMessageId": {"type": "integer"},
        "messageText": {"type": "string"},
        "mobileNumber": {"type": "string"},
    },
}
_EXAMPLE = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "createdAt": {"type": "string"}},
}
_COUNT = {"type": "object", "properties": {"Name": {"type": "string"}, "Count": {"type": "integer"}}}
_PAGING = [
    {"name": n, "in": "query", "schema": {"type": "integer", "minimum": 0}} for n in ("limit", "offset")
]


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _get(op: str, schema: dict[str, Any], params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"get": {"operationId": op, "parameters": params or [], "responses": _ok(schema)}}


def _rows_beside(key: str, item: dict[str, Any], **scalars: str) -> dict[str, Any]:
    props: dict[str, Any] = {key: {"type": "array", "items": item}}
    props.update({k: {"type": t} for k, t in scalars.items()})
    return {"type": "object", "properties": props}


def _doc() -> dict[str, Any]:
    usage_from = {"name": "from", "in": "query", "schema": {"type": "string", "format": "date"}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Device and messaging records", "version": "1"},
        "paths": {
            "/device": _get("readDeviceDetails", _DEVICE),
            "/credits/balance": _get("getCreditBalance", _BALANCE),
            "/gifs/random": _get("randomGif", _GIF),
            "/usage": _get(
                "getUsage", {"type": "object", "properties": {"calls": {"type": "integer"}}}, [usage_from]
            ),
            "/subaccounts": _get(
                "getSubAccounts",
                _rows_beside("subAccounts", _ACCOUNT, statusCode="integer", timeStamp="string"),
            ),
            "/sms/incoming": _get(
                "getIncomingMessages",
                _rows_beside(
                    "incomingMessages", _MESSAGE, resultsLimit="integer", resultsTotalAvailable="integer"
                ),
                _PAGING,
            ),
            "/language/examples": _get(
                "getExamples", _rows_beside("data", _EXAMPLE, object="string"), _PAGING
            ),
            "/deliverystats": _get(
                "getDeliveryStats", _rows_beside("Bounces", _COUNT, InactiveMails="integer")
            ),
        },
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("records"), "records", _doc())


@pytest.fixture()
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def test_an_argument_free_read_of_a_keyless_record_is_its_one_seeded_row(rt: ServiceRuntime) -> None:
    for tool, entity in (("readDeviceDetails", "device"), ("getCreditBalance", "credit_balance")):
        assert rt.tools[tool].backend == "action"
        (row,) = rt.select(None, entity)
        out = call(rt, "e1", tool, {})
        assert out["success"] and out["backend"] == "action"
        assert out["data"] == {k: v for k, v in row.items() if k in out["data"]}
        assert call(rt, "e1", tool, {})["data"] == out["data"]  # the same record each time
    device = rt.select(None, "device")[0]
    assert call(rt, None, "readDeviceDetails", {})["data"]["firmwareVersion"] == device["firmwareVersion"]


def test_a_draw_and_a_read_computed_for_its_inputs_stay_world_model_reads(rt: ServiceRuntime) -> None:
    assert rt.tools["randomGif"].backend == "simulated"
    assert rt.tools["getUsage"].backend == "simulated"
    assert rt.manifest.entity("gif") is None and rt.manifest.entity("usage") is None


def test_rows_in_a_named_array_beside_paging_scalars_are_listed_rows(rt: ServiceRuntime) -> None:
    for tool, entity, key in (
        ("getSubAccounts", "subaccount", "subAccounts"),
        ("getIncomingMessages", "incoming_message", "incomingMessages"),
        ("getExamples", "example", "data"),
    ):
        assert rt.tools[tool].backend == "implemented", tool
        held = rt.select(None, entity)
        out = call(rt, None, tool, {})
        assert out["success"], out
        assert len(out["data"][key]) == len(held) > 0


def test_a_report_broken_down_by_an_array_named_otherwise_stays_a_world_model_read(
    rt: ServiceRuntime,
) -> None:
    assert rt.tools["getDeliveryStats"].backend == "simulated"
    assert rt.manifest.entity("deliverystat") is None and rt.manifest.entity("bounce") is None


def test_a_listed_array_pages_with_the_declared_limit(rt: ServiceRuntime) -> None:
    out = call(rt, None, "getIncomingMessages", {"limit": 1})
    assert out["success"] and len(out["data"]["incomingMessages"]) == 1


def test_the_rest_routes_answer_the_declared_bodies(folder: Path) -> None:
    app = create_service_app(folder, Settings())

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return await client.get("/device"), await client.get("/subaccounts")

    device, accounts = asyncio.run(go())
    assert device.status_code == 200 and set(device.json()) <= set(_DEVICE["properties"])
    assert accounts.status_code == 200 and isinstance(accounts.json()["subAccounts"], list)


def test_the_conformance_checker_passes_the_records_and_lists(folder: Path) -> None:
    report = verify_service(folder)
    assert report.passed, report.failed_tools
    checks = {t.tool: t.checks for t in report.tools}
    assert "lookup answers from the addressed row" in checks["readDeviceDetails"]


def _posts_doc() -> dict[str, Any]:
    post = {
        "type": "object",
        "properties": {
            "post_id": {"type": "string"},
            "title": {"type": "string"},
            "type": {"type": "string", "enum": ["offer", "wanted"]},
            "latitude": {"type": "number"},
        },
    }
    types = {
        "name": "types",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "enum": ["offer", "wanted"]},
    }
    latitude = {"name": "latitude", "in": "query", "schema": {"type": "number"}}
    listing = _rows_beside("posts", post, num_posts="integer")
    return {
        "openapi": "3.0.0",
        "info": {"title": "Posts", "version": "1"},
        "paths": {
            "/posts": {
                "get": {
                    "operationId": "get_posts",
                    "parameters": [types, latitude],
                    "responses": _ok(listing),
                }
            },
            "/posts/{post_id}": {
                "get": {
                    "operationId": "get_post",
                    "parameters": [
                        {"name": "post_id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": _ok(post),
                }
            },
        },
    }


def test_the_checker_expects_only_rows_a_required_filter_admits(tmp_path: Path) -> None:
    """The base call carries a required ``types``: the rows another argument's check expects are
    those of that type, not every row with the value. The lowest latitude lies on a row of another
    type than the first row's, seeded both ways round, so whichever type the base call asks for,
    one round checks a value some rows of the other type also hold."""
    spec = tmp_path / "posts.json"
    spec.write_text(json.dumps(_posts_doc()))
    folder = Path(build_service(spec, tmp_path / "lib").folder)
    seed = json.loads((folder / "seed.json").read_text())
    for first in ("offer", "wanted"):
        other = "wanted" if first == "offer" else "offer"
        for i, row in enumerate(seed["post"]):
            row["latitude"], row["type"] = float(-i), first if i == 0 else other
        (folder / "seed.json").write_text(json.dumps(seed))
        report = verify_service(folder)
        assert report.passed, (first, report.failed_tools)
