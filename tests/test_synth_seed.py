"""Seed data: deterministic, schema-conforming, referentially consistent, cast from one population."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import phonenumbers
import pycountry
import pytest
from jsonschema import Draft202012Validator

from compoworld.keys import entity_key
from compoworld.manifest import ColumnDef, EntityDef
from compoworld.population import population
from compoworld.specs import ingest_document
from compoworld.synth.outputs import entity_schema
from compoworld.synth.pipeline import Synthesis, synthesize
from compoworld.synth.seed import seed_data, seed_rows

CRM = {
    "tools": [
        {
            "name": "create_company",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "country": {"type": "string"},
                    "website": {"type": "string", "format": "uri"},
                },
                "required": ["name"],
            },
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
                "properties": {
                    "first_name": {"type": "string"},
                    "last_name": {"type": "string"},
                    "email": {"type": "string", "format": "email"},
                    "phone": {"type": "string"},
                    "company_id": {"type": "integer"},
                    "status": {"type": "string", "enum": ["lead", "customer", "churned"]},
                    "birthday": {"type": "string", "format": "date"},
                    "score": {"type": "integer", "minimum": 0, "maximum": 10},
                    "address": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                        "required": ["city"],
                    },
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["first_name", "email", "status"],
            },
        },
        {
            "name": "get_contact",
            "inputSchema": {
                "type": "object",
                "properties": {"contact_id": {"type": "string"}},
                "required": ["contact_id"],
            },
        },
        {
            "name": "create_deal",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "amount": {"type": "number"},
                    "currency": {"type": "string"},
                    "contact_id": {"type": "string"},
                    "close_date": {"type": "string", "format": "date-time"},
                },
                "required": ["title", "contact_id"],
            },
        },
        {
            "name": "get_deal",
            "inputSchema": {
                "type": "object",
                "properties": {"deal_id": {"type": "string", "format": "uuid"}},
                "required": ["deal_id"],
            },
        },
    ]
}


@pytest.fixture(scope="module")
def crm() -> Synthesis:
    return synthesize(ingest_document(CRM, "crm.json", name="crm"))


PAYMENTS = {
    "tools": [
        {
            "name": "create_customer",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "email": {"type": "string", "format": "email"},
                    "phone": {"type": "string"},
                    "iban": {"type": "string"},
                    "bic": {"type": "string"},
                    "country": {"type": "string"},
                    "currency": {"type": "string"},
                    "created_at": {"type": "string", "format": "date-time"},
                    "updated_at": {"type": "string", "format": "date-time"},
                },
                "required": ["name", "email"],
            },
        },
        {
            "name": "get_customer",
            "inputSchema": {
                "type": "object",
                "properties": {"customer_id": {"type": "string"}},
                "required": ["customer_id"],
            },
        },
        {
            "name": "create_invoice",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string"},
                    "customer": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "name": {"type": "string"},
                            "email": {"type": "string"},
                        },
                    },
                    "customer_name": {"type": "string"},
                    "status": {"type": "string"},
                    "issue_date": {"type": "string", "format": "date"},
                    "due_date": {"type": "string", "format": "date"},
                    "line_items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["quantity", "unit_price", "total_amount"],
                            "properties": {
                                "description": {"type": "string"},
                                "quantity": {"type": "integer"},
                                "unit_price": {"type": "number"},
                                "total_amount": {"type": "number"},
                            },
                        },
                    },
                    "sub_total": {"type": "number"},
                    "total_tax": {"type": "number"},
                    "total": {"type": "number"},
                },
                "required": ["customer_id", "line_items", "sub_total", "total_tax", "total"],
            },
        },
        {
            "name": "get_invoice",
            "inputSchema": {
                "type": "object",
                "properties": {"invoice_id": {"type": "string"}},
                "required": ["invoice_id"],
            },
        },
        {
            "name": "list_invoices",
            "inputSchema": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["Draft", "Sent", "Paid"]}},
            },
        },
    ]
}


@pytest.fixture(scope="module")
def payments() -> Synthesis:
    return synthesize(ingest_document(PAYMENTS, "payments.json", name="payments"))


def _digest(rows: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _keys(synthesis: Synthesis) -> set[str]:
    return {str(r[e.pk]) for e in synthesis.manifest.entities for r in synthesis.seed[e.table]}


def test_seed_is_deterministic_across_runs(crm: Synthesis) -> None:
    again = synthesize(ingest_document(CRM, "crm.json", name="crm"))
    assert _digest(again.seed) == _digest(crm.seed)
    other = synthesize(ingest_document(CRM, "crm.json", name="crm_two"))
    assert _digest(other.seed) != _digest(crm.seed)


def test_seed_does_not_depend_on_the_process_hash_seed(tmp_path: Path) -> None:
    """Population and seed are byte-identical under any PYTHONHASHSEED (no set order leaks in)."""
    script = (
        "import json, hashlib; from compoworld.specs import ingest_document;"
        "from compoworld.synth.pipeline import synthesize;"
        f"s = synthesize(ingest_document({CRM!r}, 'crm.json', name='crm'));"
        "print(hashlib.sha256(json.dumps([s.seed, s.cast], sort_keys=True).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_every_entity_gets_a_few_dozen_rows_with_distinct_keys(crm: Synthesis) -> None:
    for entity in crm.manifest.entities:
        rows = crm.seed[entity.table]
        assert 24 <= len(rows) <= 40 and entity.seed_rows == len(rows)
        keys = [r[entity.pk] for r in rows]
        assert len(set(keys)) == len(keys)
        if entity.pk_type == "integer":
            assert all(isinstance(k, int) and 100_000_000 < k < 1_000_000_000 for k in keys)
    contact_keys = [r["id"] for r in crm.seed["contact"]]
    assert all(k.startswith("con_") and len(k) == 14 for k in contact_keys)


def test_keys_are_unique_across_services(crm: Synthesis, payments: Synthesis) -> None:
    """CRM con_000006 and Mailsquad con_000006 were two different people."""
    other = synthesize(ingest_document(CRM, "crm.json", name="crm_two"))
    assert not _keys(crm) & _keys(other)
    assert not _keys(crm) & _keys(payments)


def test_created_rows_continue_the_library_unique_key_scheme(crm: Synthesis) -> None:
    contact = crm.manifest.entity("contact")
    assert contact is not None and contact.key_space == "crm.contact"
    created = entity_key(contact, contact.seed_rows + 1)
    assert created.startswith("con_") and created not in _keys(crm)


def test_references_point_at_existing_rows(crm: Synthesis) -> None:
    keys = {e.name: {r[e.pk] for r in crm.seed[e.table]} for e in crm.manifest.entities}
    checked = 0
    for entity in crm.manifest.entities:
        for column in entity.columns:
            if column.ref is None:
                continue
            for row in crm.seed[entity.table]:
                assert row[column.name] in keys[column.ref], (entity.name, column.name)
                checked += 1
    assert checked > 0


def test_rows_validate_against_the_public_schema(crm: Synthesis, payments: Synthesis) -> None:
    for synthesis in (crm, payments):
        for entity in synthesis.manifest.entities:
            validator = Draft202012Validator(entity_schema(entity))
            for row in synthesis.seed[entity.table]:
                errors = [e.message for e in validator.iter_errors(row)]
                assert not errors, (entity.name, row, errors)


def test_people_are_cast_from_the_population(crm: Synthesis) -> None:
    pop = population()
    cast = crm.cast["rows"]["contact"]
    assert crm.cast["roles"]["contact"] == "customer"
    assert crm.manifest.entity("contact").population_role == "customer"  # type: ignore[union-attr]
    emails = [r["email"] for r in crm.seed["contact"]]
    assert len(set(emails)) == len(emails)
    for row in crm.seed["contact"]:
        member = pop.get(cast[row["id"]])
        assert row["email"] == member.email and pop.by_email(row["email"]) == member
        assert row["first_name"] == member.first_name  # type: ignore[attr-defined]
        assert row["status"] in ("lead", "customer", "churned")
        if row["phone"] is not None:
            assert phonenumbers.is_valid_number(phonenumbers.parse(row["phone"]))
        if row["birthday"] is not None:
            assert row["birthday"] == member.birthday  # type: ignore[attr-defined]
        if row["score"] is not None:
            assert 0 <= row["score"] <= 10


def test_typed_values_are_valid_for_their_type(crm: Synthesis, payments: Synthesis) -> None:
    for row in crm.seed["deal"]:
        assert uuid.UUID(row["id"]).version == 4
        if row["currency"] is not None:
            assert pycountry.currencies.get(alpha_3=row["currency"]) is not None
    for row in crm.seed["company"]:
        if row["country"] is not None:
            assert pycountry.countries.get(alpha_2=row["country"]) is not None
        if row["website"] is not None:
            assert row["website"].startswith("https://www.")
    from schwifty import BIC, IBAN

    for row in payments.seed["customer"]:
        member = population().identify(row["email"])
        assert member is not None
        if row["iban"] is not None:
            assert IBAN(row["iban"]).country_code == member.country
        if row["country"] is not None:
            assert row["country"] == member.country
        if row["bic"] is not None:
            assert BIC(row["bic"]).country_code == member.country
        if row["currency"] is not None:
            assert row["currency"] == member.currency


def test_the_same_people_recur_across_services(crm: Synthesis, payments: Synthesis) -> None:
    """A customer's email in the CRM is the email of the same customer in the payment service."""
    crm_members = set(crm.cast["rows"]["contact"].values())
    pay_members = set(payments.cast["rows"]["customer"].values())
    shared = crm_members & pay_members
    assert len(shared) >= 5
    pop = population()
    crm_by_member = {crm.cast["rows"]["contact"][r["id"]]: r for r in crm.seed["contact"]}
    pay_by_member = {payments.cast["rows"]["customer"][r["id"]]: r for r in payments.seed["customer"]}
    for member_id in shared:
        assert (
            crm_by_member[member_id]["email"] == pay_by_member[member_id]["email"] == pop.get(member_id).email
        )


def test_dates_keep_their_order_and_line_items_sum(payments: Synthesis) -> None:
    for row in payments.seed["customer"]:
        if row["created_at"] and row["updated_at"]:
            assert datetime.fromisoformat(row["created_at"]) <= datetime.fromisoformat(row["updated_at"])
    for row in payments.seed["invoice"]:
        if row["issue_date"] and row["due_date"]:
            assert row["issue_date"] <= row["due_date"]
        lines = row["line_items"]
        assert lines and all(isinstance(i["quantity"], int) for i in lines)
        for item in lines:
            assert item["total_amount"] == round(item["quantity"] * item["unit_price"], 2)
        assert row["sub_total"] == round(sum(i["total_amount"] for i in lines), 2)
        assert row["total"] == round(row["sub_total"] + row["total_tax"], 2)


def test_embedded_copies_agree_with_their_foreign_key(payments: Synthesis) -> None:
    customers = {r["id"]: r for r in payments.seed["customer"]}
    checked = 0
    for row in payments.seed["invoice"]:
        target = customers[row["customer_id"]]
        if isinstance(row["customer"], dict) and "id" in row["customer"]:
            assert row["customer"]["id"] == row["customer_id"]
            for field in ("name", "email"):
                if field in row["customer"]:
                    assert row["customer"][field] == target[field]
            checked += 1
        if row["customer_name"] is not None:
            assert row["customer_name"] == target["name"]
        assert payments.cast["rows"]["invoice"][row["id"]] == payments.cast["rows"]["customer"][target["id"]]
    assert checked > 0


def test_a_column_takes_the_enum_its_list_filter_declares(payments: Synthesis) -> None:
    """Filters match the seed: ``status`` has no enum of its own, its list filter says Draft/Sent/Paid."""
    invoice = payments.manifest.entity("invoice")
    assert invoice is not None and invoice.column("status") is not None
    assert invoice.column("status").enum is None  # type: ignore[union-attr]
    values = {r["status"] for r in payments.seed["invoice"] if r["status"] is not None}
    assert values and values <= {"Draft", "Sent", "Paid"}


def test_near_duplicates_share_a_name_and_differ_in_email() -> None:
    pop = population()
    pairs = pop.near_duplicates("customer")
    assert len(pairs) >= 5
    for a, b in pairs:
        assert a.name == b.name and a.email != b.email and a.phone != b.phone
        assert {m.id for m in pop.named(a.name)} >= {a.id, b.id}
        assert pop.identify(a.email) == a and pop.identify(a.name) is None  # a name alone is ambiguous
    cast = pop.cast("customer", ("svc", "contact"), 40)
    ids = {m.id for m in cast}
    together = sum(1 for a, b in pairs if a.id in ids and b.id in ids)
    alone = sum(1 for a, b in pairs if (a.id in ids) != (b.id in ids))
    assert together >= 3 and alone <= 1


def test_a_narrow_key_pattern_seeds_as_many_distinct_rows_as_it_allows() -> None:
    entity = EntityDef(
        name="code",
        class_name="Code",
        table="code",
        pk="id",
        pk_type="string",
        id_prefix="cod",
        key_space="svc.code",
        columns=[
            ColumnDef(
                name="id",
                type="string",
                primary_key=True,
                nullable=False,
                json_schema={"type": "string", "pattern": "^[ab]{2}$"},
            ),
        ],
    )
    rows = seed_rows("svc", [entity], {"code": 10})["code"]
    assert sorted(r["id"] for r in rows) == ["aa", "ab", "ba", "bb"]


def test_seed_rows_honour_explicit_counts_and_string_references() -> None:
    parent = EntityDef(
        name="team",
        class_name="Team",
        table="team",
        pk="id",
        pk_type="integer",
        columns=[
            ColumnDef(name="id", type="integer", primary_key=True, nullable=False),
            ColumnDef(name="name", type="string"),
        ],
    )
    child = EntityDef(
        name="member",
        class_name="Member",
        table="member",
        pk="id",
        pk_type="string",
        id_prefix="mem",
        columns=[
            ColumnDef(name="id", type="string", primary_key=True, nullable=False),
            ColumnDef(name="team_ref", type="string", ref="team", nullable=False),
        ],
    )
    data = seed_data("svc", [child, parent], {"team": 3, "member": 5})
    rows = data.rows
    assert [r["id"] for r in rows["team"]] == [1, 2, 3]  # no key space: the plain sequence
    assert len(rows["member"]) == 5 and all(r["team_ref"] in {"1", "2", "3"} for r in rows["member"])
