"""Idle memory of service containers: one service alone, and packs, side by side (issue 13).

    .venv/bin/python bench/bench_serving_memory.py [--pack 25] [--docker]

Every configuration is started with the image's entrypoint (``python -m
compoworld.deploy.entrypoint serve NAME...``), left idle until healthy plus a few seconds, and
measured: VmRSS of the serving process (local processes), or ``docker stats`` memory of the
container (``--docker``: needs a reachable engine and the image ``$CW_IMAGE``, e.g. from inside
``CW_SMOKE_AFTER`` of ``scripts/container_smoke.sh``). Baselines in the same run: bare FastAPI
under uvicorn (one ``/health`` route) and, locally, the full CLI's ``compoworld serve``.

The pack is the starter library plus services built from a deterministic corpus sample until it
holds ``--pack`` services. Targets: one service <= 80 MiB; a pack <= 8 MiB per service beyond
the first (pack minus the median single service, over pack size - 1).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STARTER = ROOT / "generated_services"
BARE = """import sys, uvicorn
from fastapi import FastAPI
app = FastAPI()
@app.get("/health")
def health():
    return {"status": "ok"}
a = sys.argv
uvicorn.run(app, host=a[a.index("--host") + 1], port=int(a[a.index("--port") + 1]), log_level="warning")
"""
SINGLES = ("mailsquad", "crm", "accounting")  # smallest, typical, largest manifest of the starter set
# Where a container sees the pack's library. Not /lib: Debian's /lib is the merged-usr link that holds
# the ELF loader, and a mount over it leaves no process able to start ("exec ...: no such file").
MOUNT = "/srv/pack-lib"
Measure = Callable[[list[str], Path, str], float]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    from compoworld.deploy.healthcheck import check

    return check(url, timeout_s=2.0) is None


def build_pack_library(size: int, work: Path) -> Path:
    """The starter services plus corpus-sample services, copied into one folder of ``size``."""
    library = work / "pack-lib"
    library.mkdir(parents=True, exist_ok=True)
    starter = sorted(p.parent for p in STARTER.glob("*/manifest.json"))
    for folder in starter[:size]:
        shutil.copytree(folder, library / folder.name, dirs_exist_ok=True)
    missing = size - min(size, len(starter))
    if missing:
        from compoworld.corpus import sample_corpus
        from compoworld.synth.build import build_library

        docs = sample_corpus(missing + 4, seed=5)
        report = build_library([d.path for d in docs], work / "extra", progress=True)
        built = [Path(s.folder) for s in report.services if s.verified][:missing]
        if len(built) < missing:
            raise SystemExit(f"only {len(built)} corpus services built; {missing} needed")
        for folder in built:
            shutil.copytree(folder, library / folder.name, dirs_exist_ok=True)
    return library


def local_rss(argv: list[str], library: Path, label: str) -> float:
    """VmRSS (MiB) of a local serving process once idle."""
    port = _port()
    env = os.environ | {"COMPOWORLD_LIBRARY": str(library), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, *argv, "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{label}: the server did not become healthy")
            time.sleep(0.2)
        time.sleep(3)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        return kib / 1024
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def docker_mem(argv: list[str], library: Path, label: str) -> float:
    """``docker stats`` memory (MiB) of a container running the image with ``argv`` once idle."""
    image = os.environ.get("CW_IMAGE", "compoworld:latest")
    name = f"cw-bench-mem-{os.getpid()}"
    run = ["docker", "run", "-d", "--name", name, "-e", "COMPOWORLD_ADMIN_TOKEN=bench",
           "-v", f"{library}:{MOUNT}:ro", "-e", f"COMPOWORLD_LIBRARY={MOUNT}"]  # fmt: skip
    if argv[:2] == ["-m", "compoworld.deploy.entrypoint"]:
        run += [image, *argv[2:]]
    else:  # a script in the library folder (the bare FastAPI baseline)
        run += ["--entrypoint", "python", image, *(a.replace(str(library), MOUNT) for a in argv)]
    run += ["--host", "0.0.0.0", "--port", "8000"]
    subprocess.run(run, check=True, capture_output=True)
    try:
        deadline = time.monotonic() + 180
        probe = ["docker", "exec", name, "python", "-m", "compoworld.deploy.healthcheck"]
        while subprocess.run(probe, capture_output=True, check=False).returncode != 0:
            state = _state(name)
            if not state.startswith("running") or time.monotonic() > deadline:
                logs = subprocess.run(
                    ["docker", "logs", "--tail", "40", name], capture_output=True, text=True
                )
                raise SystemExit(  # what the container said, and whether it still runs
                    f"{label}: the container did not become healthy ({state})\n{logs.stdout}{logs.stderr}"
                )
            time.sleep(0.5)
        time.sleep(5)
        fmt = ["docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", name]
        usage = subprocess.run(fmt, capture_output=True, text=True, check=True).stdout.split("/")[0]
        return _mib(usage.strip())
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)


def _state(name: str) -> str:
    """The container's state as ``docker inspect`` tells it: "running exit 0", "exited exit 1"..."""
    fmt = "{{.State.Status}} exit {{.State.ExitCode}}"
    done = subprocess.run(["docker", "inspect", "-f", fmt, name], capture_output=True, text=True)
    return done.stdout.strip() or f"unknown ({done.stderr.strip()})"


def _mib(text: str) -> float:
    units = {
        "KiB": 1 / 1024,
        "MiB": 1.0,
        "GiB": 1024.0,
        "kB": 1e3 / 2**20,
        "MB": 1e6 / 2**20,
        "GB": 1e9 / 2**20,
    }
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text.rstrip("B")) / 2**20


def run(measure: Measure, pack_lib: Path, local: bool) -> dict[str, float]:
    entry = ["-m", "compoworld.deploy.entrypoint", "serve"]
    bare = pack_lib / "bare_fastapi.py"  # beside the service folders, so a container sees it too
    bare.write_text(BARE)
    out: dict[str, float] = {"bare FastAPI + uvicorn": measure([str(bare)], pack_lib, "bare")}
    if local:
        out["full CLI: compoworld serve crm"] = measure(
            ["-m", "compoworld.cli", "serve", "crm"], pack_lib, "cli"
        )
    for name in SINGLES:
        out[f"serve {name}"] = measure([*entry, name], pack_lib, name)
    names = sorted(p.parent.name for p in pack_lib.glob("*/manifest.json"))
    out[f"serve pack of {len(names)}"] = measure([*entry, *names], pack_lib, "pack")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pack", type=int, default=25, help="Services in the pack.")
    parser.add_argument("--docker", action="store_true", help="Measure containers (docker stats) instead.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    ns = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cw-mem-"))
    work.chmod(0o755)  # the image runs as uid 10001: the mounted library must be readable to it
    try:
        pack_lib = build_pack_library(ns.pack, work)
        figures = run(docker_mem if ns.docker else local_rss, pack_lib, not ns.docker)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    singles = [figures[f"serve {n}"] for n in SINGLES]
    pack = figures[f"serve pack of {ns.pack}"]
    per_extra = (pack - statistics.median(singles)) / (ns.pack - 1)
    where = "container (docker stats)" if ns.docker else "local process (VmRSS)"
    print(f"\nidle memory, {where}")
    for label, mib in figures.items():
        print(f"  {label:34s} {mib:7.1f} MiB")
    print(f"  {'per service beyond the first':34s} {per_extra:7.1f} MiB   (target <= 8)")
    print(f"  {'largest single service':34s} {max(singles):7.1f} MiB   (target <= 80)")
    if ns.json:
        ns.json.write_text(json.dumps(figures | {"per_extra_service": per_extra}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
