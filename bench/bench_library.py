"""Hosting a large library with ``compoworld up``: first answer, cold first calls, RSS after many services.

    .venv/bin/python bench/bench_library.py --library /tmp/lib --calls 200
    .venv/bin/python bench/bench_library.py --library generated_services --replicate 2000 \\
        --out /tmp/lib2000 --calls 200 --baseline 100

``--replicate N`` first writes a library of N services made of renamed copies of the given
one's folders (and its ``index.json``, as a corpus build writes it). Then, each in its own
process on 127.0.0.1: ``compoworld up`` (services load on first use) is timed from start to
its first ``GET /services`` answer; one call is made on each of ``--calls`` random services
(a read of the seed view through the uniform tool route; the first call of a cold service
includes loading it); the server's RSS is read after the calls. Side by side, ``up --preload``
on the first ``--baseline`` services (every service loaded at start, as ``up`` did before)
gives the start time and RSS the eager way costs per service.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compoworld.catalog import INDEX_FILE, index_rows, read_manifest  # noqa: E402
from compoworld.manifest import library_folders  # noqa: E402


def replicate(base: Path, n: int, out: Path) -> Path:
    """A library of ``n`` services: renamed copies of ``base``'s folders, with an index.json."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    folders = library_folders(base)
    texts = {f.name: (f / "manifest.json").read_text() for f in folders}
    rows = {r["name"]: r for r in index_rows(base, texts, {}, lambda _: None)}
    out_rows = []
    for i in range(n):
        src = folders[i % len(folders)]
        name = src.name if i < len(folders) else f"{src.name}_c{i // len(folders)}"
        dst = out / name
        dst.mkdir()
        for item in src.iterdir():  # every file but the manifest is the original's (read-only use)
            if item.name != "manifest.json":
                (dst / item.name).symlink_to(item.resolve())
        key = f'\n  "name": {json.dumps(src.name)}'  # the top-level name (indent 2, keys sorted)
        if key not in texts[src.name]:
            raise SystemExit(f"{src}: manifest.json is not in the build's layout; cannot rename a copy")
        (dst / "manifest.json").write_text(texts[src.name].replace(key, f'\n  "name": {json.dumps(name)}', 1))
        out_rows.append(rows[src.name] | {"name": name})
    (out / INDEX_FILE).write_text(json.dumps({"services": out_rows}, sort_keys=True))
    return out


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used: on a shared machine, the figure to trust."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(library: Path, extra: list[str], timeout_s: float) -> tuple[subprocess.Popen[bytes], str, float]:
    port = _port()
    cmd = [sys.executable, "-m", "compoworld.cli", "up", "--library", str(library), "--port", str(port)]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd + extra, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    while time.perf_counter() - start < timeout_s:
        try:
            if httpx.get(url + "/services", timeout=5).status_code == 200:
                return proc, url, time.perf_counter() - start
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"compoworld up exited {proc.returncode}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"no answer within {timeout_s} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _a_read(folder: Path) -> tuple[str, dict[str, Any]] | None:
    """A read tool of the service that needs no argument (a list), if it has one."""
    manifest = read_manifest(folder)
    for tool in manifest.tools:
        required = tool.input_schema.get("required") or []
        if tool.kind == "read" and tool.backend == "implemented" and not required:
            return tool.name, {}
    return None


def hosted(library: Path, calls: int, seed: int, timeout_s: float) -> dict[str, Any]:
    proc, url, first = _start(library, [], timeout_s)
    try:
        listed = httpx.get(url + "/services", timeout=60).json()
        names = [r["name"] for r in listed]
        picked = random.Random(seed).sample(names, min(calls, len(names)))
        start_cpu = _cpu_s(proc.pid)
        cold: list[float] = []
        cold_cpu: list[float] = []
        kinds = {"tool call": 0, "tool listing": 0}
        slowest: list[tuple[float, str, str]] = []
        with httpx.Client(base_url=url, timeout=120) as http:
            for name in picked:
                read = _a_read(library / name)
                cpu = _cpu_s(proc.pid)
                start = time.perf_counter()
                if read is not None:
                    resp = http.post(f"/services/{name}/tools/{read[0]}", json=read[1])
                    kinds["tool call"] += 1
                else:
                    resp = http.get(f"/services/{name}/tools")
                    kinds["tool listing"] += 1
                cold.append(time.perf_counter() - start)
                cold_cpu.append(_cpu_s(proc.pid) - cpu)
                slowest.append((cold[-1], name, "tool call" if read is not None else "tool listing"))
                if resp.status_code >= 500:
                    print(f"  {name}: HTTP {resp.status_code} {resp.text[:200]}", file=sys.stderr)
        health = httpx.get(url + "/health", timeout=30).json()
        rss = _rss_mib(proc.pid)
    finally:
        _stop(proc)
    cold.sort()
    cold_cpu.sort()
    return {
        "services": len(names),
        "first_answer_s": round(first, 2),
        "first_answer_cpu_s": round(start_cpu, 2),
        "calls": len(cold),
        "first_calls": kinds,
        "cold_call_p50_ms": round(statistics.median(cold) * 1000, 1) if cold else None,
        "cold_call_p90_ms": round(cold[int(0.9 * (len(cold) - 1))] * 1000, 1) if cold else None,
        "cold_call_max_ms": round(cold[-1] * 1000, 1) if cold else None,
        "cold_call_cpu_p50_ms": round(statistics.median(cold_cpu) * 1000, 1) if cold_cpu else None,
        "cold_call_cpu_p90_ms": round(cold_cpu[int(0.9 * (len(cold_cpu) - 1))] * 1000, 1)
        if cold_cpu
        else None,
        "slowest_first_calls": [
            f"{n} ({k}) {t * 1000:.0f} ms" for t, n, k in sorted(slowest, reverse=True)[:3]
        ],
        "resident_after": health.get("resident"),
        "rss_after_mib": round(rss, 1),
    }


def eager(library: Path, n: int, timeout_s: float, scratch: Path) -> dict[str, Any]:
    """``up --preload`` on the first ``n`` services (linked into a scratch library)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    for folder in library_folders(library)[:n]:
        (scratch / folder.name).symlink_to(folder.resolve())
    proc, _, first = _start(scratch, ["--preload", "--max-resident", str(n)], timeout_s)
    rss, cpu = _rss_mib(proc.pid), _cpu_s(proc.pid)
    _stop(proc)
    return {
        "services": n,
        "first_answer_s": round(first, 2),
        "first_answer_cpu_s": round(cpu, 2),
        "rss_mib": round(rss, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--replicate", type=int, help="First write a library of this many services.")
    parser.add_argument("--out", type=Path, default=Path("/tmp/compoworld-bench-library"))
    parser.add_argument("--calls", type=int, default=200, help="Random services to call once each.")
    parser.add_argument("--baseline", type=int, default=0, help="Also time `up --preload` on this many.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args()
    library = args.library
    if args.replicate:
        start = time.perf_counter()
        library = replicate(args.library, args.replicate, args.out)
        print(f"wrote {library} ({args.replicate} services) in {time.perf_counter() - start:.1f} s")
    figures: dict[str, Any] = {
        "library": str(library),
        "lazy": hosted(library, args.calls, args.seed, args.timeout),
    }
    print("up (load on first use):", json.dumps(figures["lazy"]))
    if args.baseline:
        figures["eager"] = eager(
            library, args.baseline, args.timeout, args.out.with_name(args.out.name + "-eager")
        )
        print("up --preload (baseline):", json.dumps(figures["eager"]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
