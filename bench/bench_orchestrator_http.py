"""The HTTP leg of the orchestrator benchmarks: one tool call through ``POST /episodes/{id}/step``
versus the same call straight to the service's ``POST /tools/{name}``, both against one embedded
server (uvicorn on 127.0.0.1 in a subprocess) and through one pooled client.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from orchestrator.models import Task

__all__ = ["bench_asgi", "bench_http"]

SERVER = """
import sys, uvicorn
from pathlib import Path
from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
app, _ = build_embedded_app(Path(sys.argv[1]), Settings(llm_base_url=None), None)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False)
"""


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait(client: httpx.AsyncClient, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise RuntimeError("the benchmark server exited")
        try:
            if (await client.get("/health")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.05)
    raise RuntimeError("the benchmark server did not start")


def _succeeded(resp: httpx.Response) -> bool:
    body = resp.json()
    if "results" in body:
        body = json.loads(body["results"][0]["content"])
    return resp.status_code == 200 and body.get("success") is True


async def _alternating(
    client: httpx.AsyncClient, a: dict[str, Any], b: dict[str, Any], n: int
) -> tuple[float, float]:
    """p50 of request ``a`` and of request ``b``, sent alternately so load changes hit both alike."""
    ta, tb = [], []
    last: dict[str, httpx.Response] = {}
    for i in range(2 * n):
        which, spec, sink = ("a", a, ta) if i % 2 == 0 else ("b", b, tb)
        t0 = time.perf_counter()
        last[which] = await client.request(**spec)
        sink.append(time.perf_counter() - t0)
    for resp in last.values():
        assert _succeeded(resp), resp.text[:300]
    return statistics.median(ta), statistics.median(tb)


async def bench_http(
    library: Path, service: str, tool: str, args: dict[str, Any], exposed: str, task: Task, n: int
) -> tuple[float, float]:
    """p50 seconds of (orchestrator step, direct service call) for one read tool call."""
    port = _port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(library), str(port)], env=env)
    try:
        limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=30
        ) as client:
            await _wait(client, proc)
            return await _compare(client, service, tool, args, exposed, task, n)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def bench_asgi(
    library: Path, service: str, tool: str, args: dict[str, Any], exposed: str, task: Task, n: int
) -> tuple[float, float]:
    """The same comparison in process (httpx ASGITransport): the app's own cost, without the network."""
    from compoworld.cli import build_embedded_app
    from compoworld.settings import Settings

    app, _ = build_embedded_app(library, Settings(llm_base_url=None), None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        return await _compare(client, service, tool, args, exposed, task, n)


async def _compare(
    client: httpx.AsyncClient, service: str, tool: str, args: dict[str, Any], exposed: str, task: Task, n: int
) -> tuple[float, float]:
    """Alternate step and direct calls in chunks, one fresh episode per chunk (steps are capped)."""
    body = {"task": task.model_dump(mode="json"), "max_steps": 1000}
    ta, tb = [], []
    for chunk, size in enumerate([50, *[min(500, n - i) for i in range(0, n, 500)]]):
        eid = (await client.post("/episodes", json=body)).json()["episode_id"]
        via_orch = {
            "method": "POST",
            "url": f"/episodes/{eid}/step",
            "json": {"tool_calls": [{"id": "c1", "name": exposed, "arguments": args}]},
        }
        direct = {
            "method": "POST",
            "url": f"/services/{service}/tools/{tool}",
            "json": args,
            "headers": {"X-Episode-Id": eid},
        }
        a, b = await _alternating(client, via_orch, direct, size)
        if chunk:  # the first chunk warms up
            ta.append((a, size))
            tb.append((b, size))
        await client.delete(f"/episodes/{eid}")
    return _weighted(ta), _weighted(tb)


def _weighted(parts: list[tuple[float, int]]) -> float:
    return sum(t * k for t, k in parts) / sum(k for _, k in parts)
