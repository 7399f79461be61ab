"""Tool classification and binding: REST shapes, tool names, and when a tool falls back to simulated."""

from __future__ import annotations

from typing import Any

import pytest

from compoworld.manifest import ServiceManifest, ToolDef
from compoworld.specs import ingest_document
from compoworld.synth.paths import parse_path
from compoworld.synth.pipeline import synthesize
from compoworld.synth.toolnames import parse_tool_name

PET: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "name": {"type": "string"},
        "status": {"type": "string", "enum": ["available", "pending", "sold"]},
        "ownerId": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "created_at": {"type": "string", "format": "date-time", "readOnly": True},
    },
}
OWNER: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "email": {"type": "string"}},
}
VISIT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "note": {"type": "string"},
    },
}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", **_json(schema)}}


def _param(
    name: str, where: str = "path", kind: str = "integer", required: bool | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path" if required is None else required,
        "schema": {"type": kind},
    }


def petstore_doc() -> dict[str, Any]:
    """A small OpenAPI 3 document with every REST shape the classifier knows."""
    pet_id = _param("petId")
    owner_id = _param("ownerId")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pet Clinic", "version": "1.0.0"},
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "parameters": [
                        _param("limit", "query"),
                        _param("offset", "query"),
                        _param("status", "query", "string"),
                    ],
                    "responses": _ok(
                        {"type": "object", "properties": {"data": {"type": "array", "items": _ref("Pet")}}}
                    ),
                },
                "post": {
                    "operationId": "createPet",
                    "requestBody": _json(_ref("Pet")),
                    "responses": _ok(_ref("Pet")),
                },
            },
            "/pets/search": {
                "get": {
                    "operationId": "searchPets",
                    "parameters": [_param("q", "query", "string", True)],
                    "responses": _ok({"type": "array", "items": _ref("Pet")}),
                }
            },
            "/pets/{petId}": {
                "get": {
                    "operationId": "getPet",
                    "parameters": [pet_id],
                    "responses": _ok({"type": "object", "properties": {"data": _ref("Pet")}}),
                },
                "patch": {
                    "operationId": "updatePet",
                    "parameters": [pet_id],
                    "requestBody": _json(_ref("Pet")),
                    "responses": _ok(_ref("Pet")),
                },
                "delete": {
                    "operationId": "deletePet",
                    "parameters": [pet_id],
                    "responses": {"204": {"description": "gone"}},
                },
            },
            "/pets/{petId}/vaccinate": {
                "post": {"operationId": "vaccinatePet", "parameters": [pet_id], "responses": _ok(_ref("Pet"))}
            },
            "/owners": {
                "get": {
                    "operationId": "listOwners",
                    "responses": _ok({"type": "array", "items": _ref("Owner")}),
                }
            },
            "/owners/{ownerId}": {
                "get": {"operationId": "getOwner", "parameters": [owner_id], "responses": _ok(_ref("Owner"))}
            },
            "/owners/{ownerId}/visits": {
                "get": {
                    "operationId": "listVisits",
                    "parameters": [owner_id],
                    "responses": _ok({"type": "array", "items": _ref("Visit")}),
                },
                "post": {
                    "operationId": "createVisit",
                    "parameters": [owner_id],
                    "requestBody": _json(_ref("Visit")),
                    "responses": _ok(_ref("Visit")),
                },
            },
            "/owners/{ownerId}/visits/{visitId}": {
                "get": {
                    "operationId": "getVisit",
                    "parameters": [owner_id, _param("visitId", kind="string")],
                    "responses": _ok(_ref("Visit")),
                }
            },
            "/clinics/{clinic-id}/rooms": {
                "get": {
                    "operationId": "listRooms",
                    "parameters": [_param("clinic-id", kind="string")],
                    "responses": _ok(
                        {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"id": {"type": "string"}, "label": {"type": "string"}},
                            },
                        }
                    ),
                }
            },
            "/stats": {
                "get": {
                    "operationId": "getStats",
                    "responses": _ok({"type": "object", "properties": {"count": {"type": "integer"}}}),
                }
            },
            "/email": {
                "post": {
                    "operationId": "sendEmail",
                    "requestBody": _json({"type": "object", "properties": {"to": {"type": "string"}}}),
                    "responses": _ok({"type": "object"}),
                }
            },
        },
        "components": {"schemas": {"Pet": PET, "Owner": OWNER, "Visit": VISIT}},
    }


@pytest.fixture(scope="module")
def pets() -> ServiceManifest:
    return synthesize(ingest_document(petstore_doc(), "petstore.json", name="pets")).manifest


def _tool(manifest: ServiceManifest, name: str) -> ToolDef:
    tool = manifest.tool(name)
    assert tool is not None, name
    return tool


@pytest.mark.parametrize(
    ("tool", "operation", "kind", "entity", "backend"),
    [
        ("createPet", "create", "write", "pet", "implemented"),
        ("getPet", "read", "read", "pet", "implemented"),
        ("listPets", "list", "read", "pet", "implemented"),
        ("searchPets", "search", "read", "pet", "implemented"),
        ("updatePet", "update", "write", "pet", "implemented"),
        ("deletePet", "delete", "write", "pet", "implemented"),
        ("vaccinatePet", "action", "write", "pet", "simulated"),
        ("listOwners", "list", "read", "owner", "implemented"),
        ("getOwner", "read", "read", "owner", "implemented"),
        ("listVisits", "list", "read", "visit", "implemented"),
        ("createVisit", "create", "write", "visit", "implemented"),
        ("getVisit", "read", "read", "visit", "implemented"),
        ("listRooms", "list", "read", "room", "implemented"),
        ("getStats", "action", "read", None, "simulated"),
        ("sendEmail", "action", "write", None, "simulated"),
    ],
)
def test_rest_operations_are_classified_by_method_and_path_shape(
    pets: ServiceManifest, tool: str, operation: str, kind: str, entity: str | None, backend: str
) -> None:
    t = _tool(pets, tool)
    assert (t.operation, t.kind, t.entity, t.backend) == (operation, kind, entity, backend)
    if backend == "simulated":
        assert t.simulated_reason


@pytest.mark.parametrize(
    ("path", "kind", "resource", "item_param", "action"),
    [
        ("/contacts", "collection", "contacts", None, None),
        ("/contacts/{id}", "item", "contacts", "id", None),
        ("/v1/accounts/{accountId}/contacts/{contactId}", "item", "contacts", "contactId", None),
        ("/calendars/{calendarId}/events/quickAdd", "action", "events", None, "quickAdd"),
        ("/calendars/{calendarId}/events/{eventId}/move", "action", "events", "eventId", "move"),
        ("/v1/things/{name}:cancel", "action", "things", "name", "cancel"),
        ("/file-storage/upload-sessions", "collection", "upload-sessions", None, None),
        ("/{objectName}/{objectId}", "other", None, None, None),
    ],
)
def test_path_shapes_name_collections_items_and_actions(
    path: str, kind: str, resource: str | None, item_param: str | None, action: str | None
) -> None:
    shape = parse_path(path)
    assert (shape.kind, shape.resource, shape.item_param, shape.action) == (
        kind,
        resource,
        item_param,
        action,
    )


@pytest.mark.parametrize(
    ("name", "operation", "entity"),
    [
        ("create_contact", "create", "contact"),
        ("get_contact", "read", "contact"),
        ("fetchInvoice", "read", "invoice"),
        ("list_contacts", "list", "contact"),
        ("get_all_contacts", "list", "contact"),
        ("contacts_search", "search", "contact"),
        ("find_people_by_email", "search", "person"),
        ("updateContact", "update", "contact"),
        ("rename_folder", "update", "folder"),
        ("delete_note", "delete", "note"),
        ("remove_tag", "delete", "tag"),
        ("hubspot_create_deal", "create", "deal"),
        ("cancel_order", "action", "order"),
        ("send_email", "action", "email"),
        ("contacts", "action", None),
    ],
)
def test_tool_names_give_operation_and_entity(name: str, operation: str, entity: str | None) -> None:
    parsed = parse_tool_name(name)
    assert (parsed.operation, parsed.entity) == (operation, entity)


def test_list_binding_has_paging_and_column_filters(pets: ServiceManifest) -> None:
    t = _tool(pets, "listPets")
    assert (t.limit_arg, t.offset_arg, t.search_arg) == ("limit", "offset", None)
    assert t.arg_columns == {"status": "status"}
    # the spec's own list container: rows under "data", as it declares
    assert t.output_schema["properties"]["data"]["type"] == "array"
    assert t.response is not None and (t.response.rows_at, t.response.many) == (["data"], True)
    assert t.output_semantics["data[].id"] == "id:pet"
    assert _tool(pets, "searchPets").search_arg == "q"


def test_nested_collection_binds_the_parent_id_to_a_reference_column(pets: ServiceManifest) -> None:
    visit = pets.entity("visit")
    assert visit is not None
    owner_col = visit.column("owner_id")
    assert owner_col is not None and owner_col.ref == "owner"
    assert _tool(pets, "createVisit").arg_columns["ownerId"] == "owner_id"
    assert _tool(pets, "listVisits").arg_columns == {"ownerId": "owner_id"}
    read = _tool(pets, "getVisit")
    assert read.pk_arg == "visitId" and read.arg_semantics["ownerId"] == "id:owner"


def test_path_params_are_renamed_to_the_sanitised_argument_names(pets: ServiceManifest) -> None:
    t = _tool(pets, "listRooms")
    arg = next(iter(t.arg_locations))
    assert t.path == "/clinics/{" + arg + "}/rooms"
    assert arg.isidentifier() and t.arg_locations[arg] == "path"
    clinic = pets.entity("clinic")
    assert clinic is not None and clinic.seed_rows == 3  # an implicit parent: key and name only


def test_read_and_delete_outputs_are_what_the_spec_declares(pets: ServiceManifest) -> None:
    read = _tool(pets, "getPet")  # declared {"data": Pet}: the row sits under "data"
    assert read.pk_arg == "petId" and read.response is not None and read.response.rows_at == ["data"]
    assert set(read.output_schema["properties"]["data"]["properties"]) >= {
        "id",
        "name",
        "status",
        "ownerId",
        "tags",
    }
    assert set(read.response.fields) >= {"id", "name", "status", "ownerId", "tags"}
    delete = _tool(pets, "deletePet")  # declared 204: no body
    assert delete.response is not None and (delete.response.status, delete.response.body) == (204, False)
    assert delete.input_schema["additionalProperties"] is False
    no_schema = _tool(pets, "getOwner")
    assert no_schema.response is not None and no_schema.response.rows_at == []


def test_update_without_an_id_argument_is_simulated_with_a_reason() -> None:
    doc = {
        "tools": [
            {
                "name": "create_note",
                "inputSchema": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}},
                    "required": ["title"],
                },
            },
            {
                "name": "update_note",
                "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
            },
            {
                "name": "get_note",
                "inputSchema": {
                    "type": "object",
                    "properties": {"note_id": {"type": "string"}},
                    "required": ["note_id"],
                },
            },
        ]
    }
    manifest = synthesize(ingest_document(doc, "notes.json", name="notes")).manifest
    update = _tool(manifest, "update_note")
    assert update.backend == "simulated" and "argument naming the note" in (update.simulated_reason or "")
    assert _tool(manifest, "get_note").backend == "implemented"


def test_list_with_a_required_argument_that_filters_nothing_is_simulated() -> None:
    doc = {
        "tools": [
            {
                "name": "create_note",
                "inputSchema": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}},
                    "required": ["title"],
                },
            },
            {
                "name": "list_notes",
                "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
            },
            {
                "name": "list_all_notes",
                "inputSchema": {
                    "type": "object",
                    "properties": {"workspace": {"type": "string"}},
                    "required": ["workspace"],
                },
            },
        ]
    }
    manifest = synthesize(ingest_document(doc, "notes.json", name="notes")).manifest
    assert _tool(manifest, "list_notes").arg_columns == {"title": "title"}
    strict = _tool(manifest, "list_all_notes")
    assert strict.backend == "simulated" and "workspace" in (strict.simulated_reason or "")


def test_mcp_tools_bind_across_camel_and_snake_case() -> None:
    doc = {
        "tools": [
            {
                "name": "create_contact",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "first_name": {"type": "string"},
                        "email": {"type": "string"},
                        "company_id": {"type": "integer"},
                    },
                    "required": ["first_name"],
                },
            },
            {
                "name": "create_company",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            {
                "name": "getContact",
                "inputSchema": {
                    "type": "object",
                    "properties": {"contactId": {"type": "integer"}},
                    "required": ["contactId"],
                },
            },
            {
                "name": "updateContact",
                "inputSchema": {
                    "type": "object",
                    "properties": {"contactId": {"type": "integer"}, "firstName": {"type": "string"}},
                    "required": ["contactId"],
                },
            },
            {
                "name": "contacts_search",
                "inputSchema": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                },
            },
            {
                "name": "contacts",
                "description": "Brevo-style multi-operation tool",
                "inputSchema": {
                    "type": "object",
                    "properties": {"operation": {"type": "string", "enum": ["get", "create"]}},
                },
            },
        ]
    }
    manifest = synthesize(ingest_document(doc, "crm.json", name="crm")).manifest
    contact = manifest.entity("contact")
    assert contact is not None and contact.pk == "id" and contact.pk_type == "integer"
    assert contact.column("company_id").ref == "company"  # type: ignore[union-attr]
    assert _tool(manifest, "getContact").pk_arg == "contactId"
    assert _tool(manifest, "updateContact").arg_columns == {"firstName": "first_name"}
    search = _tool(manifest, "contacts_search")
    assert (search.operation, search.search_arg, search.limit_arg) == ("search", "query", "limit")
    multi = _tool(manifest, "contacts")
    assert (multi.operation, multi.backend, multi.kind) == ("action", "simulated", "write")
    assert all(
        t.arg_locations and set(t.arg_locations.values()) == {"body"}
        for t in manifest.tools
        if t.input_schema["properties"]
    )


def test_nested_entity_argument_becomes_body_arg() -> None:
    fields = {"name": {"type": "string"}, "email": {"type": "string"}, "phone": {"type": "string"}}
    doc = {
        "tools": [
            {
                "name": "create_lead",
                "inputSchema": {
                    "type": "object",
                    "properties": {"lead": {"type": "object", "properties": fields}},
                    "required": ["lead"],
                },
            },
            {
                "name": "get_lead",
                "inputSchema": {
                    "type": "object",
                    "properties": {"lead_id": {"type": "string"}},
                    "required": ["lead_id"],
                },
            },
        ]
    }
    manifest = synthesize(ingest_document(doc, "leads.json", name="leads")).manifest
    create = _tool(manifest, "create_lead")
    assert create.backend == "implemented" and create.body_arg == "lead"
    lead = manifest.entity("lead")
    assert lead is not None and {"name", "email", "phone"} <= {c.name for c in lead.columns}
