"""One episode of a built service over real HTTP (ASGI), as a client of the real API sends it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from compoworld.runtime import ServiceRuntime
from compoworld.runtime.app import create_service_app
from compoworld.settings import Settings

__all__ = ["EpisodeClient"]


class EpisodeClient:
    """The service of ``folder`` with episode ``ep-1`` forked; every request carries that episode."""

    def __init__(self, folder: Path) -> None:
        runtime = ServiceRuntime.from_folder(folder, Settings())
        runtime.fork("ep-1")
        self.app = create_service_app(runtime, Settings())

    def send(self, method: str, url: str, **kw: Any) -> httpx.Response:
        """One request (``httpx`` keyword arguments: ``json``, ``params``, ``content``, ``headers``)."""

        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
                headers = {"X-Episode-Id": "ep-1", **kw.pop("headers", {})}
                return await client.request(method, url, headers=headers, **kw)

        return asyncio.run(go())

    def amz(self, target: str, body: dict[str, Any]) -> httpx.Response:
        """``POST /`` as an AWS SDK sends a JSON-protocol request (``target`` "" sends no header)."""
        headers = {"Content-Type": "application/x-amz-json-1.1"}
        if target:
            headers["X-Amz-Target"] = target
        return self.send("POST", "/", headers=headers, content=json.dumps(body).encode())
