"""Orchestrator replicas behind one Redis (issue 13), each figure side by side with its baseline.

    .venv/bin/python bench/bench_orchestrator_replicas.py [--n 400] [--episodes 300] [--gold-from F]

  tool call through a replica (each step to a random one of three, episodes in Redis)
      / the same call straight to the service                                   (target <= 1.5x)
  the floor under it: the solo orchestrator's step plus a step's two store round trips, each timed
      after an idle gap as long as a direct call (what Redis and the replica sit through in a step)
  N concurrent episodes over the three replicas, one SIGKILLed a third of the way:
      lost episodes, rollouts whose state or reward differs from a solo replay  (target 0 and 0)

Real processes on loopback (``tests/replica_mesh.py``): one service pack, three orchestrator
replicas sharing a ``redis-server`` (Debian's package), and a solo orchestrator for the replay.

The timed episodes run a one-call CRM task (``tests/orchestrator_fixture.task_create``, ~1 KB of
JSON). A generated task carries its gold calls with their results (~200 KB at the median on the
starter library); ``--gold-from tasks.jsonl`` gives the timed task the gold calls of the first
task in that file (``compoworld tasks generate --n 1 --out tasks.jsonl --no-paraphrase``), so the
record an episode keeps is the size a real one is.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from orchestrator.store_redis import RedisEpisodeStore
from tests.orchestrator_fixture import task_create
from tests.redis_fixture import running_redis
from tests.replica_mesh import Driver, Mesh, mesh, rollout_script

PER_EPISODE = 25


def cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) a process has used so far; None where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU used per call by each process of the mesh over a span: what latency hides on a loaded
    machine (a hop waiting for a core) shows up here as time, not as noise."""

    def __init__(self, pids: dict[str, list[int]]) -> None:
        self.pids = pids
        self.start = self._now()

    def _now(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, pids in self.pids.items():
            used = [cpu_s(p) for p in pids]
            out[name] = None if any(u is None for u in used) else sum(u or 0.0 for u in used)
        return out

    def per_call(self, calls: dict[str, int]) -> dict[str, float | None]:
        """Milliseconds of CPU per call since the meter started, ``calls`` per process group."""
        end = self._now()
        return {
            name: None
            if end[name] is None or self.start[name] is None
            else 1e3 * ((end[name] or 0.0) - (self.start[name] or 0.0)) / calls[name]
            for name in self.pids
        }


def timed_task(gold_from: Path | None) -> dict[str, object]:
    """The task the timed episodes run: the one-call CRM task, with a generated task's gold calls."""
    task = task_create().model_dump(mode="json")
    if gold_from is not None:
        first = json.loads(gold_from.read_text().splitlines()[0])
        task["gold_calls"] = first["gold_calls"]
    return task


async def tool_call(
    m: Mesh,
    http: httpx.AsyncClient,
    n: int,
    progress: Progress,
    redis_pid: int | None = None,
    task: dict[str, object] | None = None,
) -> tuple[float, float, float, dict[str, float | None]]:
    """p50 seconds of (step through a random replica, step through the solo orchestrator, direct
    service call), sent in turn so load changes hit all three alike, and the CPU milliseconds per
    call of each process (replicas together, solo, the service pack, Redis) over the timed calls.

    A fresh episode every ``PER_EPISODE`` calls: episodes run at most 30 turns by default.
    """
    rng = random.Random(5)
    body = {"task": task or task_create().model_dump(mode="json"), "max_steps": PER_EPISODE + 1}
    args = {"id": "con_000003"}
    step = {"tool_calls": [{"id": "c1", "name": "crm__getContact", "arguments": args}]}
    direct = f"{m.services}/services/crm/tools/getContact"
    via, solo, straight = [], [], []
    bar = progress.add_task("tool call: replica vs solo vs direct", total=n)
    eid = sid = ""
    pids = {
        "replicas": [p.pid for p in m.procs],
        "solo": [m.others["solo"]],
        "service": [m.others["services"]],
    }
    if redis_pid is not None:
        pids["redis"] = [redis_pid]
    meter = CpuMeter(pids)
    for i in range(n + 50):  # the first 50 of each warm up
        if i == 50:
            meter = CpuMeter(pids)
        if i % PER_EPISODE == 0:
            if eid:
                await http.delete(f"{m.replicas[0]}/episodes/{eid}")
                await http.delete(f"{m.solo}/episodes/{sid}")
            eid = (await http.post(f"{rng.choice(m.replicas)}/episodes", json=body)).json()["episode_id"]
            sid = (await http.post(f"{m.solo}/episodes", json=body)).json()["episode_id"]
        t = time.perf_counter()
        alone = await http.post(f"{m.solo}/episodes/{sid}/step", json=step)
        assert alone.status_code == 200, alone.text
        if i >= 50:
            solo.append(time.perf_counter() - t)
        t0 = time.perf_counter()
        resp = await http.post(f"{rng.choice(m.replicas)}/episodes/{eid}/step", json=step)
        t1 = time.perf_counter()
        out = await http.post(direct, json=args, headers={"X-Episode-Id": eid})
        t2 = time.perf_counter()
        assert resp.status_code == 200 and out.status_code == 200 and out.json()["success"], resp.text
        if i >= 50:
            via.append(t1 - t0)
            straight.append(t2 - t1)
            progress.advance(bar)
    # opens and deletes (one each per PER_EPISODE calls) are counted in too, as they were run
    cpu = meter.per_call({"replicas": n, "solo": n, "service": 3 * n, "redis": n})
    await http.delete(f"{m.replicas[0]}/episodes/{eid}")
    await http.delete(f"{m.solo}/episodes/{sid}")
    return statistics.median(via), statistics.median(solo), statistics.median(straight), cpu


async def store_round_trip(redis_url: str, gap_s: float, n: int = 300) -> tuple[float, float]:
    """p50 seconds of one store script call (a record read that finds nothing) from this process over
    the replicas' lane: back to back, and each after ``gap_s`` idle. On a VM an idle process and an
    idle Redis are woken at a cost, and in a step each call follows such a gap (the service call,
    the HTTP hop), so the second is what a step pays."""
    store = RedisEpisodeStore.from_url(redis_url, prefix=f"rt-{uuid.uuid4().hex[:6]}")
    keys = [store._key("ep", "none"), store._key("log", "none")]
    try:
        out: list[float] = []
        for gap in (0.0, gap_s):
            times = []
            for i in range(n + 20):
                if gap:
                    await asyncio.sleep(gap)
                t = time.perf_counter()
                assert await store.lane(store._get, keys, [0, ""]) == b""
                if i >= 20:
                    times.append(time.perf_counter() - t)
            out.append(statistics.median(times))
        return out[0], out[1]
    finally:
        await store.aclose()


async def concurrent(m: Mesh, http: httpx.AsyncClient, episodes: int, progress: Progress) -> dict[str, float]:
    """The replica test at full size: returns lost episodes, mismatches against the solo replay, time."""
    groups, n = episodes // 4, 4
    steps = groups * sum(len(rollout_script(i)[0]) for i in range(n))
    task = progress.add_task(f"{groups * n} episodes over 3 replicas", total=steps)
    armed, killed = [False], [0]

    def on_step(done: int) -> None:
        progress.update(task, completed=done)
        if armed[0] and not killed[0] and done >= steps // 3:
            m.kill(0)
            killed[0] = done

    gids = [f"b{k}-{uuid.uuid4().hex[:6]}" for k in range(groups)]
    shared = Driver(http, m.replicas, m.services, random.Random(13), on_step=on_step)
    t0 = time.perf_counter()
    got = await shared.run(gids, n, arm=lambda: armed.__setitem__(0, True))
    took = time.perf_counter() - t0
    progress.add_task("solo replay", total=None)
    solo = {o.key: o for o in await Driver(http, [m.solo], m.services, random.Random(13)).run(gids, n)}
    differ = sum(
        (o.results, o.verdicts, o.hashes, o.writes, o.reward)
        != (
            solo[o.key].results,
            solo[o.key].verdicts,
            solo[o.key].hashes,
            solo[o.key].writes,
            solo[o.key].reward,
        )
        for o in got
    )
    return {
        "lost": groups * n - len(got),
        "differ": differ,
        "seconds": took,
        "retries": shared.retries,
        "killed_at": killed[0],
        "steps": steps,
    }


async def main_async(n: int, episodes: int, gold_from: Path | None = None) -> int:
    console = Console()
    task = timed_task(gold_from)
    console.print(f"timed task: {len(json.dumps(task)) / 1024:.1f} KB of JSON")
    with tempfile.TemporaryDirectory() as tmp, running_redis(Path(tmp)) as redis_url:
        limits = httpx.Limits(max_connections=4 * episodes + 16, max_keepalive_connections=64)
        with Progress(console=console, transient=True) as progress:
            progress.add_task("starting the mesh (5 processes)", total=None)
            async with mesh(Path(tmp), redis_url) as m, httpx.AsyncClient(limits=limits, timeout=180) as http:
                via, alone, direct, cpu = await tool_call(m, http, n, progress, redis_pid(redis_url), task)
                console.print(
                    f"tool call p50: {via * 1e3:.2f} ms through a replica, {alone * 1e3:.2f} ms through "
                    f"the solo orchestrator, {direct * 1e3:.2f} ms direct"
                )
                console.print("CPU per call (ms): " + ", ".join(f"{k} {_ms(v)}" for k, v in cpu.items()))
                rt_hot, rt_idle = await store_round_trip(redis_url, direct)
                console.print(
                    f"store round trip p50: {rt_hot * 1e6:.0f} us back to back, {rt_idle * 1e6:.0f} us after "
                    f"{direct * 1e3:.2f} ms idle"
                )
                try:
                    figures = await concurrent(m, http, episodes, progress)
                except Exception:
                    for log in sorted(m.logs.glob("*.log")):  # what the processes said, before they go
                        console.print(f"== {log.name}\n{log.read_text()[-3000:]}")
                    raise
    table = Table(title="orchestrator replicas behind one Redis (loopback)")
    for col in ("measure", "replicas", "baseline", "ratio / result", "target"):
        table.add_column(col)
    ratio = via / direct
    table.add_row(
        f"tool call p50 (n={n})",
        f"{via * 1e3:.2f} ms",
        f"{direct * 1e3:.2f} ms direct ({alone * 1e3:.2f} ms solo orchestrator)",
        f"{ratio:.2f}x ({via / alone:.2f}x solo)",
        "<= 1.5x",
    )
    floor = alone + 2 * rt_idle
    table.add_row(
        "floor: solo step + 2 store round trips",
        f"{floor * 1e3:.2f} ms",
        f"{alone * 1e3:.2f} ms solo + 2 x {rt_idle * 1e6:.0f} us (after an idle gap; {rt_hot * 1e6:.0f} us back to back)",
        f"{floor / direct:.2f}x direct",
        "",
    )
    table.add_row(
        "CPU per call",
        f"{_ms(cpu['replicas'])} replica + {_ms(cpu.get('redis'))} Redis",
        f"{_ms(cpu['solo'])} solo orchestrator; service {_ms(cpu['service'])} a call",
        "",
        "",
    )
    table.add_row(
        f"{episodes} concurrent episodes, replica 0 killed at step "
        f"{figures['killed_at']:.0f}/{figures['steps']:.0f}",
        f"{figures['seconds']:.1f} s, {figures['retries']:.0f} retries",
        "solo replay",
        f"{figures['lost']:.0f} lost, {figures['differ']:.0f} differ",
        "0 and 0",
    )
    console.print(table)
    return 0 if ratio <= 1.5 and figures["lost"] == 0 and figures["differ"] == 0 else 1


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} ms"


def redis_pid(url: str) -> int | None:
    """The pid of the ``redis-server`` listening on ``url``'s port (None when it cannot be found)."""
    port = url.rsplit(":", 1)[-1].split("/")[0]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes()  # redis-server retitles itself "redis-server host:port"
        except OSError:
            continue
        if b"redis-server" in cmd and (f":{port}".encode() in cmd or port.encode() in cmd.split(b"\0")):
            return int(proc.name)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=400, help="Tool calls timed per side.")
    parser.add_argument("--episodes", type=int, default=300, help="Concurrent episodes (a multiple of 4).")
    parser.add_argument(
        "--gold-from",
        type=Path,
        default=None,
        help="A tasks JSONL whose first task's gold calls the timed task carries.",
    )
    ns = parser.parse_args()
    return asyncio.run(main_async(ns.n, ns.episodes, ns.gold_from))


if __name__ == "__main__":
    sys.exit(main())
