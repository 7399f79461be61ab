"""A service over HTTP (in-process ASGI): tool route, the spec's REST routes, admin routes, bad input."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_library_app, create_service_app
from compoworld.settings import Settings
from tests.runtime_fixture import write_crm_service

TOKEN = {"Authorization": "Bearer secret"}


@pytest.fixture
def client(tmp_path: Path) -> httpx.AsyncClient:
    settings = Settings(admin_token="secret", max_payload_bytes=4096)
    app = create_service_app(write_crm_service(tmp_path), settings)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc")


async def test_health_and_tools_list_kinds_and_backends(client: httpx.AsyncClient) -> None:
    assert (await client.get("/health")).json()["service"] == "crm"
    tools = {t["function"]["name"]: t for t in (await client.get("/tools")).json()}
    assert (
        tools["createContact"]["x-kind"] == "write" and tools["createContact"]["x-backend"] == "implemented"
    )
    assert tools["sendEmail"]["x-backend"] == "simulated"


async def test_rest_routes_follow_the_spec_paths(client: httpx.AsyncClient) -> None:
    h = {"X-Episode-Id": "e1"}
    assert (await client.post("/admin/episodes", json={"episode_id": "e1"}, headers=TOKEN)).status_code == 201
    created = await client.post("/contacts", json={"name": "Ann", "company_id": 1}, headers=h)
    assert created.status_code == 201
    cid = created.json()["id"]  # a REST route answers the resource itself, not the envelope
    assert (await client.get(f"/contacts/{cid}", headers=h)).json()["name"] == "Ann"
    assert (await client.get(f"/contacts/{cid}")).status_code == 404  # not in the seed view
    patched = await client.patch(f"/contacts/{cid}", json={"status": "customer"}, headers=h)
    assert patched.json()["status"] == "customer"
    listed = await client.get("/contacts", params={"status": "customer", "limit": "2"}, headers=h)
    assert listed.status_code == 200 and len(listed.json()["items"]) == 2
    assert (await client.delete(f"/contacts/{cid}", headers=h)).status_code == 200
    assert (await client.get(f"/contacts/{cid}", headers=h)).status_code == 404


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", 400),
        (b'{"name": 1}', 422),
        (b'{"name": "a", "extra": true}', 422),
        (b'["list"]', 422),
        (b'{"name": "' + b"x" * 5000 + b'"}', 413),
    ],
)
async def test_bad_rest_bodies_are_4xx_and_change_nothing(
    client: httpx.AsyncClient, body: bytes, code: int
) -> None:
    await client.post("/admin/episodes", json={"episode_id": "b1"}, headers=TOKEN)
    before = (await client.get("/admin/episodes/b1/hash", headers=TOKEN)).json()["hash"]
    resp = await client.post("/contacts", content=body, headers={"X-Episode-Id": "b1"})
    assert resp.status_code == code and resp.json()["success"] is False
    assert (await client.get("/admin/episodes/b1/hash", headers=TOKEN)).json()["hash"] == before


async def test_tool_route_returns_envelopes_for_garbage(client: httpx.AsyncClient) -> None:
    # refused before the tool runs: the code's status, as on the REST routes; a tool's own failure: 200
    for body, status in ((b"\xff\xfe", 400), (b"null", 200), (b"42", 200), (b'{"id": {"$gt": 1}}', 200)):
        resp = await client.post("/tools/getContact", content=body, headers={"X-Episode-Id": "g"})
        assert resp.status_code == status and resp.json()["success"] is False
    assert (await client.post("/tools/missing", json={})).status_code == 404
    resp = await client.post("/tools/getContact", json={"id": "x"}, headers={"X-Episode-Id": "bad id!"})
    assert resp.json()["error"]["code"] == "invalid_episode"


async def test_admin_routes_need_the_token(client: httpx.AsyncClient) -> None:
    assert (await client.get("/admin/episodes")).status_code == 401
    assert (await client.get("/admin/episodes", headers={"Authorization": "Bearer wrong"})).status_code == 401
    assert (await client.post("/admin/episodes", json={"episode_id": "a"}, headers=TOKEN)).status_code == 201


async def test_admin_fork_dump_select_log_delete(client: httpx.AsyncClient) -> None:
    await client.post("/admin/episodes", json={"episode_id": "a", "today": "2026-03-01"}, headers=TOKEN)
    await client.post("/tools/createContact", json={"name": "Z"}, headers={"X-Episode-Id": "a"})
    await client.post("/admin/episodes", json={"episode_id": "b", "source": "a"}, headers=TOKEN)
    state = (await client.get("/admin/episodes/b/state", headers=TOKEN)).json()
    new = [r for r in state["tables"]["contact"] if r["name"] == "Z"]
    assert new and new[0]["created_at"] == "2026-03-01T12:00:00Z"
    sel = await client.post(
        "/admin/episodes/b/select",
        json={"queries": [{"table": "contact", "where": {"name": "Z"}}]},
        headers=TOKEN,
    )
    assert sel.json()["results"][0][0]["id"] == new[0]["id"]
    log = (await client.get("/admin/episodes/a/log", headers=TOKEN)).json()["log"]
    assert log[0]["tool"] == "createContact"
    assert (await client.delete("/admin/episodes/a", headers=TOKEN)).status_code == 200
    assert (await client.get("/admin/episodes/a/state", headers=TOKEN)).status_code == 404
    assert (
        await client.post("/admin/episodes", json={"episode_id": "c", "source": "nope"}, headers=TOKEN)
    ).status_code == 404


async def test_library_app_mounts_every_service(tmp_path: Path) -> None:
    write_crm_service(tmp_path)
    app = create_library_app({"crm": ServiceRuntime.from_folder(tmp_path / "crm", Settings())}, Settings())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://lib") as c:
        services = (await c.get("/services")).json()
        assert services[0]["name"] == "crm" and services[0]["implemented"] == 5
        tools = (await c.get("/services/crm/tools")).json()
        assert len(tools) == 7
        out = await c.post("/services/crm/tools/getContact", json={"id": "con_000001"})
        assert out.json()["data"]["name"] == "Person 1"
