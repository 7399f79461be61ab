"""Read actions that address a row answer from it; sends, moves and quick adds change typed state.

Synthesis of tests/readside_fixture.py, then the runtime on real SQLite: a lookup of an unknown
or out-of-scope id is not found and a lookup changes nothing; a move's destination writes the
parent reference; a quick add's text is the new row's label; a send adds the outbound message
the search and the details show; a list whose rows sit beside status fields lists the parent's rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.build import build_service
from compoworld.synth.verify import verify_service
from tests.readside_fixture import write_readside_spec
from tests.runtime_call import call


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readside")
    return Path(build_service(write_readside_spec(root), root / "lib").folder)


@pytest.fixture()
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def a_file(rt: ServiceRuntime) -> dict[str, Any]:
    return rt.select(None, "file")[0]


def test_reads_that_address_a_row_are_read_only_lookups(rt: ServiceRuntime) -> None:
    schemas = {s["function"]["name"]: s for s in rt.tool_schemas()}
    for name in ("downloadFile", "outboundDetails"):
        tool = rt.manifest.tool(name)
        assert tool is not None and tool.action is not None and tool.action.kind == "lookup"
        assert schemas[name]["x-backend"] == "action" and schemas[name]["x-kind"] == "read"
    assert rt.tools["listCards"].backend == "implemented"


def test_a_lookup_answers_for_a_held_row_refuses_an_unknown_one_and_changes_nothing(
    rt: ServiceRuntime,
) -> None:
    f = a_file(rt)
    before = rt.state_hash(None)
    ok = call(rt, "e1", "downloadFile", {"folderId": f["folder_id"], "fileId": f["id"]})
    assert ok["success"] and ok["backend"] == "action"
    missing = call(rt, "e1", "downloadFile", {"folderId": f["folder_id"], "fileId": 987654})
    assert not missing["success"] and missing["error"]["code"] == "not_found"
    assert rt.state_hash("e1") == before


def test_a_lookup_under_another_parent_is_not_found(rt: ServiceRuntime) -> None:
    f = a_file(rt)
    other = next(r["id"] for r in rt.select(None, "folder") if r["id"] != f["folder_id"])
    out = call(rt, "e2", "downloadFile", {"folderId": other, "fileId": f["id"]})
    assert not out["success"] and out["error"]["code"] == "not_found"


def test_a_move_writes_the_parent_reference_a_later_list_sees(rt: ServiceRuntime) -> None:
    f = a_file(rt)
    dest = next(r["id"] for r in rt.select(None, "folder") if r["id"] != f["folder_id"])
    out = call(rt, "e3", "moveFile", {"folderId": f["folder_id"], "fileId": f["id"], "destination": dest})
    assert out["success"], out
    listed = call(rt, "e3", "listFiles", {"folderId": dest})["data"]
    assert f["id"] in [r["id"] for r in listed]
    left = call(rt, "e3", "listFiles", {"folderId": f["folder_id"]})["data"]
    assert f["id"] not in [r["id"] for r in left]


def test_a_move_to_a_parent_that_does_not_exist_is_refused(rt: ServiceRuntime) -> None:
    f = a_file(rt)
    out = call(rt, "e4", "moveFile", {"folderId": f["folder_id"], "fileId": f["id"], "destination": 987654})
    assert not out["success"]
    assert rt.select("e4", "file", {"id": f["id"]})[0]["folder_id"] == f["folder_id"]


def test_quick_add_inserts_a_row_labelled_with_the_text(rt: ServiceRuntime) -> None:
    parent = rt.select(None, "folder")[0]["id"]
    out = call(rt, "e5", "quickAddFile", {"folderId": parent, "text": "Quarterly report.pdf"})
    assert out["success"], out
    names = [r["name"] for r in call(rt, "e5", "listFiles", {"folderId": parent})["data"]]
    assert "Quarterly report.pdf" in names


def test_send_adds_the_outbound_message_that_search_and_details_show(rt: ServiceRuntime) -> None:
    before = len(rt.select(None, "inbound_message"))
    out = call(rt, "e6", "sendEmail", {"To": "ada@example.com", "Subject": "Invoice 42"})
    assert out["success"], out
    key = out["data"]["MessageID"]
    found = call(rt, "e6", "searchOutbound", {})["data"]["Messages"]
    assert [m["Subject"] for m in found if m["MessageID"] == key] == ["Invoice 42"]
    details = call(rt, "e6", "outboundDetails", {"messageid": key})
    assert details["success"] and details["data"]["To"] == "ada@example.com"
    assert len(rt.select("e6", "inbound_message")) == before


def test_a_list_whose_rows_sit_beside_status_fields_lists_the_parents_rows(rt: ServiceRuntime) -> None:
    card = rt.select(None, "card")[0]
    out = call(rt, None, "listCards", {"profileId": card["profile_id"]})
    assert out["success"]
    listed = out["data"]["card"]
    assert listed and all(c["profile_id"] == card["profile_id"] for c in listed)
    held = {c["card_id"] for c in rt.select(None, "card", {"profile_id": card["profile_id"]})}
    assert {c["card_id"] for c in listed} == held


def test_a_record_addressed_without_a_key_is_one_row_that_reads_and_writes(rt: ServiceRuntime) -> None:
    assert len(rt.select(None, "server")) == 1
    seed = call(rt, None, "getServer", {})["data"]
    out = call(rt, "e7", "editServer", {"Name": "Outbound mail"})
    assert out["success"] and out["data"]["Name"] == "Outbound mail"
    assert call(rt, "e7", "getServer", {})["data"]["Name"] == "Outbound mail"
    assert call(rt, "e8", "getServer", {})["data"] == seed  # another episode keeps the seed's record


def test_a_read_computed_for_its_inputs_is_not_a_record(rt: ServiceRuntime) -> None:
    assert rt.tools["getReport"].backend == "simulated"
    assert rt.manifest.entity("report") is None


def test_the_conformance_checker_verifies_lookups_moves_quick_adds_and_sends(folder: Path) -> None:
    report = verify_service(folder)
    assert report.passed, report.failed_tools
    checks = {t.tool: t.checks for t in report.tools}
    assert {"lookup answers from the addressed row", "unknown id not found"} <= set(checks["downloadFile"])
    assert "set visible to a later read" in checks["moveFile"]
    assert "insert visible to a later read" in checks["quickAddFile"]
    assert "insert visible to a later read" in checks["sendEmail"]
    assert "set visible to a later read" in checks["editServer"]
    assert "lookup answers from the addressed row" in checks["getServer"]
