"""A small hand-written service manifest for runtime tests (independent of synthesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compoworld.manifest import ColumnDef, EntityDef, ServiceManifest, ToolDef

CONTACT_PROPS: dict[str, Any] = {
    "name": {"type": "string"},
    "email": {"type": "string", "format": "email"},
    "company_id": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "status": {"type": "string", "enum": ["lead", "customer"]},
}


def crm_manifest() -> ServiceManifest:
    company = EntityDef(
        name="company",
        class_name="Company",
        table="company",
        pk="id",
        pk_type="integer",
        columns=[
            ColumnDef(name="id", type="integer", primary_key=True, nullable=False, read_only=True),
            ColumnDef(name="name", type="string", semantic="company_name"),
        ],
    )
    contact = EntityDef(
        name="contact",
        class_name="Contact",
        table="contact",
        pk="id",
        pk_type="string",
        id_prefix="con",
        columns=[
            ColumnDef(name="id", type="string", primary_key=True, nullable=False, read_only=True),
            ColumnDef(name="name", type="string", nullable=False),
            ColumnDef(name="email", type="string", format="email", semantic="email"),
            ColumnDef(name="company_id", type="integer", ref="company", semantic="id:company"),
            ColumnDef(name="tags", type="json"),
            ColumnDef(name="status", type="string", enum=["lead", "customer"]),
            ColumnDef(name="created_at", type="string", format="date-time", read_only=True),
        ],
    )
    contact_schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            **CONTACT_PROPS,
            "created_at": {"type": "string", "format": "date-time"},
        },
    }
    id_arg = {"id": {"type": "string"}}
    tools = [
        ToolDef(
            name="createContact",
            kind="write",
            operation="create",
            backend="implemented",
            entity="contact",
            method="POST",
            path="/contacts",
            input_schema={
                "type": "object",
                "properties": CONTACT_PROPS,
                "required": ["name"],
                "additionalProperties": False,
            },
            output_schema=contact_schema,
            arg_locations={k: "body" for k in CONTACT_PROPS},
            arg_columns={k: k for k in CONTACT_PROPS},
        ),
        ToolDef(
            name="getContact",
            kind="read",
            operation="read",
            backend="implemented",
            entity="contact",
            method="GET",
            path="/contacts/{id}",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": id_arg,
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema=contact_schema,
            arg_locations={"id": "path"},
        ),
        ToolDef(
            name="listContacts",
            kind="read",
            operation="list",
            backend="implemented",
            entity="contact",
            method="GET",
            path="/contacts",
            limit_arg="limit",
            search_arg="q",
            input_schema={
                "type": "object",
                "properties": {
                    "limit": {"type": "integer"},
                    "q": {"type": "string"},
                    "status": {"type": "string"},
                },
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {
                    "items": {"type": "array", "items": contact_schema},
                    "total": {"type": "integer"},
                },
            },
            arg_locations={"limit": "query", "q": "query", "status": "query"},
            arg_columns={"status": "status"},
        ),
        ToolDef(
            name="updateContact",
            kind="write",
            operation="update",
            backend="implemented",
            entity="contact",
            method="PATCH",
            path="/contacts/{id}",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": {**id_arg, **CONTACT_PROPS},
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema=contact_schema,
            arg_locations={"id": "path", **{k: "body" for k in CONTACT_PROPS}},
            arg_columns={k: k for k in CONTACT_PROPS},
        ),
        ToolDef(
            name="deleteContact",
            kind="write",
            operation="delete",
            backend="implemented",
            entity="contact",
            method="DELETE",
            path="/contacts/{id}",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": id_arg,
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema={"type": "object"},
            arg_locations={"id": "path"},
        ),
        ToolDef(
            name="sendEmail",
            kind="write",
            operation="action",
            backend="simulated",
            simulated_reason="action",
            method="POST",
            path="/email",
            input_schema={
                "type": "object",
                "properties": {"to": {"type": "string"}, "subject": {"type": "string"}},
                "required": ["to", "subject"],
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {
                    "message_id": {"type": "string"},
                    "to": {"type": "string"},
                    "status": {"type": "string", "enum": ["queued", "sent"]},
                },
                "required": ["message_id", "to", "status"],
            },
            arg_locations={"to": "body", "subject": "body"},
        ),
        ToolDef(
            name="getEmail",
            kind="read",
            operation="action",
            backend="simulated",
            simulated_reason="action",
            method="GET",
            path="/email/{message_id}",
            input_schema={
                "type": "object",
                "properties": {"message_id": {"type": "string"}},
                "required": ["message_id"],
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {
                    "message_id": {"type": "string"},
                    "to": {"type": "string"},
                    "subject": {"type": "string"},
                },
                "required": ["message_id", "to", "subject"],
            },
            arg_locations={"message_id": "path"},
        ),
    ]
    return ServiceManifest(
        name="crm", title="Test CRM", entities=[company, contact], tools=tools, domain="crm"
    )


def crm_seed() -> dict[str, list[dict[str, Any]]]:
    companies = [{"id": i, "name": f"Company {i}"} for i in range(1, 6)]
    contacts = [
        {
            "id": f"con_{i:06d}",
            "name": f"Person {i}",
            "email": f"person{i}@example.com",
            "company_id": 1 + i % 5,
            "tags": ["a"],
            "status": "lead" if i % 2 else "customer",
            "created_at": "2026-01-01T10:00:00Z",
        }
        for i in range(1, 31)
    ]
    return {"company": companies, "contact": contacts}


def write_crm_service(root: Path) -> Path:
    folder = root / "crm"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(crm_manifest().model_dump_json(indent=2))
    (folder / "seed.json").write_text(json.dumps(crm_seed(), indent=2, sort_keys=True))
    return folder
