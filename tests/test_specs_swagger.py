"""Swagger 2.0 ingestion (YAML), and detection by content rather than file extension."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from compoworld.specs import ServiceSpec, ToolSpec, detect_kind, load_spec, read_document

FIXTURES = Path(__file__).parent / "fixtures" / "specs"
SWAGGER = FIXTURES / "petstore_swagger.yaml"


@pytest.fixture(scope="module")
def spec() -> ServiceSpec:
    return load_spec(SWAGGER)


def tool(spec: ServiceSpec, name: str) -> ToolSpec:
    return next(t for t in spec.tools if t.name == name)


def test_swagger_service_metadata(spec: ServiceSpec) -> None:
    assert spec.source_kind == "swagger2"
    assert spec.name == "petstore"
    assert set(spec.schemas) == {"Category", "Pet", "Owner", "Order", "ApiResponse"}
    assert spec.tools[-1].name == "get_owner_ownerId_orders"


def test_yaml_dates_and_integer_keys_become_json_strings() -> None:
    doc = read_document(SWAGGER)
    assert doc["definitions"]["Pet"]["properties"]["born"]["example"] == "2020-03-01"
    assert "200" in doc["paths"]["/pet"]["get"]["responses"]


def test_body_parameter_becomes_flattened_body(spec: ServiceSpec) -> None:
    add = tool(spec, "addPet")
    assert [(p.name, p.location, p.required) for p in add.params] == [
        ("category", "body", False),
        ("name", "body", True),
        ("status", "body", False),
        ("price", "body", False),
        ("born", "body", False),
    ]
    assert add.body_entity == "Pet" and add.response_entity == "Pet"
    assert add.params[0].json_schema["properties"]["id"]["format"] == "int64"


def test_body_without_required_flag_honours_the_schema_required_list(spec: ServiceSpec) -> None:
    create = tool(spec, "createOwner")
    assert {p.name: p.required for p in create.params} == {
        "firstName": False,
        "lastName": False,
        "email": True,
        "phone": False,
    }
    assert create.params[0].semantic == "first_name"


def test_form_data_becomes_a_form_body(spec: ServiceSpec) -> None:
    form = tool(spec, "updatePetWithForm")
    assert [(p.name, p.location, p.required) for p in form.params] == [
        ("petId", "path", True),
        ("name", "body", False),
        ("status", "body", True),
    ]
    upload = tool(spec, "uploadFile")
    file_param = next(p for p in upload.params if p.name == "file")
    assert file_param.json_schema == {"type": "string", "format": "binary"}
    assert upload.response_entity == "ApiResponse"


def test_query_parameter_types_become_schemas(spec: ServiceSpec) -> None:
    find = tool(spec, "findPets")
    status, limit = find.params
    assert status.json_schema == {
        "type": "array",
        "items": {"type": "string", "enum": ["available", "pending", "sold"]},
    }
    assert limit.json_schema == {"type": "integer", "maximum": 50}
    assert find.response_entity == "Pet"
    assert {f.name for f in find.response_fields} == {"id", "category", "name", "status", "price", "born"}


def test_path_level_parameters_and_api_key_headers(spec: ServiceSpec) -> None:
    delete = tool(spec, "deletePet")
    assert [p.name for p in delete.params] == ["petId"]
    assert delete.params[0].json_schema == {"type": "integer", "format": "int64"}
    assert delete.pointer == "/paths/~1pet~1{petId}/delete"


def test_kind_is_detected_from_content_not_extension(tmp_path: Path) -> None:
    as_json_name = tmp_path / "swagger_really.json"
    shutil.copy(SWAGGER, as_json_name)
    assert load_spec(as_json_name).source_kind == "swagger2"
    openapi_as_yaml = tmp_path / "petstore.yaml"
    openapi_as_yaml.write_text(json.dumps(json.loads((FIXTURES / "petstore.json").read_text())))
    assert load_spec(openapi_as_yaml).source_kind == "openapi3"
    openapi_in_yaml = tmp_path / "petstore.txt"
    openapi_in_yaml.write_text(
        yaml.safe_dump(json.loads((FIXTURES / "petstore.json").read_text()), sort_keys=False)
    )
    assert load_spec(openapi_in_yaml) == load_spec(FIXTURES / "petstore.json").model_copy(
        update={"source_file": str(openapi_in_yaml)}
    )


def test_detect_kind() -> None:
    assert detect_kind({"swagger": "2.0", "paths": {}}) == "swagger2"
    assert detect_kind({"openapi": "3.1.0"}) == "openapi3"
    assert detect_kind({"tools": []}) == "mcp"
    assert detect_kind([{"name": "x", "inputSchema": {}}]) == "mcp"
    assert detect_kind([{"type": "function", "function": {"name": "x"}}]) == "functions"
    assert detect_kind({"functions": [{"name": "x", "parameters": {}}]}) == "functions"
    assert detect_kind({"tools": [{"type": "function", "function": {"name": "x"}}]}) == "functions"
