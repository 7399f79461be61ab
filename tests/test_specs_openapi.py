"""OpenAPI 3.0/3.1 ingestion: flattening, names, responses, entities, on the petstore and bookshop fixtures."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from compoworld.specs import ServiceSpec, ToolSpec, load_spec

FIXTURES = Path(__file__).parent / "fixtures" / "specs"


@pytest.fixture(scope="module")
def petstore() -> ServiceSpec:
    return load_spec(FIXTURES / "petstore.json")


@pytest.fixture(scope="module")
def bookshop() -> ServiceSpec:
    return load_spec(FIXTURES / "bookshop_openapi31.json")


def tool(spec: ServiceSpec, name: str) -> ToolSpec:
    return next(t for t in spec.tools if t.name == name)


def params(t: ToolSpec) -> dict[str, tuple[str, bool]]:
    return {p.name: (p.location, p.required) for p in t.params}


def test_service_metadata(petstore: ServiceSpec) -> None:
    assert petstore.name == "petstore"
    assert petstore.source_kind == "openapi3"
    assert petstore.title == "Petstore" and petstore.version == "1.2.0"
    assert petstore.source_file.endswith("petstore.json")
    assert petstore.warnings == []


def test_tools_keep_source_order_and_operation_ids(petstore: ServiceSpec) -> None:
    assert [t.name for t in petstore.tools] == [
        "listPets",
        "createPet",
        "showPetById",
        "updatePet",
        "delete_pets_petId",
        "replacePetTags",
        "uploadPetPhoto",
        "listOwners",
        "createOwner",
        "getOwner",
        "replaceOwner",
        "listOwnerPets",
        "placeOrder",
        "getOrder",
        "getCategory",
    ]
    delete = tool(petstore, "delete_pets_petId")
    assert (delete.method, delete.path, delete.original_name) == ("DELETE", "/pets/{petId}", None)
    assert delete.pointer == "/paths/~1pets~1{petId}/delete"
    assert tool(petstore, "listOwnerPets").tags == ["owners", "pets"]


def test_query_params_and_headers_but_not_credentials(petstore: ServiceSpec) -> None:
    list_pets = tool(petstore, "listPets")
    assert params(list_pets) == {
        "limit": ("query", False),
        "status": ("query", False),
        "X_Request_Id": ("header", False),
    }
    header = list_pets.params[2]
    assert header.original_name == "X-Request-Id"
    assert list_pets.params[1].json_schema["enum"] == ["available", "pending", "sold"]
    assert all(p.original_name != "X-Shop-Key" for t in petstore.tools for p in t.params)


def test_path_level_params_merge_and_the_operation_wins(petstore: ServiceSpec) -> None:
    show = tool(petstore, "showPetById")
    assert params(show) == {"petId": ("path", True)}
    assert show.params[0].json_schema["type"] == "integer"
    assert show.params[0].semantic == "id:pet"
    update = tool(petstore, "updatePet")
    assert update.params[0].json_schema == {"type": "string"}
    assert update.params[0].description == "Id of the pet to change"


def test_object_body_properties_become_params(petstore: ServiceSpec) -> None:
    create = tool(petstore, "createPet")
    assert params(create) == {
        "name": ("body", True),
        "tag": ("body", False),
        "status": ("body", False),
        "price": ("body", False),
        "currency": ("body", False),
        "birth_date": ("body", False),
        "category_id": ("body", False),
        "owner_id": ("body", False),
    }
    assert create.body_is_object is True
    assert create.body_entity == "NewPet"
    assert create.response_entity == "Pet"
    semantics = {p.name: p.semantic for p in create.params}
    assert semantics["price"] == "money"
    assert semantics["birth_date"] == "date"
    assert semantics["owner_id"] == "id:owner"


def test_body_param_clashing_with_a_query_param_is_prefixed(petstore: ServiceSpec) -> None:
    update = tool(petstore, "updatePet")
    assert params(update) == {
        "petId": ("path", True),
        "status": ("query", False),
        "name": ("body", False),
        "body_status": ("body", False),
        "price": ("body", False),
    }
    body_status = update.params[3]
    assert body_status.original_name == "status"
    assert update.input_schema["properties"]["body_status"]["enum"] == ["available", "pending", "sold"]


def test_read_only_properties_are_not_inputs(petstore: ServiceSpec) -> None:
    order = tool(petstore, "placeOrder")
    assert "id" not in params(order)
    assert params(order)["Idempotency_Key"] == ("header", False)


def test_non_object_body_is_one_body_param(petstore: ServiceSpec) -> None:
    tags = tool(petstore, "replacePetTags")
    assert tags.body_is_object is False
    assert params(tags) == {"petId": ("path", True), "body": ("body", True)}
    assert tags.params[1].json_schema == {"type": "array", "items": {"type": "string"}}
    assert tags.params[1].semantic is None


def test_form_bodies_are_flattened(petstore: ServiceSpec) -> None:
    upload = tool(petstore, "uploadPetPhoto")
    assert params(upload) == {"petId": ("path", True), "file": ("body", True), "caption": ("body", False)}
    replace = tool(petstore, "replaceOwner")
    assert params(replace)["email"] == ("body", True)
    assert replace.body_entity == "OwnerInput"


def test_invalid_identifiers_are_sanitised_with_original_kept(petstore: ServiceSpec) -> None:
    owners = tool(petstore, "listOwners")
    by_name = {p.name: p.original_name for p in owners.params}
    assert by_name == {"limit": None, "first_name": "first-name", "filter": "$filter", "class_": "class"}


def test_input_schema_is_a_closed_object_over_flattened_params(petstore: ServiceSpec) -> None:
    create = tool(petstore, "createOwner")
    schema = create.input_schema
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["first_name", "last_name", "email"]
    assert list(schema["properties"]) == [p.name for p in create.params]
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"})
    assert not validator.is_valid({"first_name": "Ada"})
    assert not validator.is_valid({"first_name": "A", "last_name": "L", "email": "e", "extra": 1})
    assert (
        tool(petstore, "listPets").input_schema["properties"]["limit"]["description"].startswith("How many")
    )


def test_output_schema_is_the_first_2xx_json_response(petstore: ServiceSpec) -> None:
    create = tool(petstore, "createPet")
    assert create.output_schema is not None
    assert create.output_schema["type"] == "object"
    assert {"id", "name", "created_at"} <= set(create.output_schema["properties"])
    assert tool(petstore, "delete_pets_petId").output_schema is None
    assert tool(petstore, "delete_pets_petId").response_fields == []


def test_response_wrapper_fields_get_dotted_names(petstore: ServiceSpec) -> None:
    get_owner = tool(petstore, "getOwner")
    fields = {f.name: f.semantic for f in get_owner.response_fields}
    assert [f.name for f in get_owner.response_fields][:3] == ["status_code", "status", "data"]
    assert fields["data.email"] == "email"
    assert fields["data.id"] == "id:owner"
    assert fields["data.first_name"] == "first_name"
    assert fields["data.balance"] == "money"
    assert get_owner.response_entity == "Owner"


def test_list_responses_name_their_item_entity(petstore: ServiceSpec) -> None:
    list_pets = tool(petstore, "listPets")
    assert list_pets.response_entity == "Pet"
    fields = {f.name: f.semantic for f in list_pets.response_fields}
    assert fields["data.id"] == "id:pet"
    assert "next_cursor" in fields
    owners = tool(petstore, "listOwners")
    assert owners.response_entity == "Owner"
    assert {f.name for f in owners.response_fields} >= {"id", "email", "first_name"}


def test_recursive_schemas_are_cut(petstore: ServiceSpec) -> None:
    category = tool(petstore, "getCategory")
    assert category.output_schema is not None
    props = category.output_schema["properties"]
    assert props["parent"] == {"type": "object", "x-recursive": True}
    assert props["children"]["items"] == {"type": "object", "x-recursive": True}
    assert category.params[0].semantic == "id:category"


def test_named_object_schemas_are_kept_resolved(petstore: ServiceSpec) -> None:
    assert "PetStatus" not in petstore.schemas
    pet = petstore.schemas["Pet"]
    assert "allOf" not in pet
    assert pet["properties"]["status"]["enum"] == ["available", "pending", "sold"]
    assert pet["required"] == ["name", "id"]


def test_spec_round_trips_through_json(petstore: ServiceSpec) -> None:
    again = ServiceSpec.model_validate_json(petstore.model_dump_json(by_alias=True))
    assert again == petstore


def test_openapi_31_features(bookshop: ServiceSpec) -> None:
    assert bookshop.name == "bookshop"
    listing = tool(bookshop, "books_list")
    assert listing.original_name == "books.list"
    assert params(listing)["page_size"] == ("query", False)
    assert listing.params[2].original_name == "page[size]"
    fields = {f.name: f.semantic for f in listing.response_fields}
    assert fields["result.id"] == "id:book"
    assert fields["result.published_on"] == "date"
    assert fields["total"] is None
    create = tool(bookshop, "books_create")
    by_name = {p.name: p for p in create.params}
    assert by_name["isbn"].json_schema == {"type": ["string", "null"]}
    assert by_name["language"].semantic == "language"
    assert by_name["currency"].json_schema["const"] == "EUR"
    assert by_name["price"].semantic == "money"


def test_path_items_behind_refs_are_ingested(bookshop: ServiceSpec) -> None:
    get = tool(bookshop, "books_get")
    assert (get.method, get.path) == ("GET", "/books/{bookId}")
    assert params(get) == {"bookId": ("path", True)}
    assert get.pointer == "/components/pathItems/BookItem/get"
    author = get.output_schema["properties"]["author"] if get.output_schema else {}
    assert author["description"] == "The author, expanded"
    assert author["properties"]["books"]["items"]["x-recursive"] is True


def test_one_of_bodies_are_merged_for_flattening(bookshop: ServiceSpec) -> None:
    review = tool(bookshop, "reviews_create")
    assert params(review) == {
        "bookId": ("path", True),
        "kind": ("body", True),
        "body": ("body", False),
        "reviewer_email": ("body", False),
        "stars": ("body", False),
    }
    assert review.params[1].json_schema["enum"] == ["text", "stars"]
    assert review.response_entity == "Review"


def test_webhooks_are_not_tools(bookshop: ServiceSpec) -> None:
    assert all(t.path and t.path.startswith(("/books", "/authors")) for t in bookshop.tools)
    assert len(bookshop.tools) == 6
