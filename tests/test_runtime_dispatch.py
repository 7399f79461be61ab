"""The runtime's dispatcher: implemented CRUD on forked SQLite state, envelopes, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from tests.runtime_call import call
from tests.runtime_fixture import write_crm_service


@pytest.fixture
def crm(tmp_path: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(write_crm_service(tmp_path), Settings())


def test_create_then_read_round_trips_in_the_same_episode(crm: ServiceRuntime) -> None:
    created = call(crm, "e1", "createContact", {"name": "Ann", "email": "ann@example.com", "company_id": 2})
    assert created["success"] and created["backend"] == "implemented"
    assert created["data"]["id"] == "con_000031"
    assert created["data"]["created_at"] == "2026-01-15T12:00:00Z"
    read = call(crm, "e1", "getContact", {"id": created["data"]["id"]})
    assert read["data"]["email"] == "ann@example.com"


def test_episodes_are_isolated_from_each_other_and_from_the_seed(crm: ServiceRuntime) -> None:
    call(crm, "e1", "updateContact", {"id": "con_000001", "status": "customer", "name": "Changed"})
    assert call(crm, "e1", "getContact", {"id": "con_000001"})["data"]["name"] == "Changed"
    assert call(crm, "e2", "getContact", {"id": "con_000001"})["data"]["name"] == "Person 1"
    assert call(crm, None, "getContact", {"id": "con_000001"})["data"]["name"] == "Person 1"


def test_writes_without_an_episode_are_refused(crm: ServiceRuntime) -> None:
    out = call(crm, None, "createContact", {"name": "X"})
    assert not out["success"] and out["error"]["code"] == "episode_required"


def test_delete_then_read_gives_not_found(crm: ServiceRuntime) -> None:
    assert call(crm, "e1", "deleteContact", {"id": "con_000002"})["success"]
    out = call(crm, "e1", "getContact", {"id": "con_000002"})
    assert out["error"]["code"] == "not_found"
    assert call(crm, "e1", "deleteContact", {"id": "con_000002"})["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "name"),
        ({"name": 5}, "name"),
        ({"name": "a", "bogus": 1}, "bogus"),
        ({"name": "a", "status": "vip"}, "status"),
        ({"name": "a", "tags": [1, 2]}, "tags"),
        ([1, 2], "object"),
    ],
)
def test_invalid_arguments_name_the_field_and_change_nothing(
    crm: ServiceRuntime, args: object, field: str
) -> None:
    before = crm.dump("e9") if crm.has_episode("e9") else None
    crm.fork("e9")
    before = crm.state_hash("e9")
    out = call(crm, "e9", "createContact", args)
    assert out["success"] is False and out["error"]["code"] == "invalid_arguments"
    assert field in out["error"]["message"]
    assert crm.state_hash("e9") == before


def test_reference_to_missing_row_is_refused(crm: ServiceRuntime) -> None:
    out = call(crm, "e1", "createContact", {"name": "Z", "company_id": 999})
    assert out["error"]["code"] == "not_found" and "company" in out["error"]["message"]


def test_list_filters_searches_and_pages(crm: ServiceRuntime) -> None:
    out = call(crm, None, "listContacts", {"status": "lead", "limit": 5})
    assert out["data"]["total"] == 15 and len(out["data"]["items"]) == 5
    out = call(crm, None, "listContacts", {"q": "person12@"})
    assert [r["id"] for r in out["data"]["items"]] == ["con_000012"]


def test_unknown_tool_is_a_clear_failure(crm: ServiceRuntime) -> None:
    out = call(crm, "e1", "nope", {})
    assert out["error"]["code"] == "unknown_tool"


def test_fork_from_another_episode_copies_its_state(crm: ServiceRuntime) -> None:
    call(crm, "a", "deleteContact", {"id": "con_000003"})
    crm.fork("b", source="a")
    assert call(crm, "b", "getContact", {"id": "con_000003"})["error"]["code"] == "not_found"
    assert crm.state_hash("a") == crm.state_hash("b")


def test_state_hash_is_stable_across_builds(tmp_path: Path) -> None:
    a = ServiceRuntime.from_folder(write_crm_service(tmp_path / "a"), Settings())
    b = ServiceRuntime.from_folder(write_crm_service(tmp_path / "b"), Settings())
    assert a.state_hash(None) == b.state_hash(None)
    call(a, "x", "createContact", {"name": "N"})
    call(b, "y", "createContact", {"name": "N"})
    assert a.state_hash("x") == b.state_hash("y") != a.state_hash(None)


def test_simulated_tools_are_deterministic_logged_and_readable_later(crm: ServiceRuntime) -> None:
    sent = call(crm, "e1", "sendEmail", {"to": "ann@example.com", "subject": "Hi"})
    assert sent["success"] and sent["backend"] == "simulated"
    assert sent["data"]["to"] == "ann@example.com" and sent["data"]["status"] in ("queued", "sent")
    log = crm.dump("e1")["tables"]["action_log"]
    assert log[0]["tool"] == "sendEmail" and log[0]["arguments"]["to"] == "ann@example.com"
    read = call(crm, "e1", "getEmail", {"message_id": sent["data"]["message_id"]})
    assert read["data"]["to"] == "ann@example.com" and read["data"]["subject"] == "Hi"
    assert call(crm, "e1", "getEmail", {"message_id": sent["data"]["message_id"]}) == read
    unknown = call(crm, "e1", "getEmail", {"message_id": "zzz"})
    assert not unknown["success"] and unknown["error"]["code"] == "not_found"
    again = call(crm, "e2", "sendEmail", {"to": "ann@example.com", "subject": "Hi"})
    assert again["data"] == sent["data"]


def test_write_log_records_every_write(crm: ServiceRuntime) -> None:
    call(crm, "e1", "createContact", {"name": "A"})
    call(crm, "e1", "getContact", {"id": "con_000001"})
    call(crm, "e1", "deleteContact", {"id": "nope"})
    log = crm.write_log("e1")
    assert [(e["tool"], e["success"]) for e in log] == [("createContact", True), ("deleteContact", False)]


def test_idle_episodes_are_reaped_after_ttl(crm: ServiceRuntime) -> None:
    crm.fork("old")
    crm.store.episodes["old"].last_used -= crm.store.ttl_s + 1
    crm.fork("new")
    assert crm.store.reap() == 1
    assert not crm.has_episode("old") and crm.has_episode("new")


def test_scalar_constraints_are_enforced_and_an_unusable_pattern_is_ignored() -> None:
    from compoworld.runtime.validate import ArgsValidator, ArgumentError

    check = ArgsValidator(
        {
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "qty": {"type": "integer", "minimum": 1},
                "odd": {"type": "string", "pattern": "(?<!x"},  # not a Python regex: only the type is checked
            },
        }
    )
    assert check({"code": "EUR", "qty": 2, "odd": "anything"})
    for bad, field in (({"code": "eur"}, "code"), ({"qty": 0}, "qty")):
        with pytest.raises(ArgumentError) as info:
            check(bad)
        assert info.value.field == field


def test_created_keys_follow_the_key_format_the_api_fixes(tmp_path: Path) -> None:
    import json
    import re

    folder = write_crm_service(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    contact = next(e for e in manifest["entities"] if e["name"] == "contact")
    contact["columns"][0]["json_schema"] = {"type": "string", "pattern": "^CO[0-9a-f]{8}$", "minLength": 10}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    rt = ServiceRuntime.from_folder(folder, Settings())
    first = call(rt, "e1", "createContact", {"name": "A"})["data"]["id"]
    again = call(ServiceRuntime.from_folder(folder, Settings()), "e1", "createContact", {"name": "A"})[
        "data"
    ]["id"]
    assert re.fullmatch(r"CO[0-9a-f]{8}", first) and first == again  # valid, and deterministic
