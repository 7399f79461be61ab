"""An episode's tools over MCP (streamable HTTP), with the official ``mcp`` SDK.

One low-level ``Server`` serves every episode at ``/episodes/{episode_id}/mcp``; the episode
id in the path is the capability, read back from the HTTP request each handler receives. The
session manager runs stateless with JSON responses, so any MCP client can list and call an
episode's tools without sticky sessions. A call through MCP is one step of the episode
(recorded in its trajectory like any other).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from compoworld.contracts import ToolResult
from compoworld.errors import CompoWorldError
from orchestrator.api import StepRequest, ToolCall
from orchestrator.episodes import Orchestrator
from orchestrator.errors import http_status

__all__ = ["EpisodeMcp"]

log = logging.getLogger(__name__)


def _episode_id(ctx: ServerRequestContext[Any, Any]) -> str:
    request = ctx.request
    params = getattr(request, "path_params", None) or {}
    episode_id = params.get("episode_id")
    if not isinstance(episode_id, str):
        raise ValueError("this MCP endpoint lives at /episodes/{episode_id}/mcp")
    return episode_id


class EpisodeMcp:
    """ASGI endpoint for ``/episodes/{episode_id}/mcp``; starts its session manager on first use."""

    def __init__(self, orchestrator: Orchestrator) -> None:
        self.orchestrator = orchestrator
        self.server: Server[Any] = Server(
            "compoworld-episode",
            version="1",
            instructions="The tools of one CompoWorld episode. Results are the tool-result envelope as JSON text.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self._manager: StreamableHTTPSessionManager | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._start_lock = asyncio.Lock()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schemas = await self.orchestrator.exposed_tools(_episode_id(ctx))
        tools = [
            types.Tool(
                name=s["function"]["name"],
                description=s["function"].get("description") or None,
                input_schema=s["function"].get("parameters") or {"type": "object", "properties": {}},
            )
            for s in schemas
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        episode_id = _episode_id(ctx)
        call = ToolCall(id=f"mcp_{ctx.request_id}", name=params.name, arguments=params.arguments or {})
        try:
            step = await self.orchestrator.step(episode_id, StepRequest(tool_calls=[call]))
        except CompoWorldError as exc:
            text = json.dumps(ToolResult.fail("episode_closed", str(exc)).envelope())
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        if not step.results:  # the episode hit its wall-time limit before the call ran
            text = json.dumps(ToolResult.fail("episode_closed", step.finish_reason).envelope())
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        content = step.results[0].content
        try:
            failed = not ToolResult.from_envelope(json.loads(content)).success
        except ValueError:
            failed = False
        return types.CallToolResult(content=[types.TextContent(text=content)], is_error=failed)

    async def _ensure_running(self) -> StreamableHTTPSessionManager:
        async with self._start_lock:
            if self._manager is None:
                manager = StreamableHTTPSessionManager(self.server, json_response=True, stateless=True)
                started = asyncio.Event()
                self._stop = asyncio.Event()

                async def hold() -> None:
                    async with manager.run():
                        started.set()
                        await self._stop.wait()

                self._runner = asyncio.create_task(hold())
                await started.wait()
                self._manager = manager
            return self._manager

    async def aclose(self) -> None:
        """Stop the session manager (a later request starts a fresh one)."""
        if self._runner is not None:
            self._stop.set()
            await self._runner
        self._runner, self._manager = None, None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = scope.get("path_params", {}).get("episode_id", "")
        try:
            record = await self.orchestrator.store.get(episode_id)
            if record is None or record.terminal:
                reason = "unknown episode" if record is None else f"episode is {record.state.value}"
                raise_status = 404 if record is None else 409
                await _json(send, raise_status, {"detail": f"{reason}: no MCP endpoint"})
                return
        except CompoWorldError as exc:
            await _json(send, http_status(exc), {"detail": str(exc)})
            return
        manager = await self._ensure_running()
        await manager.handle_request(scope, receive, send)


async def _json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
