"""Seed data: deterministic, schema-conforming, referentially consistent, plausible."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from compoworld.manifest import ColumnDef, EntityDef
from compoworld.specs import ingest_document
from compoworld.synth.outputs import entity_schema
from compoworld.synth.pipeline import Synthesis, synthesize
from compoworld.synth.seed import seed_rows

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


def _digest(rows: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def test_seed_is_deterministic_across_runs(crm: Synthesis) -> None:
    again = synthesize(ingest_document(CRM, "crm.json", name="crm"))
    assert _digest(again.seed) == _digest(crm.seed)
    other = synthesize(ingest_document(CRM, "crm.json", name="crm_two"))
    assert _digest(other.seed) != _digest(crm.seed)


def test_every_entity_gets_a_few_dozen_rows_with_sequential_keys(crm: Synthesis) -> None:
    for entity in crm.manifest.entities:
        rows = crm.seed[entity.table]
        assert 24 <= len(rows) <= 40 and entity.seed_rows == len(rows)
        keys = [r[entity.pk] for r in rows]
        assert len(set(keys)) == len(keys)
        if entity.pk_type == "integer":
            assert keys == list(range(1, len(rows) + 1))
    contact_keys = [r["id"] for r in crm.seed["contact"]]
    assert contact_keys[0] == "con_000001" and all(re.fullmatch(r"con_\d{6}", k) for k in contact_keys)


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


def test_rows_validate_against_the_public_schema(crm: Synthesis) -> None:
    for entity in crm.manifest.entities:
        validator = Draft202012Validator(entity_schema(entity))
        for row in crm.seed[entity.table]:
            errors = [e.message for e in validator.iter_errors(row)]
            assert not errors, (entity.name, row, errors)


def test_values_are_plausible_for_their_meaning(crm: Synthesis) -> None:
    contacts = crm.seed["contact"]
    emails = [r["email"] for r in contacts]
    assert len(set(emails)) == len(emails)
    for row in contacts:
        assert re.fullmatch(r"[a-z0-9.]+@[a-z0-9.-]+\.[a-z]{2,}", row["email"])
        assert row["email"].startswith(row["first_name"].lower())
        assert row["status"] in ("lead", "customer", "churned")
        if row["birthday"] is not None:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["birthday"])
        if row["score"] is not None:
            assert 0 <= row["score"] <= 10
        assert isinstance(row["address"], dict) and "city" in row["address"]
    for row in crm.seed["deal"]:
        assert uuid.UUID(row["id"]).version == 4
        if row["amount"] is not None:
            assert round(row["amount"], 2) == row["amount"]
        if row["currency"] is not None:
            assert re.fullmatch(r"[A-Z]{3}", row["currency"])
        if row["close_date"] is not None:
            assert row["close_date"].startswith(("2025-", "2026-"))
    for row in crm.seed["company"]:
        if row["country"] is not None:
            assert re.fullmatch(r"[A-Z]{2}", row["country"])
        if row["website"] is not None:
            assert row["website"].startswith("https://")


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
    rows = seed_rows("svc", [child, parent], {"team": 3, "member": 5})
    assert [r["id"] for r in rows["team"]] == [1, 2, 3]
    assert len(rows["member"]) == 5 and all(r["team_ref"] in {"1", "2", "3"} for r in rows["member"])
