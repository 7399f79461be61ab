"""Operations that share a path, told apart by what their path's fragment names (AWS's documents).

AWS's JSON protocol serves every operation at ``POST /`` and picks one by the ``X-Amz-Target``
header; the corpus writes that as ``/#X-Amz-Target=Widgets.CreateWidget``. Its REST protocols
write required query parameters into the fragment (``/v1/widget#name``). A client never sends the
fragment: the request carries the header or the parameter. Built from inline documents (real
synthesis and verification), called over real HTTP (ASGI) with real SQLite state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.manifest import load_manifest
from compoworld.runtime.query_routes import query_template
from tests.inline_service import build_inline
from tests.service_http import EpisodeClient
from tests.spec_parts import amz_target_op, ok

_WIDGET = {
    "type": "object",
    "properties": {"WidgetId": {"type": "string"}, "Name": {"type": "string"}, "Color": {"type": "string"}},
}


def _json_protocol() -> dict[str, Any]:
    key = {"type": "object", "required": ["WidgetId"], "properties": {"WidgetId": {"type": "string"}}}
    create = {
        "type": "object",
        "required": ["Name"],
        "properties": {"Name": {"type": "string"}, "Color": {"type": "string"}},
    }
    wrapped = {"type": "object", "properties": {"Widget": _WIDGET}}
    paging = {
        "type": "object",
        "properties": {"MaxResults": {"type": "integer"}, "NextToken": {"type": "string"}},
    }
    listed = {
        "type": "object",
        "properties": {"Widgets": {"type": "array", "items": _WIDGET}, "NextToken": {"type": "string"}},
    }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Widgets", "version": "2020-01-01"},
        "paths": {
            **amz_target_op("Widgets.CreateWidget", create, wrapped),
            **amz_target_op("Widgets.DescribeWidget", key, wrapped),
            **amz_target_op("Widgets.ListWidgets", paging, listed),
            **amz_target_op("Widgets.DeleteWidget", key, {"type": "object"}),
        },
    }


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("fragments"), "widgets", _json_protocol())


def test_the_target_header_picks_the_operation_and_the_checks_pass(widgets: Path) -> None:
    backends = {t.name: t.backend for t in load_manifest(widgets).tools}
    # each verified over both routes: before, every request went to the first operation at POST /
    names = ["CreateWidget", "DescribeWidget", "ListWidgets", "DeleteWidget"]
    assert backends == dict.fromkeys(names, "implemented")
    client = EpisodeClient(widgets)
    made = client.amz("Widgets.CreateWidget", {"Name": "Sprocket", "Color": "red"})
    assert made.status_code == 200, made.text
    wid = made.json()["Widget"]["WidgetId"]
    listed = client.amz("Widgets.ListWidgets", {})
    assert wid in [w["WidgetId"] for w in listed.json()["Widgets"]]
    assert client.amz("Widgets.DescribeWidget", {"WidgetId": wid}).json()["Widget"]["Name"] == "Sprocket"
    assert client.amz("Widgets.DeleteWidget", {"WidgetId": wid}).status_code == 200
    assert client.amz("Widgets.DescribeWidget", {"WidgetId": wid}).status_code == 404


def test_a_request_without_the_target_is_refused_naming_it(widgets: Path) -> None:
    missing = EpisodeClient(widgets).amz("", {"Name": "x"})
    assert missing.status_code == 400
    message = missing.json()["error"]["message"]
    assert "header X-Amz-Target=Widgets.CreateWidget" in message and "Widgets.DeleteWidget" in message


def test_a_fragment_names_query_parameters_a_request_must_carry() -> None:
    params = {"name": "query", "domain-owner": "query", "X-Amz-Target": "header"}
    template = query_template("/v1/widget#name&domain-owner", params=params)
    assert template.route == "/v1/widget" and template.specificity == 2
    assert template.fits({"name": "a", "domain-owner": "b"}) and not template.fits({"name": "a"})
    labelled = query_template("/analyze#overload=stream", params=params)  # a word no parameter has
    assert labelled.marks == () and labelled.fits({})
    header = query_template("/#X-Amz-Target=Widgets.CreateWidget", params=params)
    assert header.fits({}, {"X-Amz-Target": "Widgets.CreateWidget"})
    assert not header.fits({}, {"X-Amz-Target": "Widgets.DeleteWidget"}) and not header.fits({})


def test_the_more_literal_route_is_matched_first(tmp_path: Path) -> None:
    """``/v1/{name}:getIamPolicy`` declared after ``/v1/{name}`` (Google's documents) is still
    reached: a request for ``/v1/t1:getIamPolicy`` is not a read of the thing ``t1:getIamPolicy``."""
    thing = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    policy = {
        "type": "object",
        "required": ["etag", "bindings"],
        "properties": {
            "etag": {"type": "string"},
            "bindings": {"type": "array", "items": {"type": "string"}},
        },
    }
    name = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Things", "version": "1"},
        "paths": {
            "/v1/{name}": {"get": {"operationId": "things.get", "parameters": name, "responses": ok(thing)}},
            "/v1/{name}:getIamPolicy": {
                "get": {"operationId": "things.getIamPolicy", "parameters": name, "responses": ok(policy)}
            },
        },
    }
    client = EpisodeClient(build_inline(tmp_path, "things", doc, verify=False))
    answer = client.send("GET", "/v1/t1:getIamPolicy")
    assert answer.status_code == 200, answer.text
    assert set(answer.json()) >= {"etag", "bindings"}
