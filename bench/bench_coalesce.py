"""A response's head and body in one write (``compoworld.runtime.coalesce``), side by side.

    .venv/bin/python bench/bench_coalesce.py [--n 3000] [--rounds 3]

One uvicorn server process at a time answers a small JSON body (a tool result's size), served
with uvicorn's own httptools protocol ("plain") and then with the coalescing one, alternately.
One client on a kept-alive connection sends a request, reads the answer and waits 0.5 ms (as a
step's hops wait between calls): p50 latency and the server's CPU per request (``/proc``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SERVER = r"""
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
from compoworld.runtime.coalesce import coalescing_protocol

BODY = b'{"success": true, "data": {"id": "con_000003", "name": "Person 3"}, "backend": "implemented"}'


async def answer(request):
    await request.body()
    return Response(BODY, media_type="application/json")


app = Starlette(routes=[Route("/x", answer, methods=["POST"])])
http = coalescing_protocol() if sys.argv[2] == "coalescing" else "httptools"
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False, http=http)
"""

REQUEST = b"POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def calls(port: int, n: int) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        writer.write(REQUEST)
        head = await reader.readuntil(b"\r\n\r\n")
        size = next(
            int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
        )
        await reader.readexactly(size)
        times.append(time.perf_counter() - t)
        await asyncio.sleep(0.0005)
    writer.close()
    return times


async def one(mode: str, n: int) -> tuple[float, float]:
    """p50 seconds and server CPU seconds per request of ``n`` calls to a fresh server."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port), mode], env=env)
    try:
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        await calls(port, 300)  # warm up
        before = cpu_s(proc.pid)
        times = await calls(port, n)
        return statistics.median(times), (cpu_s(proc.pid) - before) / n
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def main_async(n: int, rounds: int) -> None:
    got: dict[str, list[tuple[float, float]]] = {"plain": [], "coalescing": []}
    for _ in range(rounds):
        for mode in got:
            p50, cpu = await one(mode, n)
            got[mode].append((p50, cpu))
            print(f"{mode:>10}: p50 {p50 * 1e6:.0f} us, server CPU {cpu * 1e6:.0f} us a request")
    plain, merged = (statistics.median(p for p, _ in got[m]) for m in ("plain", "coalescing"))
    print(f"median of the rounds' p50: plain {plain * 1e6:.0f} us, coalescing {merged * 1e6:.0f} us")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=3000, help="Calls timed per server.")
    parser.add_argument("--rounds", type=int, default=3, help="Servers of each kind, alternately.")
    ns = parser.parse_args()
    asyncio.run(main_async(ns.n, ns.rounds))


if __name__ == "__main__":
    main()
