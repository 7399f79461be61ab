"""$ref resolution: inlining, recursion cuts, allOf merging, dangling references, size bounds."""

from __future__ import annotations

import time
from typing import Any

import pytest

from compoworld.specs import SpecError
from compoworld.specs.refs import EXACT_CYCLE_LIMIT, Resolver, merge_all_of, ref_name
from compoworld.specs.shapes import find_wrapper, object_view, primary_type


def _doc(schemas: dict[str, Any]) -> dict[str, Any]:
    return {"components": {"schemas": schemas}}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_refs_are_inlined_and_shared_subtrees_reused() -> None:
    doc = _doc({"Pet": {"type": "object", "properties": {"tag": ref("Tag")}}, "Tag": {"type": "string"}})
    r = Resolver(doc, "d.json")
    pet = r.schema(ref("Pet"), ())
    assert pet == {"type": "object", "properties": {"tag": {"type": "string"}}}
    assert r.schema(ref("Pet"), ()) is pet


def test_self_recursion_is_cut_at_the_recursion_point() -> None:
    doc = _doc(
        {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": ref("Node")},
                },
            }
        }
    )
    node = Resolver(doc, "d.json").schema(ref("Node"), ())
    assert node["properties"]["name"] == {"type": "string"}
    assert node["properties"]["children"]["items"] == {"type": "object", "x-recursive": True}


def test_mutual_recursion_expands_each_schema_once_along_the_path() -> None:
    doc = _doc(
        {
            "Author": {"type": "object", "properties": {"books": {"type": "array", "items": ref("Book")}}},
            "Book": {"type": "object", "properties": {"author": ref("Author"), "title": {"type": "string"}}},
        }
    )
    r = Resolver(doc, "d.json")
    author = r.schema(ref("Author"), ())
    book = author["properties"]["books"]["items"]
    assert book["properties"]["title"] == {"type": "string"}
    assert book["properties"]["author"] == {"type": "object", "x-recursive": True}
    standalone = r.schema(ref("Book"), ())
    assert standalone["properties"]["author"]["properties"]["books"]["items"]["x-recursive"] is True


def test_a_large_tangle_of_schemas_resolves_quickly() -> None:
    n = EXACT_CYCLE_LIMIT * 5
    schemas = {
        f"S{i}": {"type": "object", "properties": {f"to{j}": ref(f"S{j}") for j in range(n) if j != i}}
        for i in range(n)
    }
    r = Resolver(_doc(schemas), "d.json")
    start = time.perf_counter()
    for i in range(n):
        resolved = r.schema(ref(f"S{i}"), ())
        assert all(v.get("x-recursive") for v in resolved["properties"].values())
    assert time.perf_counter() - start < 2.0


def test_deep_reference_chains_are_truncated_below_the_depth_limit() -> None:
    schemas = {f"L{i}": {"type": "object", "properties": {"next": ref(f"L{i + 1}")}} for i in range(10)}
    schemas["L10"] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    r = Resolver(_doc(schemas), "d.json", max_depth=3)
    node = r.schema(ref("L0"), ())
    for _ in range(3):
        node = node["properties"]["next"]
    assert node == {"type": "object", "x-truncated": True, "title": "L3"}


def test_a_truncated_alternative_of_scalars_keeps_their_type() -> None:
    """Pandascore's ``winner_id: OpponentID`` (``anyOf`` a player id, a team id, or null) cut at the
    depth limit is an integer that may be null, not an object: seed values must fit the real schema."""
    schemas = {
        "Top": {"type": "object", "properties": {"t": ref("Tournament")}},
        "Tournament": {"type": "object", "properties": {"winner_id": ref("OpponentID")}},
        "OpponentID": {"anyOf": [{"anyOf": [ref("PlayerID"), ref("TeamID")]}, {"type": "null"}]},
        "PlayerID": {"type": "integer", "minimum": 1},
        "TeamID": {"type": "integer", "minimum": 1},
        "Either": {"anyOf": [ref("PlayerID"), {"type": "string"}]},
        "Holder": {"type": "object", "properties": {"e": ref("Either")}},
    }
    r = Resolver(_doc(schemas), "d.json", max_depth=2)
    cut = r.schema(ref("Top"), ())["properties"]["t"]["properties"]["winner_id"]
    assert cut == {"type": "integer", "x-truncated": True, "nullable": True, "title": "OpponentID"}
    mixed = Resolver(_doc(schemas), "d.json", max_depth=1).schema(ref("Holder"), ())["properties"]["e"]
    assert mixed["type"] == "object" and mixed["x-truncated"] and "nullable" not in mixed  # no one type


def test_scalar_refs_are_inlined_even_below_the_depth_limit() -> None:
    schemas = {
        "A": {"type": "object", "properties": {"b": ref("B")}},
        "B": {"$ref": "#/components/schemas/C"},
    }
    schemas["C"] = {"type": "string", "enum": ["x"]}
    r = Resolver(_doc(schemas), "d.json", max_depth=1)
    assert r.schema(ref("A"), ())["properties"]["b"] == {"type": "string", "enum": ["x"]}


def test_schema_within_budget_inlines_less_deeply() -> None:
    wide = {f"p{i}": {"type": "string"} for i in range(50)}
    schemas = {"Big": {"type": "object", "properties": wide}}
    schemas["Top"] = {"type": "object", "properties": {f"b{i}": ref("Big") for i in range(20)}}
    r = Resolver(_doc(schemas), "d.json")
    small = r.schema_within(ref("Top"), (), budget=200)
    assert r.size(small) <= 200 or small["properties"]["b0"].get("x-truncated")
    assert r.max_depth == Resolver(_doc(schemas), "d.json").max_depth


def test_all_of_is_merged_into_one_object() -> None:
    doc = _doc(
        {
            "Base": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
            "Pet": {
                "description": "A pet",
                "allOf": [ref("Base"), {"required": ["name"], "properties": {"name": {"type": "string"}}}],
            },
        }
    )
    pet = Resolver(doc, "d.json").schema(ref("Pet"), ())
    assert "allOf" not in pet
    assert pet["type"] == "object"
    assert list(pet["properties"]) == ["id", "name"]
    assert pet["required"] == ["id", "name"]
    assert pet["description"] == "A pet"


def test_merge_all_of_lets_the_composing_schema_win() -> None:
    merged = merge_all_of({"nullable": True, "allOf": [{"type": "string", "nullable": False}]})
    assert merged == {"type": "string", "nullable": True}


def test_ref_siblings_override_the_target() -> None:
    doc = _doc({"Id": {"type": "string", "description": "an id"}})
    resolved = Resolver(doc, "d.json").schema({"$ref": "#/components/schemas/Id", "description": "owner"}, ())
    assert resolved == {"type": "string", "description": "owner"}


def test_dangling_ref_names_the_pointer_of_the_reference() -> None:
    doc = _doc({"Pet": {"type": "object", "properties": {"owner": ref("Owner")}}})
    with pytest.raises(SpecError) as err:
        Resolver(doc, "specs/pets.json").schema(ref("Pet"), ())
    assert err.value.file == "specs/pets.json"
    assert err.value.pointer == "/components/schemas/Pet/properties/owner"
    assert "#/components/schemas/Owner" in str(err.value)


def test_escaped_and_percent_encoded_pointers_resolve() -> None:
    doc = {
        "paths": {"/pets/{id}": {"get": {"x": 1}}},
        "components": {"schemas": {"a~b": {"type": "integer"}}},
    }
    r = Resolver(doc, "d.json")
    assert r.lookup("#/paths/~1pets~1%7Bid%7D/get", ())[0] == {"x": 1}
    assert r.schema({"$ref": "#/components/schemas/a~0b"}, ()) == {"type": "integer"}


def test_external_refs_are_left_with_a_warning() -> None:
    r = Resolver({}, "d.json")
    assert r.schema({"$ref": "other.json#/Pet"}, ("x",)) == {"x-unresolved-ref": "other.json#/Pet"}
    assert r.warnings and "other.json" in r.warnings[0]


def test_circular_ref_chain_between_objects_is_an_error() -> None:
    doc = {
        "components": {
            "parameters": {
                "a": {"$ref": "#/components/parameters/b"},
                "b": {"$ref": "#/components/parameters/a"},
            }
        }
    }
    with pytest.raises(SpecError, match="circular"):
        Resolver(doc, "d.json").deref({"$ref": "#/components/parameters/a"}, ("p",))


def test_ref_name_reads_component_names() -> None:
    assert ref_name("#/components/schemas/Pet") == "Pet"
    assert ref_name("#/definitions/Pet") == "Pet"
    assert ref_name("#/components/schemas/Pet/properties/x") is None
    assert ref_name("#/components/responses/Pet") is None


def test_object_view_merges_one_of_object_variants() -> None:
    schema = {
        "oneOf": [
            {
                "type": "object",
                "required": ["kind", "a"],
                "properties": {"kind": {"const": "a"}, "a": {"type": "string"}},
            },
            {
                "type": "object",
                "required": ["kind", "b"],
                "properties": {"kind": {"const": "b"}, "b": {"type": "integer"}},
            },
            {"type": "null"},
        ]
    }
    view = object_view(schema)
    assert view is not None
    assert list(view["properties"]) == ["kind", "a", "b"]
    assert view["properties"]["kind"] == {"enum": ["a", "b"]}
    assert view["required"] == ["kind"]
    assert object_view({"type": "string"}) is None
    assert object_view({"anyOf": [{"type": "string"}, {"type": "integer"}]}) is None


def test_primary_type_skips_null() -> None:
    assert primary_type({"type": ["null", "string"]}) == "string"
    assert primary_type({"anyOf": [{"type": "null"}, {"type": "integer"}]}) == "integer"
    assert primary_type({"properties": {}}) == "object"
    assert primary_type({"enum": ["a"]}) == "string"
    assert primary_type({}) is None


def test_wrappers_are_found_by_envelope_key() -> None:
    contact = {"type": "object", "properties": {"email": {"type": "string"}}}
    view = object_view({"type": "object", "properties": {"status": {"type": "string"}, "data": contact}})
    assert view is not None
    wrapper = find_wrapper(view)
    assert wrapper is not None and wrapper.key == "data" and not wrapper.is_list
    listing = object_view({"type": "object", "properties": {"results": {"type": "array", "items": contact}}})
    assert listing is not None
    found = find_wrapper(listing)
    assert found is not None and found.is_list
    entity = object_view(
        {"type": "object", "properties": {"data": {"type": "string"}, "email": {"type": "string"}}}
    )
    assert entity is not None and find_wrapper(entity) is None


def test_a_number_enum_spelled_as_text_is_read_as_its_numbers() -> None:
    """WhatsApp's ``{"type": "integer", "enum": ["6", "12"]}`` admits no value at all; read as the
    numbers it spells. Text that is no number, or an enum of a text type, stays as written."""
    doc = _doc(
        {
            "Hooks": {
                "type": "object",
                "properties": {
                    "max": {"type": "integer", "format": "int32", "enum": ["6", "12", "18"]},
                    "rate": {"type": "number", "enum": ["0.5", "1"]},
                    "code": {"type": "integer", "enum": ["A1", "2"]},
                    "name": {"type": "string", "enum": ["6", "12"]},
                    "size": {"type": ["integer", "null"], "enum": ["1", "2", None]},  # 3.1: a list of types
                },
            }
        }
    )
    props = Resolver(doc, "d.json").schema(ref("Hooks"), ())["properties"]
    assert props["max"]["enum"] == [6, 12, 18] and props["rate"]["enum"] == [0.5, 1.0]
    assert props["code"]["enum"] == ["A1", "2"] and props["name"]["enum"] == ["6", "12"]
    assert props["size"]["enum"] == ["1", "2", None]
