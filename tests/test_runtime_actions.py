"""Actions are state transitions: cancel/pause/resume move a status, send inserts the listed row,
clear deletes children, copy inserts a copy, and invalid transitions are refused with a reason.

Everything runs through synthesis (the spec in tests/actions_fixture.py), the runtime and its
HTTP face (httpx ASGITransport), on real SQLite.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.build import build_service
from compoworld.synth.verify import verify_service
from tests.actions_fixture import write_actions_spec
from tests.runtime_call import call


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("actions")
    return Path(build_service(write_actions_spec(root), root / "lib").folder)


@pytest.fixture()
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def rows(rt: ServiceRuntime, ep: str | None, table: str, **where: Any) -> list[dict[str, Any]]:
    return rt.select(ep, table, where or None)


def test_non_crud_operations_with_evident_effects_are_bound_as_actions(rt: ServiceRuntime) -> None:
    backends = {b.defn.name: b.backend for b in rt.tools.values()}
    for name in ("cancelDocument", "sendDocument", "pauseCampaign", "resumeCampaign", "sendMessage"):
        assert backends[name] == "action"
    assert backends["clearFolder"] == backends["copyFolder"] == "action"
    assert backends["getRate"] == "simulated" and rt.manifest.tool("getRate").simulated_reason  # type: ignore[union-attr]
    cancel = rt.manifest.tool("cancelDocument")
    assert cancel is not None and cancel.action is not None
    assert cancel.action.kind == "transition" and cancel.action.sets == {"status": "cancelled"}
    schemas = {s["function"]["name"]: s for s in rt.tool_schemas()}
    assert schemas["cancelDocument"]["x-backend"] == "action"


def test_cancel_moves_the_status_a_later_read_sees_and_nothing_else(rt: ServiceRuntime) -> None:
    draft = next(r for r in rows(rt, None, "document") if r["status"] != "cancelled")
    out = call(rt, "e1", "cancelDocument", {"id": draft["id"]})
    assert out["success"] and out["backend"] == "action" and out["data"]["status"] == "cancelled"
    read = call(rt, "e1", "getDocument", {"id": draft["id"]})["data"]
    assert read["status"] == "cancelled" and read["cancelled_at"] == "2026-01-15T12:00:00Z"
    assert {k: v for k, v in read.items() if k not in ("status", "cancelled_at")} == {
        k: v for k, v in draft.items() if k not in ("status", "cancelled_at")
    }
    assert rows(rt, None, "document", id=draft["id"])[0]["status"] == draft["status"]  # the seed is untouched
    rt.fork("e2")
    assert rows(rt, "e2", "document", id=draft["id"])[0]["status"] == draft["status"]  # so is another episode
    assert rt.write_log("e1")[-1]["backend"] == "action"


def test_cancelling_a_cancelled_document_is_refused_with_the_reason(rt: ServiceRuntime) -> None:
    doc = next(r for r in rows(rt, None, "document") if r["status"] != "cancelled")
    call(rt, "e1", "cancelDocument", {"id": doc["id"]})
    before = rt.state_hash("e1")
    again = call(rt, "e1", "cancelDocument", {"id": doc["id"]})
    assert not again["success"] and again["error"]["code"] == "invalid_transition"
    assert "already 'cancelled'" in again["error"]["message"]
    assert rt.state_hash("e1") == before
    sent = call(rt, "e1", "sendDocument", {"id": doc["id"]})  # a cancelled document is not sent either
    assert not sent["success"] and sent["error"]["code"] == "invalid_transition"


def test_an_unknown_row_is_not_found(rt: ServiceRuntime) -> None:
    out = call(rt, "e1", "cancelDocument", {"id": 9999})
    assert not out["success"] and out["error"]["code"] == "not_found"


def test_resume_applies_only_to_a_paused_campaign(rt: ServiceRuntime) -> None:
    key = rows(rt, None, "campaign")[0]["campaignId"]
    call(rt, "e1", "pauseCampaign", {"campaignId": key})
    assert rows(rt, "e1", "campaign", campaignId=key)[0]["campaignStatus"] == "PAUSED"
    refused = call(rt, "e2", "resumeCampaign", {"campaignId": key})
    assert not refused["success"] and "applies only to 'PAUSED'" in refused["error"]["message"]
    resumed = call(rt, "e1", "resumeCampaign", {"campaignId": key})
    assert resumed["success"] and call(rt, "e1", "getCampaign", {"campaignId": key})["data"][
        "campaignStatus"
    ] == ("RUNNING")


def test_send_inserts_the_message_the_list_shows_with_its_status(rt: ServiceRuntime) -> None:
    before = call(rt, "e1", "listMessages", {})["data"]
    out = call(rt, "e1", "sendMessage", {"to": "+15550100", "text": "Your order shipped"})
    assert out["success"] and out["backend"] == "action"
    key = out["data"]["messageId"]
    read = call(rt, "e1", "getMessage", {"messageId": key})
    assert read["success"] and read["data"]["to"] == "+15550100" and read["data"]["status"] == "sent"
    listed = call(rt, "e1", "listMessages", {})["data"]
    assert len(_items(listed)) == len(_items(before)) + 1 and key in {m["messageId"] for m in _items(listed)}
    assert not call(rt, "e2", "getMessage", {"messageId": key})["success"]  # only in its own episode


def _items(data: Any) -> list[dict[str, Any]]:
    return data if isinstance(data, list) else data["items"]


def test_clear_deletes_only_the_addressed_folders_items(rt: ServiceRuntime) -> None:
    items = rows(rt, None, "item")
    folder_id = items[0]["folder_id"]
    out = call(rt, "e1", "clearFolder", {"folderId": folder_id})
    assert out["success"]
    assert rows(rt, "e1", "item", folder_id=folder_id) == []
    assert len(rows(rt, "e1", "item")) == len([i for i in items if i["folder_id"] != folder_id])


def test_copy_inserts_a_new_row_with_the_same_fields(rt: ServiceRuntime) -> None:
    source = rows(rt, None, "folder")[0]
    out = call(rt, "e1", "copyFolder", {"folderId": source["id"]})
    assert out["success"] and out["data"]["id"] != source["id"] and out["data"]["name"] == source["name"]
    assert len(rows(rt, "e1", "folder")) == len(rows(rt, None, "folder")) + 1


def test_an_invalid_transition_is_a_409_on_the_rest_route(rt: ServiceRuntime) -> None:
    doc = next(r for r in rows(rt, None, "document") if r["status"] != "cancelled")

    async def go() -> tuple[int, int]:
        rt.fork("rest")
        app = create_service_app(rt, Settings(admin_token="t"))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            headers = {"X-Episode-Id": "rest"}
            first = await client.post(f"/documents/{doc['id']}/cancel", headers=headers)
            second = await client.post(f"/documents/{doc['id']}/cancel", headers=headers)
            return first.status_code, second.status_code

    assert asyncio.run(go()) == (200, 409)


def test_the_conformance_checker_verifies_each_action_by_a_later_read(folder: Path) -> None:
    report = verify_service(folder)
    assert report.passed, report.failed_tools
    checks = {t.tool: t.checks for t in report.tools}
    assert "transition visible to a later read" in checks["cancelDocument"]
    assert "repeat refused" in checks["cancelDocument"]
    assert "insert visible to a later read" in checks["sendMessage"]
    assert "clear visible to a later read" in checks["clearFolder"]
    assert "brought into its starting state by another action" in checks["resumeCampaign"]
    assert report.actions == 7
