"""What a client sends that no caller chooses: AWS's request-signing headers and the parameters
that pick an operation (``X-Amz-Target: Widgets.CreateWidget``, the query protocol's
``Action=CreateWidget&Version=2020-01-01``).

The signing headers (``X-Amz-Date``, ``X-Amz-Credential``...) are credentials: no argument, no
column. A header or query parameter with one allowed value is sent with every request on the REST
route and described in the service's ``/openapi.json``, but it is no argument of the tool: an
agent never has to pass ``X_Amz_Target``. Built from inline documents (real synthesis and
verification), called over real HTTP (ASGI) with real SQLite state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.corpus import corpus_root
from compoworld.errors import LibraryError
from compoworld.manifest import load_manifest
from compoworld.runtime.wire import encode
from compoworld.specs import load_spec
from compoworld.synth.entities import infer_entities
from tests.inline_service import build_inline
from tests.service_http import EpisodeClient
from tests.spec_parts import amz_target_op

_SIGNING = [
    "X-Amz-Content-Sha256",
    "X-Amz-Date",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-SignedHeaders",
]
_WIDGET = {
    "type": "object",
    "properties": {"WidgetId": {"type": "string"}, "Name": {"type": "string"}, "Color": {"type": "string"}},
}


def _signing(name: str) -> dict[str, Any]:
    """An optional header AWS's documents declare on every operation (SigV4's)."""
    return {"name": name, "in": "header", "required": False, "schema": {"type": "string"}}


def _query(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": True, "schema": {"type": "string", "enum": [value]}}


def _answer(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _json_op(name: str, body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    return amz_target_op(f"Widgets.{name}", body, answer, [_signing(h) for h in _SIGNING])


def _json_protocol() -> dict[str, Any]:
    key = {"type": "object", "required": ["WidgetId"], "properties": {"WidgetId": {"type": "string"}}}
    create = {
        "type": "object",
        "required": ["Name"],
        "properties": {"Name": {"type": "string"}, "Color": {"type": "string"}},
    }
    wrapped = {"type": "object", "properties": {"Widget": _WIDGET}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Widgets", "version": "2020-01-01"},
        "paths": {
            **_json_op("CreateWidget", create, wrapped),
            **_json_op("DescribeWidget", key, wrapped),
            **_json_op("DeleteWidget", key, {"type": "object"}),
        },
    }


def _query_op(action: str, params: list[dict[str, Any]], answer: dict[str, Any]) -> dict[str, Any]:
    fixed = [_query("Action", action), _query("Version", "2020-01-01")]
    return {
        f"/#Action={action}": {
            "get": {
                "operationId": f"GET_{action}",
                "parameters": fixed + params + [_signing(h) for h in _SIGNING],
                "responses": _answer(answer),
            }
        }
    }


def _query_protocol() -> dict[str, Any]:
    def arg(name: str, required: bool = False) -> dict[str, Any]:
        return {"name": name, "in": "query", "required": required, "schema": {"type": "string"}}

    wrapped = {"type": "object", "properties": {"Widget": _WIDGET}}
    paths: dict[str, Any] = {}
    paths |= _query_op("CreateWidget", [arg("Name", True), arg("Color")], wrapped)
    paths |= _query_op("DescribeWidget", [arg("WidgetId", True)], wrapped)
    return {"openapi": "3.0.0", "info": {"title": "Gadgets", "version": "2020-01-01"}, "paths": paths}


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("fixed"), "widgets", _json_protocol())


@pytest.fixture(scope="module")
def gadgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("fixedq"), "gadgets", _query_protocol())


def test_signing_headers_and_the_operation_s_header_are_no_arguments(widgets: Path) -> None:
    tools = {t.name: t for t in load_manifest(widgets).tools}
    assert {n: t.backend for n, t in tools.items()} == dict.fromkeys(
        ["CreateWidget", "DescribeWidget", "DeleteWidget"], "implemented"
    )
    for name, tool in tools.items():
        args = set(tool.input_schema["properties"])
        assert not {a for a in args if a.lower().startswith("x_amz")}, (name, args)
        assert tool.fixed_headers == {"X-Amz-Target": f"Widgets.{name}"}
        assert not any(
            c.name.lower().startswith("x_amz") for e in load_manifest(widgets).entities for c in e.columns
        )
    request = encode(tools["DescribeWidget"], {"WidgetId": "w-1"})
    assert request.headers["X-Amz-Target"] == "Widgets.DescribeWidget"

    app = EpisodeClient(widgets)
    made = app.send("POST", "/tools/CreateWidget", json={"Name": "Sprocket"})  # no X_Amz_Target
    assert made.status_code == 200, made.text
    wid = made.json()["data"]["Widget"]["WidgetId"]
    got = app.send("POST", "/", headers={"X-Amz-Target": "Widgets.DescribeWidget"}, json={"WidgetId": wid})
    assert got.status_code == 200, got.text
    assert got.json()["Widget"]["Name"] == "Sprocket"
    described = app.send("GET", "/openapi.json").json()["paths"]["/#X-Amz-Target=Widgets.DescribeWidget"][
        "post"
    ]["parameters"]
    assert {"name": "X-Amz-Target", "in": "header", "required": True} in [
        {k: p[k] for k in ("name", "in", "required")} for p in described
    ]


def test_the_query_protocol_s_action_and_version_travel_but_are_not_asked_for(gadgets: Path) -> None:
    tools = {t.name: t for t in load_manifest(gadgets).tools}
    create = tools["GET_CreateWidget"]
    assert set(create.input_schema["properties"]) == {"Name", "Color"}
    assert create.fixed_query == {"Action": "CreateWidget", "Version": "2020-01-01"}
    assert encode(create, {"Name": "x"}).url.endswith("Action=CreateWidget&Version=2020-01-01")

    app = EpisodeClient(gadgets)
    made = app.send("GET", "/", params={"Action": "CreateWidget", "Version": "2020-01-01", "Name": "Gear"})
    assert made.status_code == 200, made.text
    wid = made.json()["Widget"]["WidgetId"]
    got = app.send("GET", "/", params={"Action": "DescribeWidget", "Version": "2020-01-01", "WidgetId": wid})
    assert got.status_code == 200, got.text
    assert got.json()["Widget"]["Name"] == "Gear"
    assert app.send("POST", "/tools/GET_DescribeWidget", json={"WidgetId": wid}).json()["success"] is True
    unknown = app.send(
        "POST", "/tools/GET_DescribeWidget", json={"WidgetId": wid, "Action": "DescribeWidget"}
    )
    assert unknown.json()["success"] is False  # an argument the tool does not take is refused, by name
    assert "Action" in unknown.json()["error"]["message"]


def test_an_aws_query_protocol_document_of_the_corpus() -> None:
    """IAM (``/#Action=CreateUser``, GET and POST variants): no tool asks for ``Action``,
    ``Version`` or a signing header, every tool sends its own ``Action``, and ``GET_CreateUser``
    is read as the user's create, never as a read of a ``create_user``."""
    try:
        spec = load_spec(corpus_root() / "amazonaws.com" / "iam.json")
    except LibraryError as exc:
        pytest.skip(str(exc))
    inference = infer_entities(spec)
    for tool in spec.tools:
        args = {p.name.lower() for p in tool.params}
        assert not {"action", "version"} & args and not any(a.startswith("x_amz") for a in args), tool.name
        assert tool.fixed_query["Action"] == (tool.path or "").split("#Action=")[1], tool.name
    assert "create_user" not in {e.name for e in inference.entities}
    assert inference.targets["GET_CreateUser"].entity == "user"


def test_a_fixed_parameter_sent_with_another_value_is_refused(gadgets: Path) -> None:
    app = EpisodeClient(gadgets)
    made = app.send("GET", "/", params={"Action": "CreateWidget", "Version": "1999-01-01", "Name": "Gear"})
    assert made.status_code == 422, made.text  # invalid arguments, as the service answers them
    assert "Version" in made.text and "2020-01-01" in made.text
    left_out = app.send("GET", "/", params={"Action": "CreateWidget", "Name": "Gear"})
    assert left_out.status_code == 200, left_out.text  # the route found it; the client's default
    described = app.send("GET", "/openapi.json").json()["paths"]["/#Action=CreateWidget"]["get"]
    required = {p["name"]: p["required"] for p in described["parameters"]}
    assert required["Action"] is True and required["Version"] is False
