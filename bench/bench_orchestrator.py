"""Orchestrator benchmarks (issue 10), each measured side by side with its baseline in one run.

    .venv/bin/python bench/bench_orchestrator.py [--library DIR] [--n 400] [--live 500] [--skip-http]

  open an episode over 5 services (embedded) / raw sqlite backups of those 5 databases   (target <= 10x)
  tool call through the orchestrator over HTTP / same call straight to the service        (target <= 1.5x)
  500 concurrent live episodes, real tool calls: no lost or leaked writes, RSS < 2 GiB
  grading an episode / raw sqlite reads of the rows its criteria name                   (target <= 10x)

Without --library the services are five copies of the hand-written test CRM (the starter
library may still be empty); with it, the first five services of that library are used.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from bench.bench_orchestrator_http import bench_asgi, bench_http
from bench.bench_orchestrator_scale import bench_live, rss_mib
from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.api import OpenRequest
from orchestrator.discovery import EpisodeReader
from orchestrator.episodes import Orchestrator
from orchestrator.models import CriterionSpec, Task
from orchestrator.naming import direct_name

Timed = Callable[[], Awaitable[Any]]


async def p50(fn: Timed, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


async def interleaved(a: Timed, b: Timed, n: int, rounds: int = 5) -> tuple[float, float]:
    """Alternate rounds of a and b so machine noise hits both alike; p50 of each."""
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(await p50(a, max(1, n // rounds)))
        tb.append(await p50(b, max(1, n // rounds)))
    return statistics.median(ta), statistics.median(tb)


def bench_library(root: Path) -> Path:
    """Five copies of the test CRM, named svc_a..svc_e."""
    from tests.orchestrator_fixture import write_library

    return write_library(root, ("svc_a", "svc_b", "svc_c", "svc_d", "svc_e"))


def five(runtimes: dict[str, ServiceRuntime]) -> list[str]:
    names = sorted(runtimes)[:5]
    if len(names) < 5:
        raise SystemExit(f"need 5 services, the library has {len(names)}")
    return names


def read_tool(rt: ServiceRuntime) -> tuple[str, dict[str, Any], str, str, Any] | None:
    """An implemented read-by-key tool of ``rt`` and a seed key: (tool, args, table, pk, key)."""
    for bound in rt.tools.values():
        d = bound.defn
        if d.operation == "read" and bound.backend == "implemented" and bound.table is not None and d.pk_arg:
            table = bound.table
            row = rt.store.seed.execute(f'SELECT "{table.pk}" FROM "{table.name}" LIMIT 1').fetchone()
            if row is not None:
                return d.name, {d.pk_arg: row[0]}, table.name, table.pk, row[0]
    return None


def grading_task(runtimes: dict[str, ServiceRuntime], names: list[str]) -> Task:
    """A task whose rubric reads one row per service (field_equals / row_unchanged) plus the answer."""
    rubric: list[CriterionSpec] = []
    for i, name in enumerate(names):
        picked = read_tool(runtimes[name])
        if picked is None:
            continue
        _, _, table, pk, key = picked
        row = runtimes[name].select(None, table, {pk: key})[0]
        field = next(c for c in sorted(row) if c != pk)
        kind, params = (
            ("field_equals", {"table": table, "pk": pk, "key": key, "field": field, "value": row[field]})
            if i % 2 == 0
            else ("row_unchanged", {"table": table, "pk": pk, "key": key, "expected": {field: row[field]}})
        )
        rubric.append(CriterionSpec(id=f"c{i}", kind=kind, label="no_op_pass", service=name, params=params))
    rubric.append(CriterionSpec(id="ans", kind="answer_contains", label="no_op_fail", params={"value": "42"}))
    return Task(
        id="bench",
        instruction="bench",
        services=names[:1],
        distractors=names[1:],
        today="2026-01-15",
        gold_calls=[],
        rubric=rubric,
    )


async def bench_open(
    orch: Orchestrator, runtimes: dict[str, ServiceRuntime], task: Task, n: int
) -> tuple[float, float]:
    seeds = [runtimes[s].store.seed for s in [*task.services, *task.distractors]]
    opened: list[str] = []
    conns: list[sqlite3.Connection] = []
    req = OpenRequest(task=task, mode="direct")

    async def open_episode() -> None:
        opened.append((await orch.open(req)).episode_id)

    async def raw() -> None:
        for seed in seeds:
            conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            seed.backup(conn)
            conns.append(conn)

    result = await interleaved(open_episode, raw, n)
    for eid in opened:
        await orch.delete(eid)
    for conn in conns:
        conn.close()
    return result


async def bench_grading(
    orch: Orchestrator, runtimes: dict[str, ServiceRuntime], task: Task, n: int
) -> tuple[float, float, int]:
    eid = (await orch.open(OpenRequest(task=task))).episode_id
    reader = EpisodeReader(orch.directory, eid)
    reads = []
    for c in task.rubric:
        if c.service is not None:
            rt = runtimes[c.service]
            conn = rt.store.episodes[eid].conn
            reads.append(
                (
                    conn,
                    f'SELECT * FROM "{c.params["table"]}" WHERE "{c.params["pk"]}" = ?',
                    (c.params["key"],),
                )
            )
    answer = "the answer is 42"

    async def grade() -> None:
        verdicts = await orch.grader(task.rubric, reader, answer)
        assert all(v.passed for v in verdicts), verdicts

    async def raw() -> None:
        for conn, sql, params in reads:
            conn.execute(sql, params).fetchall()
        assert "42" in answer

    result = await interleaved(grade, raw, n)
    await orch.delete(eid)
    return result[0], result[1], len(reads)


def report(rows: list[tuple[str, str, str, str, str]]) -> None:
    table = Table(title="Orchestrator benchmarks")
    for col in ("measure", "orchestrator", "baseline", "ratio / result", "target"):
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = args.library or bench_library(Path(tmp) / "lib")
        settings = Settings(llm_base_url=None)
        runtimes = load_library(root, settings)
        names = five(runtimes)
        picked = {n: read_tool(runtimes[n]) for n in names}
        task = grading_task(runtimes, names)
        orch = Orchestrator.embedded({n: runtimes[n] for n in names}, settings)
        rows = []
        t_open, t_raw = await bench_open(orch, runtimes, task, args.n)
        rows.append(
            (
                "open, 5 services",
                f"{t_open * 1e6:.0f} µs",
                f"{t_raw * 1e6:.0f} µs",
                f"{t_open / t_raw:.2f}x",
                "<= 10x",
            )
        )
        t_grade, t_reads, n_reads = await bench_grading(orch, runtimes, task, args.n)
        rows.append(
            (
                f"grade {len(task.rubric)} criteria",
                f"{t_grade * 1e6:.0f} µs",
                f"{t_reads * 1e6:.0f} µs ({n_reads} reads)",
                f"{t_grade / t_reads:.2f}x",
                "<= 10x",
            )
        )
        svc = names[0]
        tool = picked[svc]
        if tool is not None:
            call = (svc, tool[0], tool[1], direct_name(svc, tool[0]), task, args.n)
            if not args.skip_http:
                t_orch, t_direct = await bench_http(root, *call)
                rows.append(
                    (
                        "tool call over HTTP (uvicorn)",
                        f"{t_orch * 1e6:.0f} µs",
                        f"{t_direct * 1e6:.0f} µs",
                        f"{t_orch / t_direct:.2f}x",
                        "<= 1.5x",
                    )
                )
            t_orch, t_direct = await bench_asgi(root, *call)
            rows.append(
                (
                    "tool call, in-process ASGI",
                    f"{t_orch * 1e6:.0f} µs",
                    f"{t_direct * 1e6:.0f} µs",
                    f"{t_orch / t_direct:.2f}x",
                    "(app cost only)",
                )
            )
        live = await bench_live(orch, runtimes, names, args.live, args.calls)
        rows.append(
            (
                f"{args.live} live episodes x {args.calls} calls",
                f"{live['calls_per_s']:.0f} calls/s",
                f"lost {live['lost']}, leaked {live['leaked']}, forks left {live['forks_left']}",
                f"RSS {live['rss_mib']:.0f} MiB (peak)",
                "no loss/leak, < 2048 MiB",
            )
        )
        await orch.aclose()
        report(rows)
        print(f"process RSS now {rss_mib():.0f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--library", type=Path, default=None, help="Use the first 5 services of this library."
    )
    parser.add_argument("--n", type=int, default=400, help="Samples per timing.")
    parser.add_argument("--live", type=int, default=500, help="Concurrent live episodes.")
    parser.add_argument("--calls", type=int, default=10, help="Tool calls per live episode.")
    parser.add_argument("--skip-http", action="store_true", help="Skip the HTTP measurement.")
    asyncio.run(main(parser.parse_args()))
