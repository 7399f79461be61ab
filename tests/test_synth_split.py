"""Splitting huge documents: every operation lands in exactly one part, parts are named and stand alone."""

from __future__ import annotations

import json
from typing import Any

from compoworld.specs import ingest_document
from compoworld.synth.split import count_operations, part_document, split_plan


def _op(op_id: str, tag: str | None = None, ref: str | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": op_id, "responses": {"200": {"description": "ok"}}}
    if tag:
        op["tags"] = [tag]
    if ref:
        op["responses"]["200"]["content"] = {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}
        }
    return op


def _doc(paths: dict[str, Any], schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "Big", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": schemas or {},
            "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "k"}},
        },
    }


def _tagged() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for tag, n in (
        ("users.calendar", 30),
        ("users.mail", 25),
        ("me.calendar", 30),
        ("groups", 12),
        ("misc", 2),
    ):
        for i in range(n):
            ref = "Event" if "calendar" in tag else "Message" if "mail" in tag else None
            paths[f"/{tag.replace('.', '/')}/{i}"] = {"get": _op(f"{tag}_{i}", tag, ref)}
    schemas = {
        "Event": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "where": {"$ref": "#/components/schemas/Place"}},
        },
        "Place": {"type": "object", "properties": {"name": {"type": "string"}}},
        "Message": {"type": "object", "properties": {"subject": {"type": "string"}}},
        "Unused": {"type": "object"},
    }
    return _doc(paths, schemas)


def test_a_document_within_the_limit_is_not_split() -> None:
    assert split_plan(_tagged(), max_tools=500) is None


def test_parts_follow_tags_hold_every_operation_once_and_stay_under_the_limit() -> None:
    doc = _tagged()
    parts = split_plan(doc, max_tools=40)
    assert parts is not None
    assert {p.key for p in parts} == {"user_calendar", "user_mail", "me_calendar", "group", "other"}
    assert all(len(p.operations) <= 40 for p in parts)
    held = [op for p in parts for op in p.operations]
    assert len(held) == len(set(held)) == count_operations(doc)


def test_a_part_is_a_document_with_only_the_components_it_reaches() -> None:
    doc = _tagged()
    parts = {p.key: p for p in split_plan(doc, max_tools=40) or []}
    sub = part_document(doc, parts["user_calendar"], len(parts))
    assert sorted(sub["components"]["schemas"]) == ["Event", "Place"]  # Place only through Event
    assert "securitySchemes" in sub["components"]
    assert sub["info"]["title"] == "Big (user calendar)"
    assert sub["info"]["x-compoworld-part"]["key"] == "user_calendar"
    spec = ingest_document(json.loads(json.dumps(sub)), "part.json", name="big_user_calendar")
    assert len(spec.tools) == 30


def test_query_style_actions_split_by_the_noun_they_act_on() -> None:
    paths: dict[str, Any] = {}
    for verb in ("Describe", "Create", "Delete", "Modify", "Attach"):
        for noun in ("Volumes", "Snapshots", "TransitGatewayRouteTables"):
            name = verb + (noun if verb == "Describe" else noun.rstrip("s"))
            paths[f"/#Action={name}"] = {"post": _op(name)}
    parts = split_plan(_doc(paths), max_tools=8)
    assert parts is not None
    assert {p.key for p in parts} == {"volume", "snapshot", "transit_gateway_route_table"}


def test_untagged_documents_split_by_resource_path() -> None:
    paths = {
        f"/v1/{res}/{{id}}/item{i}": {"get": _op(f"{res}{i}")}
        for res in ("customers", "invoices")
        for i in range(6)
    }
    parts = split_plan(_doc(paths), max_tools=8)
    assert parts is not None and {p.key for p in parts} == {"customers", "invoices"}
