"""MCP tools/list and OpenAI function ingestion, on fixtures and on real published MCP listings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compoworld.specs import ServiceSpec, ToolSpec, ingest_document, load_spec

FIXTURES = Path(__file__).parent / "fixtures" / "specs"
REAL = FIXTURES / "real"


def tool(spec: ServiceSpec, name: str) -> ToolSpec:
    return next(t for t in spec.tools if t.name == name)


@pytest.fixture(scope="module")
def notes() -> ServiceSpec:
    return load_spec(FIXTURES / "notes_mcp.json")


@pytest.fixture(scope="module")
def calendar() -> ServiceSpec:
    return load_spec(FIXTURES / "calendar_functions.json")


def test_mcp_service(notes: ServiceSpec) -> None:
    assert notes.source_kind == "mcp"
    assert notes.name == "notes"
    assert [t.name for t in notes.tools] == [
        "create_note",
        "get_note",
        "list_notes",
        "update_note",
        "delete_note",
        "create_task",
        "list_tasks",
        "complete_task",
    ]
    assert all(t.method is None and t.path is None for t in notes.tools)
    assert tool(notes, "get_note").pointer == "/tools/1"


def test_mcp_params_are_args_with_required_and_semantics(notes: ServiceSpec) -> None:
    create = tool(notes, "create_note")
    assert [(p.name, p.location, p.required, p.semantic) for p in create.params] == [
        ("title", "arg", True, "title"),
        ("content", "arg", True, "text"),
        ("notebook_id", "arg", False, "id:notebook"),
        ("tags", "arg", False, None),
    ]
    assert create.input_schema["required"] == ["title", "content"]
    assert tool(notes, "get_note").params[0].semantic == "id:note"
    assert tool(notes, "complete_task").params[0].semantic == "id:task"


def test_mcp_output_schema_gives_response_fields(notes: ServiceSpec) -> None:
    create = tool(notes, "create_note")
    assert create.output_schema is not None
    assert [(f.name, f.required, f.semantic) for f in create.response_fields] == [
        ("id", True, "id:note"),
        ("title", False, "title"),
        ("created_at", False, "date-time"),
    ]


def test_mcp_local_defs_resolve_and_recursion_is_cut(notes: ServiceSpec) -> None:
    task = tool(notes, "create_task")
    by_name = {p.name: p for p in task.params}
    assert by_name["priority"].json_schema == {"type": "string", "enum": ["low", "normal", "high"]}
    item = by_name["checklist"].json_schema["items"]
    assert item["properties"]["text"] == {"type": "string"}
    assert item["properties"]["subitems"]["items"] == {"type": "object", "x-recursive": True}
    assert "$defs" not in json.dumps(task.input_schema)
    assert by_name["assignee_email"].semantic == "email"


def test_mcp_shapes_are_equivalent(notes: ServiceSpec) -> None:
    doc = json.loads((FIXTURES / "notes_mcp.json").read_text())
    bare = ingest_document(doc["tools"], "bare.json", name="notes")
    rpc = ingest_document(
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": doc["tools"]}}, "rpc.json", name="notes"
    )
    assert [t.params for t in bare.tools] == [t.params for t in notes.tools]
    assert [t.params for t in rpc.tools] == [t.params for t in notes.tools]
    assert rpc.tools[0].pointer == "/result/tools/0"


def test_functions_service(calendar: ServiceSpec) -> None:
    assert calendar.source_kind == "functions"
    assert calendar.name == "calendar"
    assert [t.name for t in calendar.tools] == [
        "create_event",
        "list_events",
        "get_event",
        "update_event",
        "delete_event",
    ]
    create = tool(calendar, "create_event")
    semantics = {p.name: p.semantic for p in create.params}
    assert semantics == {
        "title": "title",
        "start": "date-time",
        "end": "date-time",
        "timezone": "timezone",
        "location": None,
        "attendees": "email",
        "organizer_email": "email",
        "description": "text",
        "budget": "money",
        "currency": "currency",
    }
    assert create.input_schema["required"] == ["title", "start", "end"]
    assert tool(calendar, "get_event").params[0].semantic == "id:event"
    assert create.pointer == "/0/function"


def _function_shapes(raw: list[dict[str, Any]]) -> list[Any]:
    bare = [item["function"] for item in raw]
    return [raw, bare, {"functions": bare}, {"tools": raw}]


def test_function_shapes_are_equivalent(calendar: ServiceSpec) -> None:
    raw = json.loads((FIXTURES / "calendar_functions.json").read_text())
    for shape in _function_shapes(raw):
        spec = ingest_document(shape, "calendar_functions.json")
        assert spec.source_kind == "functions"
        assert [t.params for t in spec.tools] == [t.params for t in calendar.tools]


@pytest.mark.parametrize(
    ("file", "name", "n_tools"),
    [
        ("compoworld_mcp_brevo.json", "brevo", 4),
        ("compoworld_mcp_neon.json", "neon", 3),
        ("compoworld_mcp_eraser.json", "eraser", 4),
        ("compoworld_mcp_kit.json", "kit", 3),
    ],
)
def test_real_mcp_listings_ingest(file: str, name: str, n_tools: int) -> None:
    spec = load_spec(REAL / file)
    assert spec.name == name
    assert len(spec.tools) == n_tools
    for t in spec.tools:
        assert t.input_schema["type"] == "object"
        assert set(t.input_schema["required"]) <= set(t.input_schema["properties"])


def test_real_quirks_are_kept_as_found() -> None:
    brevo = load_spec(REAL / "compoworld_mcp_brevo.json")
    contacts = tool(brevo, "contacts")
    assert all(p.required for p in contacts.params)
    eraser = load_spec(REAL / "compoworld_mcp_eraser.json")
    search = tool(eraser, "eraser__search")
    assert search.original_name is None
    create = tool(eraser, "create")
    parent = next(p for p in create.params if p.name == "parentFolderId")
    assert parent.json_schema["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert parent.semantic == "id:folder"
    kit = load_spec(REAL / "compoworld_mcp_kit.json")
    subscribers = tool(kit, "kit_list_subscribers")
    email = next(p for p in subscribers.params if p.name == "email_address")
    assert email.json_schema["nullable"] is True and email.json_schema["examples"]
    assert email.semantic == "email"
    neon = load_spec(REAL / "compoworld_mcp_neon.json")
    assert [p.semantic for p in tool(neon, "create_branch").params] == ["id:project", None, "id:branch"]


def test_name_override() -> None:
    spec = load_spec(REAL / "compoworld_mcp_neon.json", name="Neon Postgres")
    assert spec.name == "neon_postgres"
