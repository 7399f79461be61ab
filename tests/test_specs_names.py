"""Naming and semantic tagging: the vocabulary synthesis and the graph rely on."""

from __future__ import annotations

import pytest

from compoworld.specs import entity_name
from compoworld.specs.naming import derive_operation_name, identifier, service_slug, slugify, tool_name
from compoworld.specs.semantic import tag
from compoworld.specs.words import entity_for_schema, path_entity, split_words


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("contacts", "contact"),
        ("companies", "company"),
        ("addresses", "address"),
        ("statuses", "status"),
        ("people", "person"),
        ("Contacts", "contact"),
        ("InvoiceLines", "invoice_line"),
        ("invoice-lines", "invoice_line"),
        ("boxes", "box"),
        ("batches", "batch"),
        ("warehouses", "warehouse"),
        ("categories", "category"),
        ("movies", "movie"),
        ("photos", "photo"),
        ("status", "status"),
        ("address", "address"),
        ("data", "data"),
        ("io.k8s.api.core.v1.Pod", "pod"),
        ("CRMContact", "crm_contact"),
        ("pet", "pet"),
        ("", ""),
    ],
)
def test_entity_name_is_snake_case_singular(raw: str, expected: str) -> None:
    assert entity_name(raw) == expected


@pytest.mark.parametrize(
    ("schema_name", "expected"),
    [
        ("GetContactResponse", "contact"),
        ("NewPet", "pet"),
        ("CreateContactRequest", "contact"),
        ("PetList", "pet"),
        ("Contact", "contact"),
        ("Response", "response"),
    ],
)
def test_entity_for_schema_strips_request_response_affixes(schema_name: str, expected: str) -> None:
    assert entity_for_schema(schema_name) == expected


def test_split_words_handles_camel_acronyms_and_separators() -> None:
    assert split_words("petId") == ["pet", "id"]
    assert split_words("CRMContact") == ["crm", "contact"]
    assert split_words("first-name") == ["first", "name"]
    assert split_words("addressLine1") == ["address", "line1"]


@pytest.mark.parametrize(
    ("path", "param", "expected"),
    [
        ("/pets/{petId}", "petId", "pet"),
        ("/crm/contacts/{id}", "id", "contact"),
        ("/v1/companies/{id}/people/{personId}", "personId", "person"),
        ("/v1/companies", None, "company"),
        ("/api/v2/invoices/{id}:void", None, "invoice"),
        ("/{id}", "id", None),
    ],
)
def test_path_entity_reads_the_resource_segment(path: str, param: str | None, expected: str | None) -> None:
    assert path_entity(path, param) == expected


STR = {"type": "string"}
NUM = {"type": "number"}
INT = {"type": "integer"}


@pytest.mark.parametrize(
    ("name", "schema", "description", "entity", "expected"),
    [
        ("id", STR, "", "contact", "id:contact"),
        ("id", {"type": "string", "format": "uuid"}, "", None, "uuid"),
        ("contact_id", STR, "", None, "id:contact"),
        ("petId", INT, "", None, "id:pet"),
        ("companyIds", {"type": "array", "items": STR}, "", None, "id:company"),
        ("parent_branch_id", STR, "", None, "id:branch"),
        ("parent_id", STR, "", "category", "id:category"),
        ("external_id", STR, "", None, None),
        ("email", STR, "", None, "email"),
        ("e_mail", STR, "", None, "email"),
        ("workEmailAddress", STR, "", None, "email"),
        ("to", STR, "Recipient email address", None, "email"),
        ("to", STR, "Destination city", None, None),
        ("cc", {"type": "array", "items": STR}, "Emails to copy", None, "email"),
        ("contact", {"type": "string", "format": "email"}, "", None, "email"),
        ("mobile", STR, "", None, "phone"),
        ("fax", STR, "", None, "phone"),
        ("website", STR, "", None, "url"),
        ("href", STR, "", None, "url"),
        ("avatar", {"type": "string", "format": "uri"}, "", None, "url"),
        ("linkAccess", {"type": "string", "enum": ["none", "view"]}, "", None, None),
        ("currency", STR, "", None, "currency"),
        ("currency_code", STR, "", None, "currency"),
        ("amount", NUM, "", None, "money"),
        ("total", NUM, "", None, "money"),
        ("unit_price", NUM, "", None, "money"),
        ("balance", INT, "", None, "money"),
        ("total", INT, "", None, None),
        ("total_count", INT, "", None, None),
        ("tax_rate", NUM, "", None, None),
        ("amount", STR, "", None, None),
        ("price", {"type": "string", "format": "decimal"}, "", None, "money"),
        ("country_code", STR, "", None, "country"),
        ("first_name", STR, "", None, "first_name"),
        ("firstName", STR, "", None, "first_name"),
        ("surname", STR, "", None, "last_name"),
        ("name", STR, "", "contact", "person_name"),
        ("name", STR, "", "company", "company_name"),
        ("name", STR, "", "pet", "title"),
        ("full_name", STR, "", None, "person_name"),
        ("company_name", STR, "", None, "company_name"),
        ("organization", STR, "", None, "company_name"),
        ("line1", STR, "", None, "address"),
        ("street", STR, "", None, "address"),
        ("mac_address", STR, "", None, None),
        ("city", STR, "", None, "city"),
        ("zip", STR, "", None, "postal_code"),
        ("postal_code", STR, "", None, "postal_code"),
        ("subject", STR, "", None, "title"),
        ("title", STR, "", None, "title"),
        ("notes", STR, "", None, "text"),
        ("message", STR, "", None, "text"),
        ("message", {"type": "object"}, "", None, None),
        ("status", STR, "", None, "status"),
        ("state", {"type": "string", "enum": ["open", "closed"]}, "", None, "status"),
        ("state", STR, "", None, None),
        ("locale", STR, "", None, "language"),
        ("timezone", STR, "", None, "timezone"),
        ("time_zone", STR, "", None, "timezone"),
        ("ship_date", {"type": "string", "format": "date-time"}, "", None, "date-time"),
        ("created_at", STR, "", None, "date-time"),
        ("birthday", STR, "", None, "date"),
        ("server_ip", {"type": "string", "format": "ipv4"}, "", None, "ip"),
        ("quantity", INT, "", None, "quantity"),
        ("discount_percent", NUM, "", None, "percent"),
        ("color", STR, "", None, "color"),
        ("email", {"anyOf": [STR, {"type": "null"}]}, "", None, "email"),
        ("email", {"type": ["string", "null"]}, "", None, "email"),
        ("count", INT, "", None, None),
        ("emailConfirmationSent", STR, "", None, None),
        ("workEmailAddress", STR, "", None, "email"),
        ("phoneType", STR, "", None, None),
        ("mobile_phone_number", STR, "", None, "phone"),
        ("ip_address", STR, "", None, "ip"),
        ("startDateTime", STR, "", None, "date-time"),
        ("uniqueMeetingId", INT, "", None, "id:meeting"),
        ("image_url", STR, "", None, "url"),
    ],
)
def test_tag(name: str, schema: dict, description: str, entity: str | None, expected: str | None) -> None:
    assert tag(name, schema, description, entity) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("first-name", "first_name"),
        ("$filter", "filter"),
        ("class", "class_"),
        ("page[size]", "page_size"),
        ("X-Request-Id", "X_Request_Id"),
        ("_id", "id"),
        ("2fa_code", "n2fa_code"),
        ("número", "numero"),
        ("valid_name", "valid_name"),
        ("$", ""),
        ("", ""),
    ],
)
def test_identifier_sanitises_parameter_names(raw: str, expected: str) -> None:
    assert identifier(raw) == expected


def test_tool_names_are_sanitised_and_bounded() -> None:
    assert tool_name("calendar.events.list") == "calendar_events_list"
    assert tool_name("eraser__search") == "eraser__search"
    assert tool_name("Pets / List all") == "Pets_List_all"
    assert tool_name("???") == ""
    long_a, long_b = "x" * 70 + "a", "x" * 70 + "b"
    assert len(tool_name(long_a)) == 64
    assert tool_name(long_a) != tool_name(long_b)
    assert derive_operation_name("GET", "/pets/{petId}") == "get_pets_petId"
    assert derive_operation_name("post", "/") == "post_root"


@pytest.mark.parametrize(
    ("source", "title", "provider", "service", "expected"),
    [
        ("api/apideck.com/crm.json", "Apideck CRM API", None, None, "apideck_crm"),
        ("x.json", "whatever", "apideck.com", "crm", "apideck_crm"),
        ("api/telstra.com.json", "API", None, None, "telstra"),
        ("api/xero.com/xero_files.json", "Xero Files API", None, None, "xero_files"),
        ("api/payments.service.gov.uk/payments.json", "", None, None, "payments_service_payments"),
        ("specs/petstore.json", "Swagger Petstore", None, None, "petstore"),
        ("specs/thing.json", "API", None, None, "thing"),
        ("specs/compoworld_mcp_neon.json", "", None, None, "neon"),
        ("specs/calendar_functions.json", "", None, None, "calendar"),
        ("specs/1forge.json", "", None, None, "api_1forge"),
    ],
)
def test_service_slug_prefers_provider_layout_then_specific_title_then_file(
    source: str, title: str, provider: str | None, service: str | None, expected: str
) -> None:
    assert service_slug(source, title, provider, service) == expected


def test_slugify_is_lower_snake_ascii() -> None:
    assert slugify("Café Orders (v2)") == "cafe_orders_v2"
    assert slugify("!!!") == ""
