"""Bad input gives a SpecError naming the file and JSON pointer, never a bare KeyError or TypeError."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compoworld.specs import ServiceSpec, SpecError, ingest_document, load_spec, read_document

FIXTURES = Path(__file__).parent / "fixtures" / "specs"


def openapi(paths: Any, **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths, **extra}


OK_RESPONSES = {"200": {"description": "ok"}}

MALFORMED_TEXT: list[tuple[str, bytes, str]] = [
    ("truncated_json", b'{"openapi": "3.0.0", "paths": {', "malformed JSON at line 1"),
    ("bad_yaml", b"openapi: 3.0.0\npaths: [unclosed\n", "malformed YAML at line"),
    ("empty", b"  \n", "empty document"),
    ("not_utf8", b"\xff\xfe\x00garbage\xff", "not UTF-8"),
    ("scalar", b"42", "unrecognised document"),
    ("unknown_object", b'{"hello": "world"}', "unrecognised document"),
]

MALFORMED_DOCS: list[tuple[str, Any, str, str]] = [
    (
        "dangling_ref",
        openapi(
            {
                "/pets": {
                    "get": {
                        "parameters": [
                            {"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Nope"}}
                        ],
                        "responses": OK_RESPONSES,
                    }
                }
            }
        ),
        "/paths/~1pets/get/parameters/0/schema",
        "dangling $ref '#/components/schemas/Nope'",
    ),
    ("no_operations", openapi({}), "/paths", "no operations"),
    ("paths_not_object", openapi(["/pets"]), "/paths", "'paths' must be an object"),
    (
        "operation_not_object",
        openapi({"/pets": {"get": "list pets"}}),
        "/paths/~1pets/get",
        "operation must be an object",
    ),
    (
        "parameters_not_list",
        openapi({"/pets": {"get": {"parameters": {"name": "q"}, "responses": OK_RESPONSES}}}),
        "/paths/~1pets/get/parameters",
        "parameters must be a list",
    ),
    (
        "parameter_without_name",
        openapi({"/pets": {"get": {"parameters": [{"in": "query"}], "responses": OK_RESPONSES}}}),
        "/paths/~1pets/get/parameters/0",
        "string 'name' and 'in'",
    ),
    (
        "empty_parameter_name",
        openapi({"/pets": {"get": {"parameters": [{"name": "", "in": "query"}], "responses": OK_RESPONSES}}}),
        "/paths/~1pets/get/parameters/0",
        "cannot be sanitised",
    ),
    (
        "unsanitisable_operation_id",
        openapi({"/pets": {"get": {"operationId": "???", "responses": OK_RESPONSES}}}),
        "/paths/~1pets/get",
        "operationId '???' cannot be sanitised",
    ),
    (
        "request_body_not_object",
        openapi({"/pets": {"post": {"requestBody": [1], "responses": OK_RESPONSES}}}),
        "/paths/~1pets/post/requestBody",
        "requestBody must be an object",
    ),
    (
        "circular_parameter_refs",
        openapi(
            {
                "/pets": {
                    "get": {"parameters": [{"$ref": "#/components/parameters/a"}], "responses": OK_RESPONSES}
                }
            },
            components={
                "parameters": {
                    "a": {"$ref": "#/components/parameters/b"},
                    "b": {"$ref": "#/components/parameters/a"},
                }
            },
        ),
        "/components/parameters/b",
        "circular $ref",
    ),
    (
        "swagger_dangling_parameter",
        {
            "swagger": "2.0",
            "paths": {"/pets": {"get": {"parameters": [{"$ref": "#/parameters/nope"}], "responses": {}}}},
        },
        "/paths/~1pets/get/parameters/0",
        "dangling $ref '#/parameters/nope'",
    ),
    (
        "mcp_tool_without_name",
        {"tools": [{"description": "x", "inputSchema": {}}]},
        "/tools/0",
        "non-empty string 'name'",
    ),
    ("mcp_tool_not_object", {"tools": ["create_note"]}, "/tools/0", "a tool must be an object"),
    (
        "mcp_schema_not_object",
        {"tools": [{"name": "x", "inputSchema": "text"}]},
        "/tools/0/inputSchema",
        "input schema must be an object",
    ),
    ("mcp_no_tools", {"tools": []}, "/tools", "no tools"),
    (
        "function_not_object",
        [{"type": "function", "function": "create_event"}],
        "/0/function",
        "must be an object",
    ),
    (
        "function_dangling_ref",
        [{"name": "f", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}],
        "/0/parameters/properties/a",
        "dangling $ref '#/$defs/A'",
    ),
]


@pytest.mark.parametrize(("case", "content", "message"), MALFORMED_TEXT, ids=[c[0] for c in MALFORMED_TEXT])
def test_unreadable_files_are_spec_errors(tmp_path: Path, case: str, content: bytes, message: str) -> None:
    path = tmp_path / f"{case}.json"
    path.write_bytes(content)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.file == str(path)
    assert err.value.pointer == ""
    assert message in err.value.message
    assert str(err.value).startswith(f"{path}#: ")


@pytest.mark.parametrize(
    ("case", "doc", "pointer", "message"), MALFORMED_DOCS, ids=[c[0] for c in MALFORMED_DOCS]
)
def test_malformed_documents_are_spec_errors_with_pointers(
    tmp_path: Path, case: str, doc: Any, pointer: str, message: str
) -> None:
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.file == str(path)
    assert err.value.pointer == pointer
    assert message in err.value.message


def test_a_duplicate_operation_id_leaves_that_operation_out_naming_both_places() -> None:
    doc = openapi(
        {
            "/dogs": {"get": {"operationId": "listPets", "responses": OK_RESPONSES}},
            "/pets": {"get": {"operationId": "listPets", "responses": OK_RESPONSES}},
        }
    )
    spec = ingest_document(doc, "specs/bad.json")
    assert [t.path for t in spec.tools] == ["/dogs"]
    assert spec.defects == [
        "specs/bad.json#/paths/~1pets/get: duplicate operationId 'listPets' (also at #/paths/~1dogs/get)"
    ]


def test_one_defective_operation_does_not_drop_the_document() -> None:
    """notion.com's one header parameter named '' used to lose all of its operations."""
    doc = openapi(
        {
            "/pages/{id}": {
                "get": {
                    "operationId": "getPage",
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                        {"name": "", "in": "header", "schema": {"type": "string"}},
                    ],
                    "responses": OK_RESPONSES,
                }
            },
            "/pages": {"get": {"operationId": "listPages", "responses": OK_RESPONSES}},
            "/users": {
                "get": {"operationId": "listUsers", "parameters": [{"$ref": "#/nope"}], "responses": {}}
            },
        }
    )
    spec = ingest_document(doc, "notion.json")
    assert [t.name for t in spec.tools] == ["listPages"]
    assert len(spec.defects) == 2
    assert spec.defects[0].startswith("notion.json#/paths/~1pages~1{id}/get/parameters/1: parameter name ''")
    assert spec.defects[1].startswith("notion.json#/paths/~1users/get/parameters/0: dangling $ref")


def test_a_defective_tool_is_left_out_of_an_mcp_listing() -> None:
    doc = {
        "tools": [
            {"name": "x", "inputSchema": {}},
            "not a tool",
            {"name": "x", "inputSchema": {}},
            {"name": "y", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}},
        ]
    }
    spec = ingest_document(doc, "tools.json")
    assert [t.name for t in spec.tools] == ["x"]
    assert [d.split(": ", 1)[0] for d in spec.defects] == [
        "tools.json#/tools/1",
        "tools.json#/tools/2",
        "tools.json#/tools/3/inputSchema/properties/a",
    ]
    assert "duplicate tool name 'x' (also at #/tools/0)" in spec.defects[1]


def test_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read file"):
        load_spec(tmp_path / "nope.json")


def test_unknown_kind_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="unknown source kind 'graphql'"):
        ingest_document(openapi({}), "x.json", kind="graphql")


def test_recursive_yaml_aliases_are_a_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("openapi: 3.0.0\npaths: &a\n  /x: *a\n")
    with pytest.raises(SpecError):
        load_spec(path)


def test_tolerated_oddities_are_not_errors() -> None:
    doc = openapi(
        {
            "x-vendor": {"anything": True},
            "/pets/{petId}/toys/{toyId}": {
                "get": {
                    "parameters": [
                        {"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}},
                        {"name": "ghost", "in": "path", "required": True},
                        {"name": "session", "in": "cookie"},
                        {"name": "Authorization", "in": "header"},
                    ],
                    "responses": {
                        200: {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"type": "string"}}},
                        }
                    },
                }
            },
        }
    )
    spec = ingest_document(doc, "odd.json")
    toy = spec.tools[0]
    assert [(p.name, p.location, p.semantic) for p in toy.params] == [
        ("petId", "path", "id:pet"),
        ("toyId", "path", "id:toy"),
    ]
    assert toy.output_schema == {"type": "string"}
    assert toy.response_fields == []
    assert len(spec.warnings) == 2
    assert any("'ghost'" in w for w in spec.warnings) and any(
        "'toyId' undeclared" in w for w in spec.warnings
    )


def test_explicitly_optional_body_makes_its_fields_optional() -> None:
    body = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    doc = openapi(
        {
            "/x": {
                "post": {
                    "requestBody": {"required": False, "content": {"application/json": {"schema": body}}},
                    "responses": OK_RESPONSES,
                },
                "put": {
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": OK_RESPONSES,
                },
            }
        }
    )
    post, put = ingest_document(doc, "x.json").tools
    assert post.params[0].required is False
    assert put.params[0].required is True


# --- fuzzing: corrupt valid fixtures anywhere and expect only ServiceSpec or SpecError ------------

JUNK: list[Any] = [
    None,
    0,
    -1,
    3.5,
    True,
    "",
    "x",
    [],
    [1, "a"],
    {},
    {"$ref": "#/nope"},
    {"$ref": 7},
    {"type": 5},
]
FIXTURE_DOCS = {
    name: read_document(FIXTURES / name)
    for name in (
        "petstore.json",
        "petstore_swagger.yaml",
        "bookshop_openapi31.json",
        "notes_mcp.json",
        "calendar_functions.json",
    )
}


def _locations(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_locations(v, (*here, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_locations(v, (*here, i)))
    return out


LOCATIONS = {name: _locations(doc)[1:] for name, doc in FIXTURE_DOCS.items()}


def _corrupt(doc: Any, location: tuple[Any, ...], junk: Any) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for key in location[:-1]:
        node = node[key]
    node[location[-1]] = copy.deepcopy(junk)
    return doc


@settings(max_examples=250, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_corrupted_documents_never_raise_anything_but_spec_error(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(FIXTURE_DOCS)))
    doc = FIXTURE_DOCS[name]
    for _ in range(data.draw(st.integers(1, 3))):
        location = data.draw(st.sampled_from(_locations(doc)[1:] or [()]))
        if not location:
            break
        doc = _corrupt(doc, location, data.draw(st.sampled_from(JUNK)))
    try:
        spec = ingest_document(doc, name)
    except SpecError as err:
        assert err.file == name
        assert isinstance(err.pointer, str)
    else:
        assert isinstance(spec, ServiceSpec)
        ServiceSpec.model_validate_json(spec.model_dump_json(by_alias=True))
