"""The run phase of the container smoke: drive the compose mesh from the host as a user would.

Run by ``scripts/container_smoke.sh`` once ``docker compose up --wait`` reports every container
healthy. Everything goes through the orchestrator's published port on 127.0.0.1:

1. ``GET /services`` lists every service of the starter library with its tool counts.
2. Tasks generated from the library (``compoworld tasks generate``) run through the orchestrator
   container with ``compoworld run --orchestrator-url``: the oracle completes every task, the
   noop agent none.
3. One tool is called over REST (``POST /episodes/{id}/step``) and one over MCP (the official
   SDK client at ``/episodes/{id}/mcp``).
4. The services' ``/admin`` routes are not reachable from the host: no service container
   publishes a port, the orchestrator forwards no service route, and its own ``/admin`` needs
   the token.

Exits 1 with the failed check's reason; prints one line per check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("compoworld")


class CheckFailed(Exception):
    """One smoke check did not hold."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def passed(message: str) -> None:
    print(f"  ok  {message}", flush=True)


def compoworld(*args: str) -> str:
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, check=False, timeout=900)
    expect(
        done.returncode == 0, f"compoworld {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"
    )
    return done.stdout


def library_services() -> dict[str, int]:
    """Service name -> tool count, read from the committed library's manifests."""
    out = {}
    for manifest in sorted((ROOT / "generated_services").glob("*/manifest.json")):
        doc = json.loads(manifest.read_text())
        out[doc["name"]] = len(doc["tools"])
    return out


def check_services(http: httpx.Client) -> None:
    listed = {s["name"]: s for s in http.get("/services").raise_for_status().json()}
    expected = library_services()
    expect(set(listed) == set(expected), f"/services lists {sorted(listed)}, the library {sorted(expected)}")
    wrong = {n: (s["tools"], expected[n]) for n, s in listed.items() if s["tools"] != expected[n]}
    expect(not wrong, f"tool counts differ from the library (served, expected): {wrong}")
    passed(f"/services: {len(listed)} services, {sum(expected.values())} tools, counts match the library")


def run_agents(url: str, work: Path, n_tasks: int) -> list[dict[str, Any]]:
    tasks = work / "tasks.jsonl"
    compoworld("tasks", "generate", "--library", str(ROOT / "generated_services"), "--n", str(n_tasks),
               "--seed", "13", "--out", str(tasks))  # fmt: skip
    rows = [json.loads(line) for line in tasks.read_text().splitlines() if line.strip()]
    expect(len(rows) == n_tasks, f"generated {len(rows)} tasks, asked for {n_tasks}")
    for agent, want_complete in (("oracle", n_tasks), ("noop", 0)):
        out = work / f"{agent}.jsonl"
        compoworld("run", "--tasks", str(tasks), "--agent", agent, "--orchestrator-url", url,
                   "--out", str(out), "--no-progress", "--concurrency", "4")  # fmt: skip
        trajectories = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        expect(len(trajectories) == n_tasks, f"{agent}: {len(trajectories)} trajectories for {n_tasks} tasks")
        complete = sum(1 for t in trajectories if t["meta"]["score"] == 1.0)
        expect(
            complete == want_complete, f"{agent} completed {complete} of {n_tasks} (expected {want_complete})"
        )
        calls = sum(t["meta"]["n_real_tool_calls"] for t in trajectories)
        passed(f"{agent}: {complete}/{n_tasks} tasks complete over HTTP ({calls} service tool calls)")
    return rows


def read_call(task: dict[str, Any], tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A read tool of the task's first service that takes no required argument."""
    prefix = f"{task['services'][0]}__"
    for tool in tools:
        fn = tool["function"]
        if fn["name"].startswith(prefix) and not fn["parameters"].get("required"):
            return fn["name"], {}
    raise CheckFailed(f"no argument-free tool of {task['services'][0]} to call")


def check_rest_call(http: httpx.Client, task: dict[str, Any]) -> None:
    opened = http.post("/episodes", json={"task": task, "mode": "direct"})
    expect(opened.status_code == 201, f"POST /episodes: HTTP {opened.status_code}: {opened.text[:300]}")
    episode = opened.json()
    name, args = read_call(task, episode["tools"])
    step = http.post(f"/episodes/{episode['episode_id']}/step",
                     json={"tool_calls": [{"id": "c1", "name": name, "arguments": args}]})  # fmt: skip
    expect(step.status_code == 200, f"step: HTTP {step.status_code}: {step.text[:300]}")
    envelope = json.loads(step.json()["results"][0]["content"])
    expect(envelope.get("success") is True, f"{name} over REST: {envelope}")
    http.delete(f"/episodes/{episode['episode_id']}").raise_for_status()
    passed(f"REST: {name} answered success through the orchestrator container")


async def check_mcp_call(url: str, task: dict[str, Any]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        opened = (await http.post("/episodes", json={"task": task, "mode": "mcp"})).raise_for_status().json()
        async with (
            streamable_http_client(url + opened["mcp_path"]) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            tools = [{"function": {"name": t.name, "parameters": t.input_schema}} for t in listed.tools]
            name, args = read_call(task, tools)
            result = await session.call_tool(name, args)
        expect(result.is_error is False, f"{name} over MCP: {result.content}")
        await http.delete(f"/episodes/{opened['episode_id']}")
    passed(f"MCP: {len(listed.tools)} tools listed, {name} answered through the orchestrator container")


def check_admin_not_exposed(http: httpx.Client, project: str, token: str) -> None:
    ids = subprocess.run(["docker", "ps", "-q", "--filter", f"label=com.docker.compose.project={project}"],
                         capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    inspected = json.loads(subprocess.run(["docker", "inspect", *ids], capture_output=True, text=True,
                                          check=True).stdout)  # fmt: skip
    published = {}
    for c in inspected:
        service = c["Config"]["Labels"].get("com.docker.compose.service", c["Name"])
        bound = [b for bindings in (c["NetworkSettings"]["Ports"] or {}).values() for b in (bindings or [])]
        if bound:
            published[service] = bound
    expect(set(published) == {"orchestrator"}, f"containers publishing ports: {sorted(published)}")
    expect(len(ids) == len(library_services()) + 1, f"{len(ids)} containers running")
    service = next(iter(library_services()))
    for path in (f"/services/{service}/admin/episodes", "/admin/episodes"):
        answer = http.get(path)
        expect(
            answer.status_code in (401, 404, 405), f"GET {path} without a token: HTTP {answer.status_code}"
        )
    with_token = http.get("/admin/episodes", headers={"Authorization": f"Bearer {token}"})
    expect(
        with_token.status_code == 200, f"orchestrator /admin with the token: HTTP {with_token.status_code}"
    )
    passed(f"/admin: only the orchestrator publishes a port ({len(ids) - 1} services do not); "
           "no service route is forwarded; the orchestrator's /admin needs the token")  # fmt: skip


def write_stats(path: Path, project: str) -> None:
    """Idle memory of every container (docker stats), for docs/performance.md."""
    time.sleep(5)
    out = subprocess.run(["docker", "stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    rows = [line for line in out.splitlines() if line.startswith(project)]
    path.write_text("\n".join(rows) + "\n")
    passed(f"docker stats of {len(rows)} containers written to {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="The orchestrator's published base URL.")
    parser.add_argument("--project", required=True, help="Compose project name.")
    parser.add_argument("--work", type=Path, required=True, help="Scratch folder.")
    parser.add_argument("--tasks", type=int, default=6, help="Generated tasks per agent run.")
    parser.add_argument("--stats", default="", help="Write idle docker stats here first (optional).")
    ns = parser.parse_args()
    token = os.environ["COMPOWORLD_ADMIN_TOKEN"]
    try:
        with httpx.Client(base_url=ns.url, timeout=60) as http:
            if ns.stats:
                write_stats(Path(ns.stats), ns.project)
            check_services(http)
            tasks = run_agents(ns.url, ns.work, ns.tasks)
            check_rest_call(http, tasks[0])
            asyncio.run(check_mcp_call(ns.url, tasks[-1]))
            check_admin_not_exposed(http, ns.project, token)
    except (CheckFailed, httpx.HTTPError, subprocess.CalledProcessError) as exc:
        print(f"  FAILED  {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
