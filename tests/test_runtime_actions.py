"""Actions are state transitions: cancel/pause/resume move a status, send inserts the listed row,
clear deletes children, copy inserts a copy, and invalid transitions are refused with a reason.

Everything runs through synthesis (the spec in tests/actions_fixture.py), the runtime and its
HTTP face (httpx ASGITransport), on real SQLite.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.build import build_service
from compoworld.synth.verify import verify_runtime, verify_service
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


# -- writes of a row's own sub-record, and add-or-update of a child keyed by the caller -------------

_CONTACT = {
    "type": "object",
    "properties": {
        "firstName": {"type": "string"},
        "lastName": {"type": "string"},
        "phone": {"type": "string"},
    },
    "required": ["firstName", "lastName"],
}
_TAX = {
    "type": "object",
    "properties": {"filingStatus": {"type": "string"}, "exemptions": {"type": "integer"}},
}
_EMPLOYEE = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "name": {"type": "string"},
        "emergencyContacts": {"type": "array", "items": _CONTACT},
        "stateTax": _TAX,
    },
}
_EARNING = {"type": "object", "properties": {"earningCode": {"type": "string"}, "amount": {"type": "number"}}}


def _staff_doc() -> dict[str, Any]:
    def ok(schema: dict[str, Any] | None) -> dict[str, Any]:
        if schema is None:
            return {"200": {"description": "Successfully added or updated"}}
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    def body(schema: dict[str, Any]) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": schema}}}

    emp = {"name": "employeeId", "in": "path", "required": True, "schema": {"type": "integer"}}
    code = {"name": "earningCode", "in": "path", "required": True, "schema": {"type": "string"}}
    employee, earning = {"$ref": "#/components/schemas/Employee"}, {"$ref": "#/components/schemas/Earning"}
    item = "/employees/{employeeId}"
    return {
        "openapi": "3.0.0",
        "info": {"title": "Staff", "version": "1"},
        "paths": {
            "/employees": {
                "get": {
                    "operationId": "listEmployees",
                    "responses": ok({"type": "array", "items": employee}),
                },
                "post": {
                    "operationId": "addEmployee",
                    "requestBody": body(employee),
                    "responses": ok(employee),
                },
            },
            item: {"get": {"operationId": "getEmployee", "parameters": [emp], "responses": ok(employee)}},
            f"{item}/emergencyContacts": {
                "put": {
                    "operationId": "Add or update emergency contacts",
                    "parameters": [emp],
                    "requestBody": body({"$ref": "#/components/schemas/EmergencyContact"}),
                    "responses": ok(None),
                }
            },
            f"{item}/stateTax": {
                "put": {
                    "operationId": "Add or update state tax",
                    "parameters": [emp],
                    "requestBody": body({"$ref": "#/components/schemas/StateTax"}),
                    "responses": ok(None),
                },
                "patch": {
                    "operationId": "Update state tax",
                    "parameters": [emp],
                    "requestBody": body({"$ref": "#/components/schemas/StateTax"}),
                    "responses": ok(None),
                },
            },
            f"{item}/earnings": {
                "get": {
                    "operationId": "listEarnings",
                    "parameters": [emp],
                    "responses": ok({"type": "array", "items": earning}),
                },
                "put": {
                    "operationId": "Add or update an employee earning",
                    "parameters": [emp],
                    "requestBody": body(earning),
                    "responses": ok(None),
                },
            },
            f"{item}/earnings/{{earningCode}}": {
                "get": {"operationId": "getEarning", "parameters": [emp, code], "responses": ok(earning)}
            },
        },
        "components": {
            "schemas": {
                "Employee": _EMPLOYEE,
                "EmergencyContact": _CONTACT,
                "StateTax": _TAX,
                "Earning": _EARNING,
            }
        },
    }


@pytest.fixture(scope="module")
def staff_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("staff")
    spec = root / "staff.json"
    spec.write_text(json.dumps(_staff_doc()))
    return Path(build_service(spec, root / "lib").folder)


@pytest.fixture()
def staff(staff_folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(staff_folder, Settings())


def test_a_write_of_a_rows_sub_record_is_bound_to_its_json_column(staff: ServiceRuntime) -> None:
    tools = {t.name: t for t in staff.manifest.tools}
    contacts, tax = tools["Add_or_update_emergency_contacts"], tools["Add_or_update_state_tax"]
    for tool, column in ((contacts, "emergencyContacts"), (tax, "stateTax")):
        assert tool.backend == "action", (tool.name, tool.simulated_reason)
        assert tool.action is not None and tool.action.kind == "set" and tool.action.member == column
    earning = tools["Add_or_update_an_employee_earning"]
    assert earning.backend == "action" and earning.action is not None
    assert earning.action.kind == "insert" and earning.action.upsert and earning.action.target == "earning"


def test_an_added_contact_is_one_more_item_and_a_put_record_replaces_the_old(staff: ServiceRuntime) -> None:
    row = rows(staff, None, "employee")[0]
    before = row["emergencyContacts"] or []
    contact = {"firstName": "Ada", "lastName": "Lovelace", "phone": "+442071234567"}
    out = call(staff, "s1", "Add_or_update_emergency_contacts", {"employeeId": row["id"], **contact})
    assert out["success"], out
    read = call(staff, "s1", "getEmployee", {"employeeId": row["id"]})["data"]
    assert read["emergencyContacts"] == [*before, contact]
    assert call(staff, "s1", "Add_or_update_state_tax", {"employeeId": row["id"], "exemptions": 2})["success"]
    assert call(staff, "s1", "getEmployee", {"employeeId": row["id"]})["data"]["stateTax"] == {
        "exemptions": 2
    }
    assert rows(staff, None, "employee", id=row["id"])[0]["emergencyContacts"] == row["emergencyContacts"]
    missing = call(staff, "s1", "Add_or_update_emergency_contacts", {"employeeId": 999_999_999, **contact})
    assert not missing["success"] and missing["error"]["code"] == "not_found"


def test_a_patch_of_a_sub_record_merges_into_it_and_a_put_replaces_it(staff: ServiceRuntime) -> None:
    tool = next(t for t in staff.manifest.tools if t.name == "Update_state_tax")
    assert tool.backend == "action" and tool.action is not None and tool.action.member == "stateTax", tool
    emp = rows(staff, None, "employee")[1]["id"]
    put = {"employeeId": emp, "filingStatus": "single", "exemptions": 1}
    assert call(staff, "s2", "Add_or_update_state_tax", put)["success"]
    assert call(staff, "s2", "Update_state_tax", {"employeeId": emp, "exemptions": 3})["success"]
    read = call(staff, "s2", "getEmployee", {"employeeId": emp})["data"]
    assert read["stateTax"] == {"filingStatus": "single", "exemptions": 3}  # the field kept, one changed
    assert call(staff, "s2", "Add_or_update_state_tax", {"employeeId": emp, "exemptions": 0})["success"]
    assert call(staff, "s2", "getEmployee", {"employeeId": emp})["data"]["stateTax"] == {"exemptions": 0}


def test_add_or_update_inserts_a_new_key_and_updates_an_existing_one(staff: ServiceRuntime) -> None:
    emp = rows(staff, None, "employee")[0]["id"]
    args = {"employeeId": emp, "earningCode": "BONUS", "amount": 100.0}
    assert call(staff, "s2", "Add_or_update_an_employee_earning", args)["success"]
    assert call(staff, "s2", "Add_or_update_an_employee_earning", {**args, "amount": 250.0})["success"]
    mine = [r for r in rows(staff, "s2", "earning") if r["earningCode"] == "BONUS"]
    assert len(mine) == 1 and mine[0]["amount"] == 250.0
    read = call(staff, "s2", "getEarning", {"employeeId": emp, "earningCode": "BONUS"})
    assert read["success"] and read["data"]["amount"] == 250.0, read
    other = rows(staff, None, "employee")[1]["id"]
    moved = call(staff, "s2", "Add_or_update_an_employee_earning", {**args, "employeeId": other})
    assert not moved["success"] and moved["error"]["code"] == "conflict", moved


def test_the_checker_verifies_sub_record_writes_and_upserts_by_a_later_read(staff_folder: Path) -> None:
    report = verify_service(staff_folder)
    assert report.passed, report.failed_tools
    checks = {t.tool: t.checks for t in report.tools}
    assert "set visible to a later read" in checks["Add_or_update_emergency_contacts"]
    assert "set visible to a later read" in checks["Add_or_update_state_tax"]
    assert "insert visible to a later read" in checks["Add_or_update_an_employee_earning"]


# -- ``POST /podcasts/{key}/episodes/create``: the child the path names before the verb ------------

_PODCAST = {"type": "object", "properties": {"key": {"type": "string"}, "title": {"type": "string"}}}
_EPISODE = {
    "type": "object",
    "properties": {"key": {"type": "string"}, "title": {"type": "string"}, "episode": {"type": "integer"}},
}


def _podcast_doc() -> dict[str, Any]:
    def ok(schema: dict[str, Any]) -> dict[str, Any]:
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    key = {"name": "podcastKey", "in": "path", "required": True, "schema": {"type": "string"}}
    podcast, episode = {"$ref": "#/components/schemas/Podcast"}, {"$ref": "#/components/schemas/Episode"}
    form = {
        "type": "object",
        "required": ["episode", "file_media"],
        "properties": {"episode": episode, "file_media": {"type": "string", "format": "binary"}},
    }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Podcasts", "version": "1"},
        "paths": {
            "/podcasts": {
                "get": {"operationId": "listPodcasts", "responses": ok({"type": "array", "items": podcast})}
            },
            "/podcasts/{podcastKey}": {
                "get": {"operationId": "getPodcast", "parameters": [key], "responses": ok(podcast)}
            },
            "/podcasts/{podcastKey}/episodes": {
                "get": {
                    "operationId": "getPodcastEpisodes",
                    "parameters": [key],
                    "responses": ok({"type": "array", "items": episode}),
                }
            },
            "/podcasts/{podcastKey}/episodes/create": {
                "post": {
                    "operationId": "createPodcastEpisode",
                    "parameters": [key],
                    "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": form}}},
                    "responses": ok(episode),
                }
            },
        },
        "components": {"schemas": {"Podcast": _PODCAST, "Episode": _EPISODE}},
    }


@pytest.fixture(scope="module")
def podcasts(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("podcasts")
    spec = root / "podcasts.json"
    spec.write_text(json.dumps(_podcast_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_create_after_the_childs_path_inserts_the_child_from_its_object(podcasts: ServiceRuntime) -> None:
    tool = podcasts.manifest.tool("createPodcastEpisode")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.target == "episode" and tool.body_arg == "episode"
    show = rows(podcasts, None, "podcast")[0]["key"]
    made = call(
        podcasts,
        "p1",
        "createPodcastEpisode",
        {"podcastKey": show, "episode": {"title": "Pilot", "episode": 1}, "file_media": "bWVkaWE="},
    )
    assert made["success"] and made["data"]["title"] == "Pilot" and made["data"]["episode"] == 1, made
    listed = call(podcasts, "p1", "getPodcastEpisodes", {"podcastKey": show})["data"]
    assert made["data"]["key"] in [e["key"] for e in listed]
    report = asyncio.run(verify_runtime(podcasts))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


def test_a_sub_record_with_its_own_endpoint_is_kept_under_the_column_cap(tmp_path: Path) -> None:
    doc = _staff_doc()
    extra = {f"extra{i}": {"type": "object", "properties": {"a": {"type": "string"}}} for i in range(45)}
    employee = doc["components"]["schemas"]["Employee"]
    employee["properties"] = {**{k: v for k, v in employee["properties"].items() if k != "stateTax"}, **extra}
    employee["properties"]["stateTax"] = _TAX  # last, after more fields than the cap holds
    spec = tmp_path / "wide.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tool = rt.manifest.tool("Add_or_update_state_tax")
    assert tool is not None and tool.action is not None and tool.action.member == "stateTax", tool
    row = rows(rt, None, "employee")[0]
    assert call(rt, "w1", "Add_or_update_state_tax", {"employeeId": row["id"], "exemptions": 3})["success"]
    assert call(rt, "w1", "getEmployee", {"employeeId": row["id"]})["data"]["stateTax"] == {"exemptions": 3}


# -- a batch read (CORE's ``POST /articles/get [1, 2]``): the one-row read's answer for each key ---

_ARTICLE = {"type": "object", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}}
_FOUND = {
    "type": "object",
    "properties": {"status": {"type": "string", "enum": ["OK", "NOT_FOUND"]}, "data": _ARTICLE},
}


def _articles_doc() -> dict[str, Any]:
    def ok(schema: dict[str, Any]) -> dict[str, Any]:
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    def keys(kind: str) -> dict[str, Any]:
        items = {"type": "array", "items": {"type": kind}}
        return {"required": True, "content": {"application/json": {"schema": items}}}

    found, core_id = {"$ref": "#/components/schemas/Found"}, {"$ref": "#/components/schemas/Article"}
    param = {"name": "coreId", "in": "path", "required": True, "schema": {"type": "integer"}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Articles", "version": "1"},
        "paths": {
            "/articles": {
                "get": {"operationId": "listArticles", "responses": ok({"type": "array", "items": core_id})}
            },
            "/articles/get/{coreId}": {
                "get": {"operationId": "getArticleByCoreId", "parameters": [param], "responses": ok(found)}
            },
            "/articles/get": {
                "post": {
                    "operationId": "getArticleByCoreIdBatch",
                    "requestBody": keys("integer"),
                    "responses": ok({"type": "array", "items": found}),
                }
            },
            "/articles/titles/batch": {  # items that are not the one-row read's answer: not a batch read
                "post": {
                    "operationId": "getTitlesBatch",
                    "requestBody": keys("integer"),
                    "responses": ok({"type": "array", "items": {"type": "string"}}),
                }
            },
        },
        "components": {"schemas": {"Article": _ARTICLE, "Found": _FOUND}},
    }


@pytest.fixture(scope="module")
def articles(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("articles")
    spec = root / "articles.json"
    spec.write_text(json.dumps(_articles_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_batch_read_answers_the_one_row_read_for_each_key_in_order(articles: ServiceRuntime) -> None:
    batch = articles.manifest.tool("getArticleByCoreIdBatch")
    assert batch is not None and batch.backend == "action", batch and batch.simulated_reason
    assert batch.action is not None and batch.action.each == "getArticleByCoreId"
    titles = articles.manifest.tool("getTitlesBatch")
    assert titles is not None and titles.backend == "simulated"
    ids = [r["id"] for r in rows(articles, None, "article")[:3]][::-1]
    assert batch.body_whole is not None  # the body is the list of keys
    got = call(articles, "a1", "getArticleByCoreIdBatch", {batch.body_whole: ids})
    assert got["success"], got
    one = [call(articles, "a1", "getArticleByCoreId", {"coreId": i})["data"] for i in ids]
    assert got["data"] == one and [a["data"]["id"] for a in got["data"]] == ids
    missing = call(articles, "a1", "getArticleByCoreIdBatch", {batch.body_whole: [ids[0], 987654321]})
    assert not missing["success"] and missing["error"]["code"] == "not_found", missing
    report = asyncio.run(verify_runtime(articles))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    assert "batch read answers as getArticleByCoreId does for each key" in checks["getArticleByCoreIdBatch"]
