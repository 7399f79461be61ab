"""Entity inference: keys, typed columns, safe identifiers, references, read-only fields, caps."""

from __future__ import annotations

import keyword
from typing import Any

from compoworld.specs import ingest_document
from compoworld.specs.words import entity_name
from compoworld.synth.drafts import MAX_COLUMNS
from compoworld.synth.entities import infer_entities
from compoworld.synth.naming import RESERVED_ATTRIBUTES, identifier, match_key


def _doc(
    item_schema: dict[str, Any], *, item_param: str = "id", param_type: str = "string"
) -> dict[str, Any]:
    ref = {"$ref": "#/components/schemas/Widget"}
    param = {"name": item_param, "in": "path", "required": True, "schema": {"type": param_type}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Widgets", "version": "1"},
        "paths": {
            "/widgets": {
                "get": {
                    "operationId": "listWidgets",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"type": "array", "items": ref}}},
                        }
                    },
                },
                "post": {
                    "operationId": "createWidget",
                    "requestBody": {"content": {"application/json": {"schema": ref}}},
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": ref}}}
                    },
                },
            },
            f"/widgets/{{{item_param}}}": {
                "get": {
                    "operationId": "getWidget",
                    "parameters": [param],
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": ref}}}
                    },
                }
            },
        },
        "components": {"schemas": {"Widget": item_schema}},
    }


def _widget(schema: dict[str, Any], **kw: Any) -> Any:
    inference = infer_entities(ingest_document(_doc(schema, **kw), "widgets.json", name="widgets"))
    entity = inference.entity("widget")
    assert entity is not None
    return entity


def test_identifiers_are_valid_and_never_shadow_keywords_or_sqlmodel_attributes() -> None:
    for raw in (
        "class",
        "metadata",
        "model_config",
        "schema",
        "json",
        "dict",
        "copy",
        "fields",
        "str",
        "_links",
        "2fa",
        "e-mail",
        "@type",
    ):
        name = identifier(raw)
        assert name.isidentifier() and not keyword.iskeyword(name) and name not in RESERVED_ATTRIBUTES, raw
    assert (
        identifier("metadata") == "metadata_"
        and identifier("e-mail") == "e_mail"
        and identifier("2fa") == "n_2fa"
    )


def test_entity_names_are_singular_snake_and_keys_case_blind() -> None:
    assert [
        entity_name(w) for w in ("contacts", "TimeOffRequests", "people", "calendarList", "statuses")
    ] == [
        "contact",
        "time_off_request",
        "person",
        "calendar_list",
        "status",
    ]
    assert match_key("companyId") == match_key("company_id") == match_key("CompanyID")


def test_columns_are_typed_and_nested_values_are_json() -> None:
    entity = _widget(
        {
            "type": "object",
            "properties": {
                "id": {"type": "string", "readOnly": True},
                "count": {"type": "integer"},
                "price": {"type": "number"},
                "name": {"type": "string"},
                "active": {"type": "boolean"},
                "dims": {"type": "object", "properties": {"w": {"type": "number"}}},
                "tags": {"type": "array", "items": {"type": "string"}},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "owner_email": {"type": "string"},
                "updatedAt": {"type": "string", "format": "date-time"},
            },
        }
    )
    types = {c.name: c.type for c in entity.columns}
    assert types == {
        "id": "string",
        "count": "integer",
        "price": "number",
        "name": "string",
        "active": "boolean",
        "dims": "json",
        "tags": "json",
        "kind": "string",
        "owner_email": "string",
        "updatedAt": "string",
    }
    by = {c.name: c for c in entity.columns}
    assert entity.pk == "id" and entity.pk_type == "string" and entity.id_prefix == "wid"
    assert by["kind"].enum == ["a", "b"] and by["updatedAt"].format == "date-time"
    assert by["owner_email"].semantic == "email" and by["updatedAt"].read_only and by["id"].read_only
    assert not by["name"].read_only and entity.label_column == "name"


def test_the_item_path_parameter_names_the_key_and_its_type() -> None:
    entity = _widget(
        {"type": "object", "properties": {"widgetCode": {"type": "string"}, "label": {"type": "string"}}},
        item_param="widgetCode",
    )
    assert entity.pk == "widgetCode"
    numeric = _widget(
        {"type": "object", "properties": {"label": {"type": "string"}}},
        item_param="widgetId",
        param_type="integer",
    )
    assert numeric.pk == "id" and numeric.pk_type == "integer" and numeric.id_prefix == ""


def test_reserved_and_colliding_names_are_renamed_and_deduplicated() -> None:
    entity = _widget(
        {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "metadata": {"type": "object"},
                "schema": {"type": "string"},
                "class": {"type": "string"},
                "e-mail": {"type": "string"},
                "e_mail": {"type": "string"},
                "TemplateId": {"type": "string"},
                "TemplateID": {"type": "string"},
            },
        }
    )
    names = [c.name for c in entity.columns]
    assert len(names) == len({n.lower() for n in names})  # SQLite column names are case-blind
    assert {"metadata_", "schema_", "class_", "e_mail", "TemplateId"} <= set(names)
    assert "TemplateID" not in names
    meta = entity.column("metadata_")
    assert meta is not None and meta.source_name == "metadata"


def test_wide_schemas_are_capped_keeping_key_and_required_fields() -> None:
    props = {f"field_{i:02d}": {"type": "string"} for i in range(60)}
    entity = _widget(
        {"type": "object", "required": ["field_59"], "properties": {"id": {"type": "string"}, **props}}
    )
    names = [c.name for c in entity.columns]
    assert len(names) == MAX_COLUMNS and names[0] == "id" and "field_59" in names
    field_59 = entity.column("field_59")
    assert field_59 is not None and not field_59.nullable


def test_references_follow_the_referenced_key_type() -> None:
    doc = {
        "tools": [
            {
                "name": "create_company",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            {
                "name": "get_company",
                "inputSchema": {
                    "type": "object",
                    "properties": {"company_id": {"type": "integer"}},
                    "required": ["company_id"],
                },
            },
            {
                "name": "create_contact",
                "inputSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "companyId": {"type": "number"}},
                },
            },
        ]
    }
    inference = infer_entities(ingest_document(doc, "crm.json", name="crm"))
    contact = inference.entity("contact")
    assert contact is not None
    column = contact.column("companyId")
    assert (
        column is not None
        and column.ref == "company"
        and column.type == "integer"
        and column.semantic == "id:company"
    )
