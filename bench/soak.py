"""Soak: steady episode load on the embedded app, resident memory at the start, during and after.

    .venv/bin/python bench/soak.py [--minutes 1] [--concurrency 16] [--writes 5] [--hold 1000]

The embedded app of ``compoworld up`` (the test library: crm, desk, mail; real SQLite forks)
driven in process over ``httpx.ASGITransport``: ``--concurrency`` workers each open an episode,
make ``--writes`` tool calls (creates and reads), finish, and delete it, for ``--minutes``. RSS is
sampled after a warm-up (the baseline), every 10 s, at the end of the load and once every episode
has ended; then ``--hold`` episodes are opened and kept open together (the cost per open episode)
and released. Printed side by side: baseline, peak, end, after release, and the ratios the issue
sets as targets (flat within 10% under load, back within 20% of the baseline afterwards).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from compoworld.cli import build_embedded_app
from compoworld.runtime.app import trim_heap
from compoworld.runtime.pool import rss_mb
from compoworld.settings import Settings
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, write_library


async def _episode(http: httpx.AsyncClient, worker: int, n: int, writes: int) -> int:
    """One episode played to its end and released; returns the tool calls it made."""
    eid = (await http.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
    for w in range(writes):
        if w % 2 == 0:
            args = {"name": f"Soak {worker}-{n}-{w}", "email": f"s{worker}.{n}.{w}@example.com"}
            call = {"id": f"c{w}", "name": "crm__createContact", "arguments": args}
        else:
            call = {"id": f"c{w}", "name": "crm__listContacts", "arguments": {}}
        step = await http.post(f"/episodes/{eid}/step", json={"tool_calls": [call]})
        if step.status_code != 200:
            raise RuntimeError(f"step answered {step.status_code}: {step.text[:300]}")
    await http.post(f"/episodes/{eid}/finish", json={"answer": ""})
    await http.delete(f"/episodes/{eid}")
    return writes


async def soak(minutes: float, concurrency: int, writes: int, hold: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="cw-soak-"))
    library = write_library(work / "lib")
    write_tasks(work / "tasks.jsonl", [task_create()])
    app, _ = build_embedded_app(library, Settings.defaults(admin_token="soak"), work / "tasks.jsonl")
    figures: dict[str, float] = {"episodes": 0, "calls": 0}
    samples: list[float] = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://cw", timeout=60) as http:
        for n in range(concurrency * 2):  # warm-up: every code path and service loaded once
            await _episode(http, -1, n, writes)
        gc.collect()
        figures["baseline_mb"] = rss_mb()
        end = time.monotonic() + minutes * 60
        with Progress(transient=True) as bar:
            job = bar.add_task("soak", total=minutes * 60)

            async def worker(i: int) -> None:
                n = 0
                while time.monotonic() < end:
                    made = await _episode(http, i, n, writes)  # read after the await: no lost update
                    figures["calls"] += made
                    figures["episodes"] += 1
                    n += 1

            async def sampler() -> None:
                start = time.monotonic()
                while time.monotonic() < end:
                    await asyncio.sleep(min(10.0, max(0.1, end - time.monotonic())))
                    samples.append(rss_mb())
                    bar.update(job, completed=time.monotonic() - start)

            await asyncio.gather(sampler(), *(worker(i) for i in range(concurrency)))
        figures["peak_mb"] = max(samples or [rss_mb()])
        figures["end_mb"] = rss_mb()
        gc.collect()
        trim_heap()  # what the orchestrator's reaper does after episodes end (no lifespan over ASGITransport)
        figures["released_mb"] = rss_mb()
        if hold:
            before = rss_mb()
            opened = []
            for _ in range(hold):
                resp = await http.post("/episodes", json={"task_id": "t-create"})
                opened.append(resp.json()["episode_id"])
            figures["held_mb_per_episode"] = (rss_mb() - before) / hold
            figures["held_mb"] = rss_mb()
            for eid in opened:
                await http.delete(f"/episodes/{eid}")
            gc.collect()
            figures["deleted_mb"] = rss_mb()
            trim_heap()
            figures["after_hold_mb"] = rss_mb()
    figures["seconds"] = minutes * 60
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0, help="Length of the steady load.")
    parser.add_argument("--concurrency", type=int, default=16, help="Episodes in flight at once.")
    parser.add_argument("--writes", type=int, default=5, help="Tool calls per episode.")
    parser.add_argument("--hold", type=int, default=1000, help="Episodes then kept open together (0: skip).")
    ns = parser.parse_args()
    if not 0 < ns.minutes <= 60:
        parser.error("--minutes must be in (0, 60]")
    f = asyncio.run(soak(ns.minutes, ns.concurrency, ns.writes, ns.hold))
    table = Table(title=f"soak: {f['episodes']:.0f} episodes, {f['calls']:.0f} calls in {f['seconds']:.0f} s")
    for col in ("RSS MiB", "baseline", "peak under load", "end of load", "all ended", "peak / baseline",
                "ended / baseline"):  # fmt: skip
        table.add_column(col)
    base = f["baseline_mb"]
    table.add_row(
        "", f"{base:.0f}", f"{f['peak_mb']:.0f}", f"{f['end_mb']:.0f}", f"{f['released_mb']:.0f}",
        f"{f['peak_mb'] / base:.2f}x", f"{f['released_mb'] / base:.2f}x",
    )  # fmt: skip
    console = Console()
    console.print(table)
    if "held_mb" in f:
        console.print(
            f"held {ns.hold} open episodes: {f['held_mb']:.0f} MiB ({f['held_mb_per_episode'] * 1024:.0f} KiB "
            f"each); deleted {f['deleted_mb']:.0f} MiB; after the reaper's trim {f['after_hold_mb']:.0f} MiB "
            f"({f['after_hold_mb'] / base:.2f}x baseline)"
        )


if __name__ == "__main__":
    main()
