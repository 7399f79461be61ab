"""The scale leg of the orchestrator benchmarks: many live episodes at once, each doing real
writes and reads in the embedded deployment; every write must land in its own episode only.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from compoworld.runtime import ServiceRuntime
from orchestrator.api import OpenRequest, StepRequest, ToolCall
from orchestrator.episodes import Orchestrator
from orchestrator.models import Task

__all__ = ["bench_live", "rss_mib"]


def rss_mib() -> float:
    """Resident set size of this process now (Linux /proc), in MiB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _free_text(schema: dict[str, Any]) -> bool:
    """A string argument any short text fits (no format, pattern, enum or tight length bound)."""
    if schema.get("type") != "string" or any(k in schema for k in ("format", "pattern", "enum", "const")):
        return False
    return int(schema.get("maxLength", 64)) >= 16 and int(schema.get("minLength", 0)) <= 6


def _create_tool(rt: ServiceRuntime) -> tuple[str, str, str, str]:
    """An implemented create tool that one free-text argument satisfies: (tool, arg, table, column)."""
    for bound in rt.tools.values():
        d = bound.defn
        if d.operation != "create" or bound.backend != "implemented" or bound.table is None:
            continue
        props = d.input_schema.get("properties", {})
        required = list(d.input_schema.get("required", []) or [])
        for arg in required or sorted(props):
            column = d.arg_columns.get(arg)
            if set(required) - {arg} or not _free_text(props.get(arg, {})):
                continue
            if column and bound.table.by_name.get(column):
                return d.name, arg, bound.table.name, column
    raise SystemExit(f"{rt.name}: no implemented create tool that one free-text argument satisfies")


async def bench_live(
    orch: Orchestrator, runtimes: dict[str, ServiceRuntime], names: list[str], live: int, calls: int
) -> dict[str, Any]:
    """Open ``live`` episodes, run ``calls`` creates+reads in each concurrently, check isolation."""
    svc = names[0]
    tool, arg, table, column = _create_tool(runtimes[svc])
    exposed = next(
        t["function"]["name"]
        for t in (await orch.open(OpenRequest(task=_task(names)))).tools
        if t["function"]["name"].endswith(f"__{tool}") and t["function"]["name"].startswith(svc)
    )
    opened = [await orch.open(OpenRequest(task=_task(names), max_steps=calls + 5)) for _ in range(live)]
    peak = rss_mib()

    async def drive(i: int, eid: str) -> None:
        nonlocal peak
        for j in range(calls):
            step = StepRequest(
                tool_calls=[ToolCall(id=f"c{j}", name=exposed, arguments={arg: f"ep{i}-w{j}"})]
            )
            out = await orch.step(eid, step)
            assert json.loads(out.results[0].content)["success"], out.results[0].content
            await asyncio.sleep(0)  # interleave the episodes
        peak = max(peak, rss_mib())

    t0 = time.perf_counter()
    await asyncio.gather(*(drive(i, o.episode_id) for i, o in enumerate(opened)))
    elapsed = time.perf_counter() - t0
    lost = leaked = 0
    for i, o in enumerate(opened):
        mine = {f"ep{i}-w{j}" for j in range(calls)}
        rows = runtimes[svc].select(o.episode_id, table, None)
        written = {r[column] for r in rows if isinstance(r.get(column), str) and r[column].startswith("ep")}
        lost += len(mine - written)
        leaked += len(written - mine)
    seed_rows = runtimes[svc].select(None, table, None)
    leaked += sum(1 for r in seed_rows if str(r.get(column, "")).startswith("ep"))
    for o in opened:
        await orch.finish(o.episode_id, "")
        await orch.delete(o.episode_id)
    for eid in await orch.store.ids():
        await orch.delete(eid)
    forks_left = sum(len(runtimes[n].store.episodes) for n in names)
    return {
        "calls_per_s": live * calls / elapsed,
        "lost": lost,
        "leaked": leaked,
        "forks_left": forks_left,
        "rss_mib": peak,
    }


def _task(names: list[str]) -> Task:
    return Task(
        id="live",
        instruction="bench",
        services=names[:2],
        distractors=names[2:],
        today="2026-01-15",
        gold_calls=[],
        rubric=[],
    )
