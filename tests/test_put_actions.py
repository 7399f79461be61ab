"""``Put`` operations: AWS's ``PutScalingPolicy`` (a POST of the JSON protocol) creates the policy
or replaces the one its key names; ``PUT /functions/{FunctionName}/concurrency`` writes that part
of the addressed row. Read from the name after the method only where the name starts with the
request's own method (``postMessages`` on a POST), never AWS's verb. Built from inline documents
(real synthesis and verification), called over real HTTP (ASGI) with real SQLite state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compoworld.manifest import load_manifest
from tests.inline_service import build_inline
from tests.service_http import EpisodeClient
from tests.spec_parts import amz_target_op, json_body, ok, path_param

_POLICY = {
    "type": "object",
    "properties": {
        "PolicyName": {"type": "string"},
        "AdjustmentType": {"type": "string", "enum": ["ChangeInCapacity", "ExactCapacity"]},
        "Cooldown": {"type": "integer"},
    },
}


def _op(name: str, body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    return amz_target_op(f"Scaling.{name}", body, answer)


def _policies() -> dict[str, Any]:
    put = {
        "type": "object",
        "required": ["PolicyName", "AdjustmentType"],
        "properties": {k: v for k, v in _POLICY["properties"].items()},
    }
    named = {"type": "object", "required": ["PolicyName"], "properties": {"PolicyName": {"type": "string"}}}
    listed = {"type": "object", "properties": {"ScalingPolicies": {"type": "array", "items": _POLICY}}}
    paths: dict[str, Any] = {}
    paths |= _op(
        "PutScalingPolicy", put, {"type": "object", "properties": {"PolicyName": {"type": "string"}}}
    )
    paging = {
        "type": "object",
        "properties": {"MaxRecords": {"type": "integer"}, "NextToken": {"type": "string"}},
    }
    paths |= _op("DescribePolicies", paging, listed)
    paths |= _op("DescribePolicy", named, {"type": "object", "properties": {"Policy": _POLICY}})
    paths |= _op("DeletePolicy", named, {"type": "object"})
    return {"openapi": "3.0.0", "info": {"title": "Scaling", "version": "2011-01-01"}, "paths": paths}


def _functions() -> dict[str, Any]:
    concurrency = {"type": "object", "properties": {"ReservedConcurrentExecutions": {"type": "integer"}}}
    function = {
        "type": "object",
        "properties": {
            "FunctionName": {"type": "string"},
            "Runtime": {"type": "string"},
            "Concurrency": concurrency,
        },
    }
    make = {"type": "object", "required": ["FunctionName"], "properties": function["properties"]}
    name = [path_param("FunctionName")]
    return {
        "openapi": "3.0.0",
        "info": {"title": "Functions", "version": "2015-03-31"},
        "paths": {
            "/functions": {
                "post": {
                    "operationId": "CreateFunction",
                    "requestBody": json_body(make),
                    "responses": ok(function),
                },
                "get": {
                    "operationId": "ListFunctions",
                    "responses": ok(
                        {"type": "object", "properties": {"Functions": {"type": "array", "items": function}}}
                    ),
                },
            },
            "/functions/{FunctionName}": {
                "get": {"operationId": "GetFunction", "parameters": name, "responses": ok(function)},
            },
            "/functions/{FunctionName}/concurrency": {
                "put": {
                    "operationId": "PutFunctionConcurrency",
                    "parameters": name,
                    "requestBody": json_body(concurrency),
                    "responses": ok(concurrency),
                }
            },
        },
    }


def test_an_aws_put_creates_or_replaces_the_row_its_key_names(tmp_path: Path) -> None:
    folder = build_inline(tmp_path, "scaling", _policies())
    tool = {t.name: t for t in load_manifest(folder).tools}["PutScalingPolicy"]
    assert tool.backend == "action" and tool.action is not None and tool.action.upsert
    client = EpisodeClient(folder)
    for cooldown in (60, 300):  # the second put replaces the first: one row, the new values
        put = {"PolicyName": "scale-out", "AdjustmentType": "ChangeInCapacity", "Cooldown": cooldown}
        assert client.amz("Scaling.PutScalingPolicy", put).status_code == 200
    listed = client.amz("Scaling.DescribePolicies", {}).json()["ScalingPolicies"]
    mine = [p for p in listed if p["PolicyName"] == "scale-out"]
    assert len(mine) == 1 and mine[0]["Cooldown"] == 300


def test_a_put_on_a_row_s_part_writes_that_part(tmp_path: Path) -> None:
    folder = build_inline(tmp_path, "functions", _functions())
    tool = {t.name: t for t in load_manifest(folder).tools}["PutFunctionConcurrency"]
    assert tool.backend == "action" and tool.action is not None and tool.action.kind == "set"
    client = EpisodeClient(folder)
    made = client.send("POST", "/functions", json={"FunctionName": "resize-images", "Runtime": "python3.12"})
    assert made.status_code == 200, made.text
    put = client.send(
        "PUT", "/functions/resize-images/concurrency", json={"ReservedConcurrentExecutions": 25}
    )
    assert put.status_code == 200, put.text
    got = client.send("GET", "/functions/resize-images").json()
    assert got["Concurrency"] == {"ReservedConcurrentExecutions": 25}
