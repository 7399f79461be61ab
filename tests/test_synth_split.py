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


def _cross_referencing() -> dict[str, Any]:
    """Two tags whose operations reuse each other's parameters and responses by ``#/paths/...`` refs
    (as DigitalOcean's document does), one of them through a percent-encoded path, plus a path
    item that is a ``$ref`` into ``components/pathItems``."""
    paths: dict[str, Any] = {}
    for i in range(6):
        paths[f"/keys/{i}"] = {"get": _op(f"keys_{i}", "keys")}
    paths["/keys/{key_id}"] = {
        "delete": {**_op("keys_delete", "keys"), "responses": {"204": {"description": "gone"}}}
    }
    paths["/keys/0"]["get"]["parameters"] = [
        {"name": "per_page", "in": "query", "schema": {"$ref": "#/components/schemas/PerPage"}}
    ]
    paths["/keys/0"]["get"]["responses"]["401"] = {"$ref": "#/components/responses/Unauthorized"}
    for i in range(6):
        paths[f"/volumes/{i}"] = {
            "get": {
                **_op(f"volumes_{i}", "volumes"),
                "parameters": [{"$ref": "#/paths/~1keys~10/get/parameters/0"}],
            }
        }
        paths[f"/volumes/{i}"]["get"]["responses"]["401"] = {"$ref": "#/paths/~1keys~10/get/responses/401"}
    paths["/volumes/1"]["get"]["responses"]["204"] = {
        "$ref": "#/paths/~1keys~1%7Bkey_id%7D/delete/responses/204"
    }
    paths["/volumes/shared"] = {"$ref": "#/components/pathItems/Shared"}
    doc = _doc(paths, {"PerPage": {"type": "integer", "maximum": 200}, "Unused": {"type": "object"}})
    doc["openapi"] = "3.1.0"
    doc["components"]["responses"] = {"Unauthorized": {"description": "no"}}
    doc["components"]["pathItems"] = {"Shared": {"get": _op("volumes_shared", "volumes")}}
    return doc


def test_a_part_carries_what_its_operations_reference_inside_another_parts_path_items() -> None:
    doc = _cross_referencing()
    parts = {p.key: p for p in split_plan(doc, max_tools=8) or []}
    assert set(parts) == {"key", "volume"}
    assert ("/volumes/shared", "get") in parts["volume"].operations  # a path item behind a $ref counts
    volume = part_document(doc, parts["volume"], len(parts))
    assert not any(p.startswith("/keys") for p in volume["paths"])  # carried in place, not as operations
    assert sorted(volume["components"]["schemas"]) == ["PerPage"]  # reached through the carried parameter
    assert sorted(volume["components"]["responses"]) == ["Unauthorized"]
    for key, part in parts.items():
        sub = json.loads(json.dumps(part_document(doc, part, len(parts))))
        spec = ingest_document(sub, "part.json", name=f"big_{key}")
        assert not spec.defects
        assert sorted(t.name for t in spec.tools) == sorted(
            doc["paths"].get(path, {}).get(method, {}).get("operationId")
            or f"volumes_{path.rsplit('/', 1)[1]}"
            for path, method in part.operations
        )
    tools = {t.name: t for t in ingest_document(json.loads(json.dumps(volume)), "v.json", name="v").tools}
    assert "per_page" in json.dumps(tools["volumes_3"].model_dump(mode="json"))


def test_an_untagged_operation_goes_with_the_nearest_tagged_path_above_it() -> None:
    """Graph tags no ``/.../$count``: it joins the part of the collection it counts."""
    doc = _tagged()
    for i in range(3):
        doc["paths"][f"/users/calendar/{i}/$count"] = {"get": _op(f"count_calendar_{i}")}
    doc["paths"]["/users/mail/0/$count"] = {"get": _op("count_mail")}
    parts = {p.key: p for p in split_plan(doc, max_tools=40) or []}
    assert ("/users/calendar/2/$count", "get") in parts["user_calendar"].operations
    assert ("/users/mail/0/$count", "get") in parts["user_mail"].operations
    held = [op for p in parts.values() for op in p.operations]
    assert len(held) == len(set(held)) == count_operations(doc)
