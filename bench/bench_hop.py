"""The orchestrator's hop to a service: ``orchestrator.hop.Hop`` (its lane), aiohttp and httpx, side by side.

    .venv/bin/python bench/bench_hop.py [--n 600] [--concurrency 16]

A real service pack process on loopback (``tests/replica_mesh.py``); the same tool call sent
through each client in turn (p50 latency and this process's CPU per call, so load changes hit all
alike), then ``--concurrency`` callers at once through each (calls per second). ``aiohttp`` is the
hop's own aiohttp path (what it used for every request before the lane, and still uses for https).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from rich.console import Console
from rich.table import Table

from orchestrator.hop import Hop
from tests.redis_fixture import running_redis
from tests.replica_mesh import mesh

ARGS = {"id": "con_000003"}


async def _rate(call: Callable[[], Awaitable[object]], seconds: float, concurrency: int) -> float:
    done = 0

    async def worker() -> None:
        nonlocal done
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            await call()
            done += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done / seconds


async def main(n: int, concurrency: int) -> None:
    console = Console()
    with tempfile.TemporaryDirectory() as tmp, running_redis(Path(tmp)) as redis_url:
        async with mesh(Path(tmp), redis_url, replicas=1) as m:
            url = f"{m.services}/services/crm/tools/getContact"
            hop = Hop(30.0, connect_s=5.0)
            limits = httpx.Limits(max_connections=512, max_keepalive_connections=256)
            async with httpx.AsyncClient(timeout=30.0, limits=limits) as http:

                async def via_httpx() -> object:
                    return (await http.post(url, json=ARGS)).json()

                async def via_hop() -> object:
                    return (await hop.request("POST", url, json=ARGS)).json()

                async def via_aiohttp() -> object:
                    return (await hop._once("POST", url, ARGS, None, None)).json()

                clients = {"Hop": via_hop, "aiohttp": via_aiohttp, "httpx": via_httpx}
                lat: dict[str, list[float]] = {k: [] for k in clients}
                cpu = dict.fromkeys(clients, 0.0)
                for i in range(n + 50):  # the first 50 of each warm up
                    for name, call in clients.items():
                        started, used = time.perf_counter(), time.process_time()
                        await call()
                        if i >= 50:
                            lat[name].append(time.perf_counter() - started)
                            cpu[name] += time.process_time() - used
                rates = dict.fromkeys(clients, 0.0)
                for _ in range(2):  # alternate, so a change of load hits all
                    for name, call in clients.items():
                        rates[name] += await _rate(call, 4.0, concurrency) / 2
            await hop.aclose()
    p50 = {k: statistics.median(v) * 1000 for k, v in lat.items()}
    per_call = {k: v / n * 1e6 for k, v in cpu.items()}
    table = Table(title="orchestrator -> service hop (loopback, one service pack process)")
    for col in ("measure", "Hop (lane)", "aiohttp", "httpx", "Hop vs aiohttp"):
        table.add_column(col)
    table.add_row(f"p50 latency (n={n})", *(f"{p50[k]:.2f} ms" for k in p50),
                  f"{p50['aiohttp'] / p50['Hop']:.2f}x faster")  # fmt: skip
    table.add_row("client CPU per call", *(f"{per_call[k]:.0f} us" for k in per_call),
                  f"{per_call['aiohttp'] / per_call['Hop']:.2f}x less")  # fmt: skip
    table.add_row(f"calls/s ({concurrency} at once)", *(f"{rates[k]:.0f}" for k in rates),
                  f"{rates['Hop'] / rates['aiohttp']:.2f}x more")  # fmt: skip
    console.print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    ns = parser.parse_args()
    asyncio.run(main(ns.n, ns.concurrency))
