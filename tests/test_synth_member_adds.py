"""An ``add_<member>`` on a row adds one item to the list column it names; nouns of an act move a
row as their verb does.

``POST /disputes/{disputeId}/add_evidence {evidenceType, files}`` (eBay's payment disputes, Google's
``addRule``/``addPeering``) adds one item to the dispute's ``evidence`` list, which the dispute's read
returns; ``/notes`` is a text column, so ``add_note`` names no list and stays with the world model.
``POST /transactions/{id}/cancellation-request {value}`` (VTEX's gateway) is a cancel: the
transaction's status moves to cancelled, and the amount sent is the amount cancelled, never the
transaction's new value. Built from an inline document, called over the service's REST routes on
real SQLite, conformance-checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.transitions import action_verb, state_value
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline
from tests.spec_parts import json_body, ok, path_param

_EVIDENCE = {
    "type": "object",
    "properties": {
        "evidenceId": {"type": "string"},
        "evidenceType": {"type": "string"},
        "files": {"type": "array", "items": {"type": "object", "properties": {"fileId": {"type": "string"}}}},
    },
}
_DISPUTE = {
    "type": "object",
    "properties": {
        "disputeId": {"type": "string"},
        "reason": {"type": "string"},
        "note": {"type": "string"},
        "evidence": {"type": "array", "items": _EVIDENCE},
    },
}
_TRANSACTION = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "value": {"type": "integer"},
        "status": {"type": "string"},
        "referenceId": {"type": "string"},
    },
}


def _doc() -> dict[str, Any]:
    dispute, transaction = (
        {"$ref": "#/components/schemas/Dispute"},
        {"$ref": "#/components/schemas/Transaction"},
    )
    added = {"type": "object", "properties": {"evidenceId": {"type": "string"}}}
    amount = {"type": "object", "properties": {"value": {"type": "integer"}}}
    act = {"type": "object", "properties": {"id": {"type": "string"}, "value": {"type": "integer"}}}
    did, tid = path_param("disputeId"), path_param("transactionId")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Acts", "version": "1"},
        "paths": {
            "/disputes": {
                "get": {"operationId": "listDisputes", "responses": ok({"type": "array", "items": dispute})},
                "post": {
                    "operationId": "createDispute",
                    "requestBody": json_body(dispute),
                    "responses": ok(dispute),
                },
            },
            "/disputes/{disputeId}": {
                "get": {"operationId": "getDispute", "parameters": [did], "responses": ok(dispute)},
            },
            "/disputes/{disputeId}/add_evidence": {
                "post": {
                    "operationId": "addEvidence",
                    "parameters": [did],
                    "requestBody": json_body(
                        {
                            "type": "object",
                            "properties": {
                                "evidenceType": {"type": "string"},
                                "files": _EVIDENCE["properties"]["files"],
                            },
                        }
                    ),
                    "responses": ok(added),
                }
            },
            "/disputes/{disputeId}/add_note": {  # ``note`` is text, not a list: no member to add to
                "post": {
                    "operationId": "addNote",
                    "parameters": [did],
                    "requestBody": json_body({"type": "object", "properties": {"text": {"type": "string"}}}),
                    "responses": ok({"type": "object"}),
                }
            },
            "/transactions": {
                "post": {
                    "operationId": "createTransaction",
                    "requestBody": json_body(transaction),
                    "responses": ok(transaction),
                },
            },
            "/transactions/{transactionId}": {
                "get": {"operationId": "getTransaction", "parameters": [tid], "responses": ok(transaction)},
            },
            "/transactions/{transactionId}/cancellation-request": {
                "post": {
                    "operationId": "cancelTheTransaction",
                    "parameters": [tid],
                    "requestBody": json_body(amount),
                    "responses": ok(act),
                }
            },
            "/transactions/{transactionId}/refunding-request": {
                "post": {
                    "operationId": "refundTheTransaction",
                    "parameters": [tid],
                    "requestBody": json_body(amount),
                    "responses": ok(act),
                }
            },
        },
        "components": {"schemas": {"Dispute": _DISPUTE, "Transaction": _TRANSACTION}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("acts"), "acts", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def _client(rt: ServiceRuntime) -> httpx.AsyncClient:
    app = create_service_app(rt, Settings(admin_token="t"))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc")


def test_nouns_of_an_act_read_as_its_verb() -> None:
    found = action_verb(["cancellation", "request"], on_item=True)
    assert found is not None and found[0] == "cancel" and found[1].kind == "transition"
    settled = action_verb(["settlement", "request"], on_item=True)
    assert settled is not None and settled[0] == "settle"
    assert action_verb(["verification"], on_item=True) is None  # not an act of a known verb


@pytest.mark.parametrize(
    ("words", "vocabulary", "state"),
    [
        (["release"], ["Hold", "Balanced", "Released"], "Released"),  # Visma's documents
        (["revoke"], ["ISSUED", "REVOKED", "CANCELED"], "REVOKED"),  # certificates, consents
        (["hold"], ["Hold", "Balanced", "Released"], "Hold"),
        (["un", "hold"], ["on_hold", "active"], "active"),
        (["undelete"], ["active", "deleted"], "active"),
    ],
)
def test_release_revoke_and_hold_move_to_the_state_the_vocabulary_names(
    words: list[str], vocabulary: list[str], state: str
) -> None:
    found = action_verb(words, on_item=True)
    assert found is not None and found[1].kind == "transition"
    assert state_value(found[1].states, vocabulary, open_vocabulary=False) == state


def test_an_add_of_a_list_member_is_a_member_write(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("addEvidence")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "set" and tool.action.member == "evidence"
    note = rt.manifest.tool("addNote")
    assert note is not None and note.backend == "simulated"


def test_an_added_member_is_in_the_rows_later_read(rt: ServiceRuntime) -> None:
    row = rt.select(None, "dispute")[0]
    key, before = row["disputeId"], row["evidence"] or []

    async def go() -> tuple[int, Any]:
        rt.fork("add")
        async with _client(rt) as http:
            h = {"X-Episode-Id": "add"}
            sent = {"evidenceType": "PROOF_OF_DELIVERY", "files": [{"fileId": "f-1"}]}
            made = await http.post(f"/disputes/{key}/add_evidence", json=sent, headers=h)
            got = (await http.get(f"/disputes/{key}", headers=h)).json()
            return made.status_code, got

    status, got = asyncio.run(go())
    assert status == 200
    assert got["evidence"] == [*before, {"evidenceType": "PROOF_OF_DELIVERY", "files": [{"fileId": "f-1"}]}]


def test_a_cancellation_request_cancels_and_leaves_the_value(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("cancelTheTransaction")
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.kind == "transition"
    assert tool.action.sets == {"status": "cancelled"} and "value" not in tool.arg_columns
    row = rt.select(None, "transaction")[0]
    key, value = row["id"], row["value"]

    async def go() -> tuple[int, Any, int]:
        rt.fork("cxl")
        async with _client(rt) as http:
            h = {"X-Episode-Id": "cxl"}
            done = await http.post(f"/transactions/{key}/cancellation-request", json={"value": 1}, headers=h)
            got = (await http.get(f"/transactions/{key}", headers=h)).json()
            again = await http.post(f"/transactions/{key}/cancellation-request", json={"value": 1}, headers=h)
            return done.status_code, got, again.status_code

    status, got, again = asyncio.run(go())
    assert status == 200 and got["status"] == "cancelled" and got["value"] == value
    assert again >= 400  # already cancelled: refused with a reason


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    for name in ("addEvidence", "cancelTheTransaction", "refundTheTransaction"):
        assert any("visible to a later read" in c for c in checks[name]), (name, checks[name])
