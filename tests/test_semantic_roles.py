"""The one semantic role vocabulary: tags and aspects shared by ingestion, synthesis and the graph."""

from __future__ import annotations

import pytest

from compoworld.manifest import ColumnDef, EntityDef
from compoworld.specs.semantic import Role, aspect, role, tag, value_tag
from orchestrator.graph.ports import column_semantic

STR = {"type": "string"}
NUM = {"type": "number"}
INT = {"type": "integer"}


@pytest.mark.parametrize(
    ("name", "schema", "entity", "expected"),
    [
        ("updated", STR, None, "date-time"),
        ("due", STR, None, "date-time"),
        ("start_time", STR, None, "date-time"),
        ("created_on", STR, None, "date"),
        ("display_name", STR, "employee", "person_name"),
        ("display_name", STR, "calendar", None),
        ("name", STR, "supplier", "company_name"),
        ("name", STR, "ledger_account", "title"),
        ("colorId", STR, None, None),
        ("background_color", STR, None, "color"),
        ("name", STR, "product", "title"),
        ("summary", STR, None, "title"),
        ("company_website", STR, None, "url"),
        ("event_guid", STR, None, "uuid"),
        ("country_flag", STR, None, None),
        ("email_domain", STR, None, None),
        ("ip_address", STR, None, "ip"),
        ("address_postal_code", STR, None, "postal_code"),
        ("address_city", STR, None, "city"),
        ("street_address", STR, None, "address"),
        ("amount", INT, None, "money"),
        ("language_tag", STR, None, "language"),
        ("contact_id", STR, None, None),
    ],
)
def test_value_tag_reads_format_then_name(
    name: str, schema: dict, entity: str | None, expected: str | None
) -> None:
    assert value_tag(name, schema, entity=entity) == expected


def test_tag_puts_keys_before_values_and_value_tag_never_returns_a_key() -> None:
    assert tag("contactId", STR) == "id:contact"
    assert tag("id", STR, entity="invoice") == "id:invoice"
    assert value_tag("id", STR, entity="invoice") is None
    assert tag("billing_email", STR) == value_tag("billing_email", STR) == "email"


def test_an_enum_keeps_only_vocabulary_tags() -> None:
    assert value_tag("status", {"type": "string", "enum": ["open", "closed"]}) == "status"
    assert value_tag("title", {"type": "string", "enum": ["Mr", "Ms"]}) is None
    assert value_tag("currency", {"type": "string", "enum": ["EUR", "USD"]}) == "currency"


@pytest.mark.parametrize(
    ("name", "semantic", "expected"),
    [
        ("createdAt", "date-time", "created"),
        ("last_modified", "date-time", "updated"),
        ("dueDate", "date", "due"),
        ("start_date", "date", "start"),
        ("endDateTime", "date-time", "end"),
        ("check_in", "date", "start"),
        ("date_of_birth", "date", "birth"),
        ("expires_at", "date-time", "expiry"),
        ("total_amount", "money", "total"),
        ("tax", "money", "tax"),
        ("amount_due", "money", "due"),
        ("billing_email", "email", "billing"),
        ("from", "email", "sender"),
        ("mobile_phone", "phone", "mobile"),
        ("email", "email", None),
        ("date", "date", None),
        ("contact_id", "id:contact", None),
    ],
)
def test_aspect_says_which_one_of_its_kind(name: str, semantic: str, expected: str | None) -> None:
    assert aspect(name, semantic) == expected


def test_role_pairs_the_tag_with_its_aspect() -> None:
    assert role("dueDate", STR) == Role("date", "due")
    assert role("invoice_total", NUM) == Role("money", "total")
    assert role("customer_id", STR) == Role("id:customer", None)
    assert role("flavour", STR) is None


def test_the_graph_tags_columns_with_the_same_vocabulary() -> None:
    entity = EntityDef(
        name="contact",
        class_name="Contact",
        table="contact",
        pk="id",
        pk_type="string",
        columns=[
            ColumnDef(name="id", type="string", primary_key=True),
            ColumnDef(name="name", type="string"),
            ColumnDef(name="work_email", type="string"),
            ColumnDef(name="company_id", type="string", ref="company"),
        ],
    )
    by_name = {c.name: column_semantic(entity, c) for c in entity.columns}
    assert by_name == {
        "id": "id:contact",
        "name": value_tag("name", STR, entity="contact"),
        "work_email": "email",
        "company_id": "id:company",
    }
    assert by_name["name"] == "person_name"
