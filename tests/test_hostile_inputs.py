"""Hostile inputs at every edge of `compoworld up` (real HTTP in-process, real SQLite forks).

Lone surrogates, NaN and Infinity, nesting 10,000 deep, 50 MB bodies, SQL and path strings,
the seed's own id: never an HTTP 500, never a state change, never an episode that can no
longer be read, and the same code and status on the service routes and the orchestrator's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.sanitize import InputRefused, Limits, check_value, dumps, load_json
from compoworld.settings import Settings
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, tool_content, write_library

TOKEN = {"Authorization": "Bearer s3cret"}
DEEP = "[" * 10_000 + "]" * 10_000
BIG = b'{"name": "' + b"x" * (50 * 1024 * 1024) + b'"}'

# raw JSON texts an agent can send, each refused with invalid_json (400)
UNCLEAN = {
    "lone surrogate value": '{"name": "\\ud800"}',
    "lone surrogate key": '{"\\udfff": "Ann"}',
    "NaN": '{"name": "Ann", "company_id": NaN}',
    "Infinity": '{"name": "Ann", "company_id": -Infinity}',
    "overflowing float": '{"name": "Ann", "company_id": 1e999}',
    "depth 10,000": '{"name": "Ann", "tags": ' + DEEP + "}",
    "depth 65": '{"name": "Ann", "tags": ' + "[" * 65 + "]" * 65 + "}",
}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    app, _ = build_embedded_app(tmp_path / "lib", Settings(admin_token="s3cret"), tmp_path / "tasks.jsonl")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as c:
        yield c


async def _open(client: httpx.AsyncClient) -> str:
    opened = await client.post("/episodes", json={"task_id": "t-create"})
    assert opened.status_code == 201
    return str(opened.json()["episode_id"])


async def _hash(client: httpx.AsyncClient, eid: str) -> str:
    resp = await client.get(f"/services/crm/_compoworld/admin/episodes/{eid}/hash", headers=TOKEN)
    assert resp.status_code == 200
    return str(resp.json()["hash"])


def _json_headers(eid: str) -> dict[str, str]:
    return {"X-Episode-Id": eid, "Content-Type": "application/json"}


# -- the sanitiser itself --------------------------------------------------------------


@pytest.mark.parametrize("text", list(UNCLEAN.values()), ids=list(UNCLEAN))
def test_unclean_json_is_refused_with_invalid_json(text: str) -> None:
    with pytest.raises(InputRefused) as refused:
        load_json(text, Limits())
    assert refused.value.code == "invalid_json" and refused.value.status == 400


def test_size_depth_and_finiteness_limits_are_configurable() -> None:
    assert load_json("[[[1]]]", Limits(max_depth=3)) == [[[1]]]
    with pytest.raises(InputRefused, match="deeper than 2"):
        load_json("[[[1]]]", Limits(max_depth=2))
    with pytest.raises(InputRefused) as big:
        load_json(b"[" + b"1," * 100 + b"1]", Limits(max_bytes=64))
    assert big.value.code == "payload_too_large" and big.value.status == 413
    with pytest.raises(InputRefused):
        check_value({"a": [1.0, float("nan")]}, Limits())
    check_value({"ok": ["é", 1.5, None, True]}, Limits())


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "\\ud800"}',
        '{"a": "\\uDFFF"}',
        '{"\\udbff": 1}',
        '["ok", "\\u00e9", "\\ud83d\\ude00"]',
        '{"a": [[[[1]]]]}',
        "[[[1]]]",
        '{"a": "[[[[[["}',
        '{"a": "caf\u00e9", "b": [[[1]]]}',
        '{"a": 1.5, "b": -0.0, "c": 1e300}',
        '"\\ud800"',
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_the_text_shortcut_refuses_exactly_what_the_walk_refuses(text: str, as_bytes: bool) -> None:
    """``load_json`` skips the walk when the text shows it clean; the verdict is the walk's."""
    raw: str | bytes = text.encode() if as_bytes else text
    for depth in (2, 3, 4, 5, 64):
        limits = Limits(max_depth=depth)
        walked: object
        try:
            value = json.loads(text)
            check_value(value, limits)
            walked = value
        except InputRefused as exc:
            walked = exc.code
        try:
            got: object = load_json(raw, limits)
        except InputRefused as exc:
            got = exc.code
        assert got == walked, (text, depth)


def test_dumps_always_writes_utf8() -> None:
    line = dumps({"content": "bad \ud800 text", "score": float("nan"), "fine": "é"})
    line.encode("utf-8")
    assert json.loads(line) == {"content": "bad \ud800 text", "score": None, "fine": "é"}


# -- service routes --------------------------------------------------------------------


@pytest.mark.parametrize("text", list(UNCLEAN.values()), ids=list(UNCLEAN))
async def test_service_routes_refuse_unclean_json_without_a_state_change(
    client: httpx.AsyncClient, text: str
) -> None:
    eid = await _open(client)
    before = await _hash(client, eid)
    uniform = await client.post("/services/crm/tools/createContact", content=text, headers=_json_headers(eid))
    rest = await client.post("/services/crm/contacts", content=text, headers=_json_headers(eid))
    assert uniform.status_code == rest.status_code == 400
    assert uniform.json()["error"]["code"] == "invalid_json"
    assert await _hash(client, eid) == before


async def test_a_50_mb_body_is_413_on_every_route(client: httpx.AsyncClient) -> None:
    eid = await _open(client)
    before = await _hash(client, eid)
    uniform = await client.post("/services/crm/tools/createContact", content=BIG, headers=_json_headers(eid))
    rest = await client.post("/services/crm/contacts", content=BIG, headers=_json_headers(eid))
    step = await client.post(
        f"/episodes/{eid}/step", content=BIG, headers={"Content-Type": "application/json"}
    )
    mcp = await client.post(f"/episodes/{eid}/mcp", content=BIG, headers={"Content-Type": "application/json"})
    assert [r.status_code for r in (uniform, rest, step, mcp)] == [413, 413, 413, 413]
    assert uniform.json()["error"]["code"] == "payload_too_large"
    assert step.json()["code"] == "payload_too_large"
    assert await _hash(client, eid) == before
    assert (await client.get(f"/episodes/{eid}")).status_code == 200


async def test_the_seed_id_sql_and_path_strings_never_reach_state_or_admin(client: httpx.AsyncClient) -> None:
    eid = await _open(client)
    before = await _hash(client, eid)
    seed = await client.post(
        "/services/crm/tools/createContact", json={"name": "Z"}, headers={"X-Episode-Id": "__seed__"}
    )
    assert seed.status_code == 400 and seed.json()["error"]["code"] == "invalid_episode"
    for path in (
        "/services/crm/tools/..%2Fadmin%2Fepisodes",
        "/services/crm/tools/%2E%2E/admin/episodes",
        "/services/crm/contacts/..%2F..%2F_compoworld%2Fadmin%2Fepisodes",
    ):
        resp = await client.post(path, json={}, headers={"X-Episode-Id": eid})
        assert resp.status_code < 500 and "episodes" not in resp.text.replace(path, "")
    sql = "x'); DROP TABLE contact; --"
    got = await client.get(f"/services/crm/contacts/{sql}", headers={"X-Episode-Id": eid})
    assert got.status_code == 404
    listed = await client.post(
        "/services/crm/tools/listContacts", json={"status": sql}, headers={"X-Episode-Id": eid}
    )
    assert listed.status_code < 500
    assert await _hash(client, eid) == before


# -- orchestrator routes ---------------------------------------------------------------


def _step_body(arguments: str, content: str = '"thinking"') -> str:
    call = '{"id": "c1", "name": "crm__createContact", "arguments": ' + arguments + "}"
    return '{"tool_calls": [' + call + '], "assistant": {"content": ' + content + "}}"


@pytest.mark.parametrize(
    "body",
    [
        _step_body("{}", '"\\ud800"'),
        _step_body('{"name": NaN}'),
        _step_body('{"name": "Ann", "tags": ' + DEEP + "}"),
        '{"tool_calls": [{"id": "\\udc00", "name": "crm__createContact", "arguments": {}}]}',
    ],
    ids=["surrogate in the assistant message", "NaN argument", "depth 10,000 argument", "surrogate call id"],
)
async def test_step_refuses_unclean_bodies_and_the_episode_stays_readable(
    client: httpx.AsyncClient, body: str
) -> None:
    eid = await _open(client)
    before = await _hash(client, eid)
    step = await client.post(
        f"/episodes/{eid}/step", content=body, headers={"Content-Type": "application/json"}
    )
    assert step.status_code == 400 and step.json()["code"] == "invalid_json"
    assert await _hash(client, eid) == before
    trajectory = await client.get(f"/episodes/{eid}")
    assert trajectory.status_code == 200 and len(trajectory.json()["messages"]) == 2
    ok = await client.post(
        f"/episodes/{eid}/step",
        json={"tool_calls": [{"id": "c2", "name": "crm__getContact", "arguments": {"id": "con_000001"}}]},
    )
    assert ok.status_code == 200 and tool_content(ok.json()["results"][0])["success"] is True


@pytest.mark.parametrize(
    "arguments",
    [
        {"name": "\ud800"},
        {"name": "Ann", "company_id": float("inf")},
        {"name": "Ann", "tags": json.loads("[" * 70 + "]" * 70)},
    ],
    ids=["surrogate", "infinity", "depth 70 in the string"],
)
async def test_arguments_as_a_json_string_are_checked_like_a_body(
    client: httpx.AsyncClient, arguments: dict[str, Any]
) -> None:
    """What a model writes as the arguments string gets the same checks: a failure it can read."""
    eid = await _open(client)
    before = await _hash(client, eid)
    text = json.dumps(arguments)  # ASCII escapes: a clean step body carrying unclean arguments
    step = await client.post(
        f"/episodes/{eid}/step",
        json={"tool_calls": [{"id": "c1", "name": "crm__createContact", "arguments": text}]},
    )
    assert step.status_code == 200
    result = tool_content(step.json()["results"][0])
    assert result["success"] is False and result["error"]["code"] == "invalid_json"
    assert await _hash(client, eid) == before
    trajectory = await client.get(f"/episodes/{eid}")
    assert trajectory.status_code == 200
    trajectory.text.encode("utf-8")
    finished = await client.post(f"/episodes/{eid}/finish", json={"answer": "done"})
    assert finished.status_code == 200


async def test_an_oversized_argument_string_is_payload_too_large(client: httpx.AsyncClient) -> None:
    eid = await _open(client)
    text = json.dumps({"name": "x" * (300 * 1024)})
    step = await client.post(
        f"/episodes/{eid}/step",
        json={"tool_calls": [{"id": "c1", "name": "crm__createContact", "arguments": text}]},
    )
    result = tool_content(step.json()["results"][0])
    assert result["error"]["code"] == "payload_too_large"


async def test_open_and_finish_refuse_unclean_bodies(client: httpx.AsyncClient) -> None:
    opened = await client.post(
        "/episodes", content='{"task_id": "\\ud800"}', headers={"Content-Type": "application/json"}
    )
    assert opened.status_code == 400
    eid = await _open(client)
    finish = await client.post(
        f"/episodes/{eid}/finish",
        content='{"answer": "\\udfff"}',
        headers={"Content-Type": "application/json"},
    )
    assert finish.status_code == 400
    assert (await client.post(f"/episodes/{eid}/finish", json={"answer": "ok"})).status_code == 200


async def test_mcp_refuses_a_nan_call_with_the_same_status(client: httpx.AsyncClient) -> None:
    eid = await _open(client)
    rpc = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call",'
        ' "params": {"name": "crm__createContact", "arguments": {"name": NaN}}}'
    )
    resp = await client.post(
        f"/episodes/{eid}/mcp",
        content=rpc,
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    assert resp.status_code == 400 and resp.json()["code"] == "invalid_json"


async def test_group_board_refuses_unclean_reports(client: httpx.AsyncClient) -> None:
    body = '{"episode_id": "e", "verdicts": [true], "expected_n": 1, "timeout_s": NaN}'
    resp = await client.post("/groups/g1/reward", content=body, headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
