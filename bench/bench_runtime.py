"""Runtime benchmarks (issue 2): fork, in-process tool call, HTTP tool call — each against its baseline, side by side.

    .venv/bin/python bench/bench_runtime.py [--service DIR] [--n 3000]

Prints p50 times and the ratios the targets are stated in:
  fork / raw sqlite backup of the same database into memory         (target <= 3x)
  dispatcher update call / raw sqlite select+update+commit           (target <= 10x)
  HTTP tool call via uvicorn / bare FastAPI endpoint, same JSON      (target <= 1.3x)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi import FastAPI, Request

from compoworld.contracts import ToolResult
from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.runtime.app import freeze_heap
from compoworld.settings import Settings


def p50(fn: Callable[[], Any], n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def interleaved(a: Callable[[], Any], b: Callable[[], Any], n: int, rounds: int = 5) -> tuple[float, float]:
    """Run a and b in alternating rounds so machine noise hits both alike; return p50 of each."""
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(p50(a, n // rounds))
        tb.append(p50(b, n // rounds))
    return statistics.median(ta), statistics.median(tb)


def bench_fork(rt: ServiceRuntime, n: int) -> tuple[float, float]:
    seed = rt.store.seed
    counter = iter(range(10**9))

    def raw() -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        seed.backup(conn)
        conn.close()

    def fork() -> None:
        eid = f"b{next(counter)}"
        rt.fork(eid)
        rt.delete(eid)

    return interleaved(fork, raw, n)


def pick_update_tool(rt: ServiceRuntime) -> tuple[str, str, dict[str, Any], str, str]:
    """An implemented update tool, a seed key, arguments that set one string column, the table and column."""
    for bound in rt.tools.values():
        d = bound.defn
        if d.operation != "update" or bound.backend != "implemented" or bound.table is None or not d.pk_arg:
            continue
        table = bound.table
        required = set(d.input_schema.get("required") or [])
        for arg, column in sorted(d.arg_columns.items()):
            if not required <= {d.pk_arg, arg}:
                continue
            col = table.by_name.get(column)
            if (
                col is not None
                and col.type == "string"
                and not col.enum
                and not col.read_only
                and arg != d.pk_arg
            ):
                row = rt.select(None, table.name)[0]
                return d.name, d.pk_arg, {d.pk_arg: row[table.pk], arg: "bench value"}, table.name, column
    raise SystemExit(f"{rt.name}: no implemented update tool with a string column")


def bench_dispatch(rt: ServiceRuntime, n: int) -> tuple[float, float]:
    tool, _, args, table, column = pick_update_tool(rt)
    rt.fork("bench")
    conn = rt.store.episodes["bench"].conn
    pk = rt.store.tables[table].pk
    key = args[next(a for a in args if rt.tools[tool].defn.pk_arg == a)]
    raw_conn = sqlite3.connect(":memory:")
    rt.store.seed.backup(raw_conn)
    sel = f'SELECT * FROM "{table}" WHERE "{pk}" = ?'
    upd = f'UPDATE "{table}" SET "{column}" = ? WHERE "{pk}" = ?'

    def raw() -> None:
        raw_conn.execute(sel, (key,)).fetchone()
        raw_conn.execute(upd, ("bench value", key))
        raw_conn.commit()

    def call() -> None:
        out = rt.dispatch("bench", tool, args)
        assert isinstance(out, ToolResult) and out.success, out

    del conn
    return interleaved(call, raw, n)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_forever(kind: str, folder: str, port: int, tool: str, expected: dict[str, Any]) -> None:
    import uvicorn

    if kind == "ours":
        runtime = ServiceRuntime.from_folder(Path(folder), Settings())
        runtime.fork("http-bench")  # states are forked by the orchestrator's admin call, never by a call
        app: Any = create_service_app(runtime, Settings())
    else:
        app = FastAPI()

        @app.post("/tools/{name}")
        async def endpoint(name: str, request: Request) -> dict[str, Any]:
            await request.json()
            return expected

    freeze_heap()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


def start_server(kind: str, folder: Path, port: int, tool: str, expected: dict[str, Any]) -> Any:
    """A uvicorn server in its own process (so client and server don't share a GIL)."""
    import multiprocessing

    proc = multiprocessing.get_context("spawn").Process(
        target=_serve_forever, args=(kind, str(folder), port, tool, expected), daemon=True
    )
    proc.start()
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{kind} server did not start")


def bench_http(rt: ServiceRuntime, folder: Path, n: int) -> tuple[float, float]:
    """Our tool route vs a bare FastAPI endpoint that reads the same body and returns the same JSON."""
    import http.client

    tool, _, args, _, _ = pick_update_tool(rt)
    rt.fork("http-bench")
    result = rt.dispatch("http-bench", tool, args)
    assert isinstance(result, ToolResult)
    expected = result.envelope()
    ours_port, bare_port = free_port(), free_port()
    procs = [
        start_server("ours", folder, ours_port, tool, expected),
        start_server("bare", folder, bare_port, tool, expected),
    ]
    body = json.dumps(args)
    headers = {"Content-Type": "application/json", "X-Episode-Id": "http-bench"}

    def client(port: int) -> Callable[[], None]:
        conn = http.client.HTTPConnection("127.0.0.1", port)

        def go() -> None:
            conn.request("POST", f"/tools/{tool}", body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            assert resp.status == 200, (port, resp.status, data[:200])

        return go

    try:
        return interleaved(client(ours_port), client(bare_port), n)
    finally:
        for proc in procs:
            proc.terminate()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--service", type=Path, help="A generated service folder (default: a fixture CRM).")
    parser.add_argument("--n", type=int, default=3000)
    ns = parser.parse_args()
    if ns.service is None:
        from tests.runtime_fixture import write_crm_service

        ns.service = write_crm_service(Path(tempfile.mkdtemp()))
    rt = ServiceRuntime.from_folder(ns.service, Settings())
    gc.collect()
    size = sum(len(r) for r in rt.store.seed.iterdump())
    print(f"service {rt.name}: {len(rt.tools)} tools, seed dump ~{size / 1024:.0f} KiB")
    rows = []
    fork, raw_backup = bench_fork(rt, ns.n)
    rows.append(("fork episode / raw sqlite backup", fork, raw_backup, 3.0))
    call, raw_op = bench_dispatch(rt, ns.n)
    rows.append(("dispatcher update / raw select+update+commit", call, raw_op, 10.0))
    ours, bare = bench_http(rt, ns.service, max(ns.n // 3, 500))
    rows.append(("HTTP tool call / bare FastAPI endpoint", ours, bare, 1.3))
    print(f"{'measure':48} {'ours':>10} {'baseline':>10} {'ratio':>7} {'target':>7}")
    for label, a, b, target in rows:
        ratio = a / b
        flag = "ok" if ratio <= target else "MISS"
        print(f"{label:48} {a * 1e6:8.1f}us {b * 1e6:8.1f}us {ratio:6.2f}x {target:5.1f}x {flag}")
    asyncio.run(asyncio.sleep(0))


if __name__ == "__main__":
    main()
