"""An episode's tools over MCP, checked with the official SDK client against uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from tests.orchestrator_fixture import serving, task_create, write_library


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_any_mcp_client_can_list_and_call_an_episodes_tools(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    app, _ = build_embedded_app(tmp_path / "lib", Settings(), None)
    task = task_create().model_dump(mode="json")
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        opened = (await http.post("/episodes", json={"task": task, "mode": "mcp"})).json()
        other = (await http.post("/episodes", json={"task": task, "mode": "mcp"})).json()
        async with (
            streamable_http_client(url + opened["mcp_path"]) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            names = sorted(t.name for t in listed.tools)
            assert names == sorted(t["function"]["name"] for t in opened["tools"])
            assert "crm__createContact" in names and "desk__createContact" in names
            schema = next(t for t in listed.tools if t.name == "crm__createContact").input_schema
            assert schema["required"] == ["name"]
            made = await session.call_tool(
                "crm__createContact", {"name": "Ann Lee", "email": "ann@example.com"}
            )
            assert made.is_error is False and json.loads(text(made))["data"]["id"] == "con_000031"
            bad = await session.call_tool("crm__createContact", {"name": 7})
            assert bad.is_error is True and "invalid_arguments" in text(bad)
        traj = (await http.get(f"/episodes/{opened['episode_id']}")).json()
        assert traj["meta"]["discover_mode"] == "mcp" and traj["meta"]["n_tool_calls"] == 2
        untouched = (await http.get(f"/episodes/{other['episode_id']}")).json()
        assert untouched["meta"]["n_tool_calls"] == 0  # one episode's MCP calls never land in another
        await http.post(f"/episodes/{opened['episode_id']}/finish", json={"answer": ""})
        closed = await http.post(
            url + opened["mcp_path"], json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
        assert closed.status_code == 409
        unknown = await http.post(
            f"{url}/episodes/not-an-episode/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
        assert unknown.status_code == 404


@pytest.mark.parametrize("mode", ["gateway"])
async def test_a_gateway_episode_serves_its_meta_tools_over_mcp(tmp_path: Path, mode: str) -> None:
    write_library(tmp_path / "lib")
    app, _ = build_embedded_app(tmp_path / "lib", Settings(), None)
    task = task_create(distractors=()).model_dump(mode="json")
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        opened = (await http.post("/episodes", json={"task": task, "mode": mode})).json()
        async with (
            streamable_http_client(url + opened["mcp_path"]) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert names == ["list_services", "list_tools", "describe_tool", "call_tool"]
            listing = await session.call_tool("list_tools", {"service": "crm"})
            tools = {t["name"] for t in json.loads(text(listing))["tools"]}
            assert "createContact" in tools  # one service mounted: no name needs its service prefix
