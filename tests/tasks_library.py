"""A small hand-built library of four cross-linked services for graph/task/rubric tests.

crm (contacts, companies) -> billing (invoices by customer email) -> calendar (events by
attendee email and date) -> mailer (implemented messages + a simulated notification
action). Independent of synthesis, like tests/runtime_fixture.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from compoworld.manifest import ColumnDef, EntityDef, ServiceManifest, ToolDef

__all__ = ["LIBRARY", "crud_tools", "write_library", "write_service"]

_JSON = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean", "json": "array"}


def _col(name: str, type_: str = "string", **kw: Any) -> ColumnDef:
    return ColumnDef(name=name, type=type_, **kw)  # type: ignore[arg-type]


def _schema(c: ColumnDef) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _JSON[c.type]}
    if c.type == "json":
        out["items"] = {"type": "string"}
    if c.enum:
        out["enum"] = c.enum
    if c.format:
        out["format"] = c.format
    return out


def crud_tools(entity: EntityDef, path: str, filters: list[str], search: bool = True) -> list[ToolDef]:
    """create/get/list/update/delete tools for an entity, with arg semantics filled in."""
    cap = entity.class_name
    settable = [c for c in entity.columns if not c.read_only and not c.primary_key]
    props = {c.name: _schema(c) for c in settable}
    sems = {c.name: c.semantic for c in settable if c.semantic}
    required = [c.name for c in settable if not c.nullable]
    row = {"type": "object", "properties": {c.name: _schema(c) for c in entity.columns}}
    pk_schema = {"type": "integer" if entity.pk_type == "integer" else "string"}
    pk_sem = {"id": f"id:{entity.name}"}
    list_props: dict[str, Any] = {f: props.get(f, _schema(entity.column(f))) for f in filters}  # type: ignore[arg-type]
    list_props["limit"] = {"type": "integer", "minimum": 1}
    if search:
        list_props["q"] = {"type": "string"}
    common: dict[str, Any] = {"backend": "implemented", "entity": entity.name}
    return [
        ToolDef(
            name=f"create{cap}",
            kind="write",
            operation="create",
            method="POST",
            path=path,
            input_schema={
                "type": "object",
                "properties": props,
                "required": required,
                "additionalProperties": False,
            },
            output_schema=row,
            arg_columns={k: k for k in props},
            arg_semantics=sems,
            arg_locations={k: "body" for k in props},
            description=f"Create a {entity.name}.",
            **common,
        ),
        ToolDef(
            name=f"get{cap}",
            kind="read",
            operation="read",
            method="GET",
            path=f"{path}/{{id}}",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": {"id": pk_schema},
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema=row,
            arg_semantics=pk_sem,
            arg_locations={"id": "path"},
            description=f"Get one {entity.name} by id.",
            **common,
        ),
        ToolDef(
            name=f"list{cap}s",
            kind="read",
            operation="list",
            method="GET",
            path=path,
            limit_arg="limit",
            search_arg="q" if search else None,
            input_schema={"type": "object", "properties": list_props, "additionalProperties": False},
            output_schema={
                "type": "object",
                "properties": {"items": {"type": "array", "items": row}, "total": {"type": "integer"}},
            },
            arg_columns={f: f for f in filters},
            arg_semantics={f: sems[f] for f in filters if f in sems},
            arg_locations={k: "query" for k in list_props},
            description=f"List {entity.name}s.",
            **common,
        ),
        ToolDef(
            name=f"update{cap}",
            kind="write",
            operation="update",
            method="PATCH",
            path=f"{path}/{{id}}",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": {"id": pk_schema, **props},
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema=row,
            arg_columns={k: k for k in props},
            arg_semantics={**pk_sem, **sems},
            arg_locations={"id": "path", **{k: "body" for k in props}},
            description=f"Update a {entity.name}.",
            **common,
        ),
        ToolDef(
            name=f"delete{cap}",
            kind="write",
            operation="delete",
            method="DELETE",
            path=f"{path}/{{id}}",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": {"id": pk_schema},
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema={"type": "object"},
            arg_semantics=pk_sem,
            arg_locations={"id": "path"},
            description=f"Delete a {entity.name}.",
            **common,
        ),
    ]


def _entity(
    name: str, pk_type: Literal["integer", "string"], prefix: str, columns: list[ColumnDef], label: str
) -> EntityDef:
    pk = _col(
        "id",
        "integer" if pk_type == "integer" else "string",
        primary_key=True,
        nullable=False,
        read_only=True,
        semantic=f"id:{name}",
    )
    return EntityDef(
        name=name,
        class_name=name.title().replace("_", ""),
        table=name,
        pk="id",
        pk_type=pk_type,
        id_prefix=prefix,
        columns=[pk, *columns],
        label_column=label,
    )


_FIRST = ["Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kira", "Liam"]
_LAST = [
    "Chen",
    "Brooks",
    "Alvarez",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ivanova",
    "Jensen",
    "Kim",
    "Larsen",
]
PEOPLE = [(f"{f} {ln}", f"{f.lower()}.{ln.lower()}@example.com") for f, ln in zip(_FIRST, _LAST, strict=True)]


def crm() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    company = _entity(
        "company",
        "integer",
        "",
        [
            _col("name", nullable=False, semantic="company_name"),
            _col("country", semantic="country"),
        ],
        "name",
    )
    contact = _entity(
        "contact",
        "string",
        "con",
        [
            _col("name", nullable=False, semantic="person_name"),
            _col("email", format="email", semantic="email"),
            _col("phone", semantic="phone"),
            _col("company_id", "integer", ref="company", semantic="id:company"),
            _col("status", enum=["lead", "customer"], semantic="status"),
            _col("created_at", format="date-time", read_only=True, semantic="date-time"),
        ],
        "name",
    )
    tools = crud_tools(company, "/companies", ["country"]) + crud_tools(
        contact, "/contacts", ["email", "status", "company_id"]
    )
    manifest = ServiceManifest(
        name="crm", title="Acme CRM", domain="crm", entities=[company, contact], tools=tools
    )
    countries = ["DE", "FR", "US", "JP", "BR"]
    seed: dict[str, list[dict[str, Any]]] = {
        "company": [
            {"id": i + 1, "name": f"{w} Ltd", "country": countries[i]}
            for i, w in enumerate(["Cedar", "Ember", "Falcon", "Garnet", "Harbor"])
        ],
        "contact": [
            {
                "id": f"con_{i + 1:06d}",
                "name": n,
                "email": e,
                "phone": f"+1555000{i:04d}",
                "company_id": 1 + i % 5,
                "status": "lead" if i % 3 else "customer",
                "created_at": "2026-01-02T09:00:00Z",
            }
            for i, (n, e) in enumerate(PEOPLE)
        ],
    }
    return manifest, seed


def billing() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    invoice = _entity(
        "invoice",
        "string",
        "inv",
        [
            _col("customer_email", format="email", nullable=False, semantic="email"),
            _col("amount", "number", nullable=False, semantic="money"),
            _col("currency", nullable=False, enum=["USD", "EUR", "GBP"], semantic="currency"),
            _col("due_date", format="date", semantic="date"),
            _col("status", enum=["draft", "open", "paid"], semantic="status"),
            _col("description", semantic="text"),
        ],
        "description",
    )
    tools = crud_tools(invoice, "/invoices", ["customer_email", "status", "currency"])
    manifest = ServiceManifest(
        name="billing", title="Ledger Billing", domain="finance", entities=[invoice], tools=tools
    )
    words = ["Consulting", "Hosting", "Licence", "Support", "Training", "Audit", "Design"]
    seed: dict[str, list[dict[str, Any]]] = {
        "invoice": [
            {
                "id": f"inv_{i + 1:06d}",
                "customer_email": PEOPLE[(i * 5) % 12][1],
                "amount": round(100 + i * 37.25, 2),
                "currency": ["USD", "EUR", "GBP"][i % 3],
                "due_date": f"2026-0{1 + i % 6}-{10 + i % 18:02d}",
                "status": ["draft", "open", "paid"][i % 3],
                "description": f"{words[i % 7]} services batch {i + 1}",
            }
            for i in range(20)
        ]
    }
    return manifest, seed


def calendar() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    event = _entity(
        "event",
        "integer",
        "",
        [
            _col("title", nullable=False, semantic="title"),
            _col("attendee_email", format="email", semantic="email"),
            _col("date", format="date", nullable=False, semantic="date"),
            _col("duration_min", "integer"),
        ],
        "title",
    )
    tools = crud_tools(event, "/events", ["attendee_email", "date"])
    invite_props = {"event_id": {"type": "integer"}, "email": {"type": "string", "format": "email"}}
    tools.append(
        ToolDef(
            name="inviteAttendee",
            kind="write",
            operation="action",
            backend="simulated",
            simulated_reason="action",
            method="POST",
            path="/events/{event_id}/invite",
            description="Send a calendar invitation for an event.",
            input_schema={
                "type": "object",
                "properties": invite_props,
                "required": ["event_id", "email"],
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {
                    "invitation_id": {"type": "string"},
                    "status": {"type": "string", "enum": ["sent"]},
                },
                "required": ["invitation_id", "status"],
            },
            arg_semantics={"event_id": "id:event", "email": "email"},
            arg_locations={"event_id": "path", "email": "body"},
            output_semantics={"invitation_id": "id:invitation"},
        )
    )
    manifest = ServiceManifest(
        name="calendar", title="Team Calendar", domain="productivity", entities=[event], tools=tools
    )
    topics = ["Kickoff", "Review", "Planning", "Retro", "Demo"]
    seed: dict[str, list[dict[str, Any]]] = {
        "event": [
            {
                "id": i + 1,
                "title": f"{topics[i % 5]} #{i + 1}",
                "attendee_email": PEOPLE[(i * 7) % 12][1],
                "date": f"2026-02-{1 + i:02d}",
                "duration_min": 30 + 15 * (i % 4),
            }
            for i in range(15)
        ]
    }
    return manifest, seed


def mailer() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    message = _entity(
        "message",
        "string",
        "msg",
        [
            _col("to", format="email", nullable=False, semantic="email"),
            _col("subject", nullable=False, semantic="title"),
            _col("body", semantic="text"),
            _col("sent_at", format="date-time", read_only=True, semantic="date-time"),
        ],
        "subject",
    )
    tools = crud_tools(message, "/messages", ["to"])
    tools = [t for t in tools if t.operation != "update"]
    notify_props = {"recipient": {"type": "string", "format": "email"}, "text": {"type": "string"}}
    tools.append(
        ToolDef(
            name="sendNotification",
            kind="write",
            operation="action",
            backend="simulated",
            simulated_reason="action",
            method="POST",
            path="/notify",
            description="Send a push notification to a person.",
            input_schema={
                "type": "object",
                "properties": notify_props,
                "required": ["recipient", "text"],
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {"notification_id": {"type": "string"}, "recipient": {"type": "string"}},
                "required": ["notification_id", "recipient"],
            },
            arg_semantics={"recipient": "email", "text": "text"},
            arg_locations={"recipient": "body", "text": "body"},
            output_semantics={"notification_id": "id:notification"},
        )
    )
    manifest = ServiceManifest(
        name="mailer", title="Postbox Mailer", domain="communication", entities=[message], tools=tools
    )
    seed: dict[str, list[dict[str, Any]]] = {
        "message": [
            {
                "id": f"msg_{i + 1:06d}",
                "to": PEOPLE[(i * 3) % 12][1],
                "subject": f"Update {i + 1}",
                "body": f"Status note number {i + 1}",
                "sent_at": "2026-01-05T08:00:00Z",
            }
            for i in range(8)
        ]
    }
    return manifest, seed


LIBRARY = {"crm": crm, "billing": billing, "calendar": calendar, "mailer": mailer}


def write_service(root: Path, manifest: ServiceManifest, seed: dict[str, list[dict[str, Any]]]) -> Path:
    folder = root / manifest.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(manifest.model_dump_json(indent=1))
    (folder / "seed.json").write_text(json.dumps(seed, indent=1, sort_keys=True))
    return folder


def write_library(root: Path, names: list[str] | None = None) -> Path:
    """Write the chosen services (default: all four) under ``root`` and return it."""
    for name in names or sorted(LIBRARY):
        write_service(root, *LIBRARY[name]())
    return root
