"""Operations read by their names that address a row by a bare ``Name`` or ``arn`` (AWS's JSON
protocol: ``GetTrigger {Name}``, ``DeleteTrigger {Name}``, ``UpdateTrigger {Name, ...}``).

Where no argument of any tool names the entity's key otherwise (``TriggerId``, ``id``), the one
bare name the operation requires is the row's key; where one does (``GetRun {Name, RunId}``),
the bare name is left alone. Built from inline documents (real synthesis and verification),
called over real HTTP (ASGI) with real SQLite state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compoworld.manifest import load_manifest
from tests.inline_service import build_inline
from tests.service_http import EpisodeClient
from tests.spec_parts import amz_target_op

_TRIGGER = {
    "type": "object",
    "properties": {
        "Id": {"type": "string"},
        "Name": {"type": "string"},
        "Schedule": {"type": "string"},
        "State": {"type": "string", "enum": ["CREATED", "ACTIVATED", "DEACTIVATED"]},
    },
}


def _op(service: str, name: str, body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    return amz_target_op(f"{service}.{name}", body, answer)


def _named(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": props}


def _triggers() -> dict[str, Any]:
    name = {"type": "string", "minLength": 1, "maxLength": 255}
    paths: dict[str, Any] = {}
    paths |= _op(
        "Glue",
        "CreateTrigger",
        _named(["Name", "Schedule"], Name=name, Schedule={"type": "string"}),
        _named([], Name=name),
    )
    paths |= _op("Glue", "GetTrigger", _named(["Name"], Name=name), _named([], Trigger=_TRIGGER))
    paths |= _op(
        "Glue",
        "UpdateTrigger",
        _named(["Name"], Name=name, Schedule={"type": "string"}),
        _named([], Trigger=_TRIGGER),
    )
    paths |= _op("Glue", "DeleteTrigger", _named(["Name"], Name=name), _named([], Name=name))
    paths |= _op(
        "Glue",
        "ListTriggers",
        _named([], MaxResults={"type": "integer"}, NextToken={"type": "string"}),
        _named([], Triggers={"type": "array", "items": _TRIGGER}, NextToken={"type": "string"}),
    )
    return {"openapi": "3.0.0", "info": {"title": "Glue", "version": "2017-03-31"}, "paths": paths}


def _runs() -> dict[str, Any]:
    """Runs of a workflow: ``Name`` is the workflow's, ``RunId`` the run's own key."""
    run = {
        "type": "object",
        "properties": {
            "Name": {"type": "string"},
            "WorkflowRunId": {"type": "string"},
            "Status": {"type": "string"},
        },
    }
    ids = _named(["Name", "RunId"], Name={"type": "string"}, RunId={"type": "string"})
    paths: dict[str, Any] = {}
    paths |= _op("Glue", "GetWorkflowRun", ids, _named([], Run=run))
    paths |= _op("Glue", "GetWorkflowRuns", _named(["Name"], Name={"type": "string"}), _named([], Runs=run))
    paths |= _op("Glue", "DeleteWorkflowRun", ids, {"type": "object"})
    return {"openapi": "3.0.0", "info": {"title": "Runs", "version": "1"}, "paths": paths}


def test_a_bare_name_keys_the_row_and_every_operation_is_served_from_state(tmp_path: Path) -> None:
    folder = build_inline(tmp_path, "glue", _triggers())
    manifest = load_manifest(folder)
    tools = {t.name: t for t in manifest.tools}
    assert {n: t.backend for n, t in tools.items()} == dict.fromkeys(
        ["CreateTrigger", "GetTrigger", "UpdateTrigger", "DeleteTrigger", "ListTriggers"], "implemented"
    )
    assert [tools[n].pk_arg for n in ("GetTrigger", "UpdateTrigger", "DeleteTrigger")] == ["Name"] * 3
    trigger = next(e for e in manifest.entities if e.name == "trigger")
    assert (trigger.column(trigger.pk).source_name or trigger.pk) == "Name"

    client = EpisodeClient(folder)
    made = client.amz("Glue.CreateTrigger", {"Name": "nightly-load", "Schedule": "cron(0 2 * * ? *)"})
    assert made.status_code == 200, made.text
    assert made.json() == {"Name": "nightly-load"}
    got = client.amz("Glue.GetTrigger", {"Name": "nightly-load"}).json()["Trigger"]
    assert got["Name"] == "nightly-load" and got["Schedule"] == "cron(0 2 * * ? *)"
    changed = client.amz("Glue.UpdateTrigger", {"Name": "nightly-load", "Schedule": "cron(0 3 * * ? *)"})
    assert changed.status_code == 200, changed.text
    again = client.amz("Glue.GetTrigger", {"Name": "nightly-load"}).json()["Trigger"]
    assert again["Schedule"] == "cron(0 3 * * ? *)"
    assert client.amz("Glue.DeleteTrigger", {"Name": "nightly-load"}).status_code == 200
    assert client.amz("Glue.GetTrigger", {"Name": "nightly-load"}).status_code == 404
    assert client.amz("Glue.GetTrigger", {"Name": "no-such-trigger"}).status_code == 404


def test_a_bare_name_beside_the_row_s_own_key_does_not_take_its_place(tmp_path: Path) -> None:
    manifest = load_manifest(build_inline(tmp_path, "runs", _runs(), verify=False))
    run = next(e for e in manifest.entities if e.name == "workflow_run")
    assert (run.column(run.pk).source_name or run.pk) == "WorkflowRunId"
    tools = {t.name: t for t in manifest.tools}
    assert tools["GetWorkflowRun"].pk_arg == "RunId" and tools["DeleteWorkflowRun"].pk_arg == "RunId"
    assert tools["GetWorkflowRuns"].pk_arg != "Name"  # the workflow's name keys no run
