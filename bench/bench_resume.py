"""Benchmark: a corpus build killed at several points and restarted gives the cold build's library, byte for byte (issue 12).

    python bench/bench_resume.py [--n 200] [--seed 2] [--kills 3] [--workers 2] [--max-ops 400]
                                 [--corpus DIR] [--keep DIR]

Side by side in one run, on the same documents (a deterministic sample of the pinned corpus,
1 to ``--max-ops`` operations, big providers included so huge documents split; or every document
under ``--corpus``):

1. a cold build (``build_corpus`` in this process, ``--workers`` processes): the reference;
2. the same build run as ``compoworld build --corpus ...`` in its own process group and killed with
   SIGKILL (the whole group: the CLI, its forkserver and its workers, as a dying machine would)
   as soon as its journal holds a share ``k / (kills + 1)`` of the units, for ``k = 1 .. kills``;
   restarted after each kill, and finally run to the end;
3. a no-op rebuild of the reference (nothing changed: every unit up to date).

It prints the wall and CPU time of each (CPU of the build and its workers, as the build counts it),
where each kill landed, and the file trees compared (every file outside ``.build/``, by sha256).
Exits 1 if the resumed library differs from the reference or the no-op rebuild built anything.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.corpus_files import copy_documents, library_files  # noqa: E402
from compoworld.corpus import sample_corpus  # noqa: E402
from compoworld.synth.batch import REPORT_FILE, BatchOptions, build_corpus  # noqa: E402
from compoworld.synth.build import STATE_DIR  # noqa: E402

_JOURNAL = Path(STATE_DIR) / "journal.jsonl"
_KILL_DEADLINE_S = 3600.0


def _journal_lines(library: Path) -> int:
    try:
        return (library / _JOURNAL).read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _run_until(corpus: Path, library: Path, workers: int, kill_at: int | None) -> tuple[float, int, bool]:
    """Run the CLI build; SIGKILL its process group once the journal has ``kill_at`` lines.

    Returns (wall seconds, journal lines when it stopped, whether it was killed).
    """
    command = [sys.executable, "-m", "compoworld.cli", "build", "--corpus", str(corpus)]
    command += ["--out", str(library), "--workers", str(workers), "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    killed = False
    deadline = time.monotonic() + _KILL_DEADLINE_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if kill_at is not None and _journal_lines(library) >= kill_at:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.02)
        if proc.poll() is None and not killed:
            os.killpg(proc.pid, signal.SIGKILL)
            raise SystemExit(f"the build did not finish in {_KILL_DEADLINE_S:.0f} s")
    finally:
        _, err = proc.communicate()
    if not killed and proc.returncode != 0:
        raise SystemExit(f"the resumed build failed (exit {proc.returncode}): {err.decode()[-2000:]}")
    # a killed group's stragglers (the forkserver, a worker mid-unit) are gone before the next start
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return time.perf_counter() - start, _journal_lines(library), killed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-ops", type=int, default=400)
    parser.add_argument("--corpus", type=Path, default=None, help="build every document here instead")
    parser.add_argument("--keep", type=Path, default=None, help="keep the corpus and libraries here")
    ns = parser.parse_args()

    work = ns.keep or Path(tempfile.mkdtemp(prefix="bench-resume-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = ns.corpus or copy_documents(
        sample_corpus(ns.n, ns.seed, min_ops=1, max_ops=ns.max_ops, skip_big_providers=False), work / "corpus"
    )
    reference, resumed = work / "reference", work / "resumed"
    for library in (reference, resumed):
        shutil.rmtree(library, ignore_errors=True)
    options = BatchOptions(workers=ns.workers, progress=True)

    _, cold = build_corpus(corpus, reference, options)
    units = cold.units
    print(f"corpus: {cold.documents} documents -> {units} units ({corpus})")
    print(
        f"cold build: {cold.built} built, {cold.failed} failed, {cold.wall_s:.1f} s wall, {cold.cpu_s:.1f} s CPU"
    )

    landed: list[str] = []
    resumed_wall = 0.0
    for k in range(1, ns.kills + 1):
        target = max(1, round(units * k / (ns.kills + 1)))
        wall, lines, killed = _run_until(corpus, resumed, ns.workers, target)
        resumed_wall += wall
        where = f"kill {k}: journal at {lines}/{units} lines after {wall:.1f} s"
        if not killed:
            where += " (finished before the kill)"
        elif (resumed / REPORT_FILE).exists():
            where += " (report already written)"
        landed.append(where)
        print(where)
    _, final_stats = build_corpus(corpus, resumed, options)
    resumed_wall += final_stats.wall_s
    print(
        f"resumed to the end: {final_stats.built} built, {final_stats.up_to_date} up to date, "
        f"{final_stats.wall_s:.1f} s wall, {final_stats.cpu_s:.1f} s CPU "
        f"(all runs of the killed build together: {resumed_wall:.1f} s wall)"
    )

    _, noop = build_corpus(corpus, reference, options)
    print(
        f"no-op rebuild: {noop.built} built, {noop.up_to_date} up to date, "
        f"{noop.wall_s:.1f} s wall, {noop.cpu_s:.1f} s CPU ({noop.wall_s / max(cold.wall_s, 1e-9):.3f}x the cold build)"
    )

    want, got = library_files(reference), library_files(resumed)
    differing = sorted(p for p in want.keys() | got.keys() if want.get(p) != got.get(p))
    print(f"files compared: {len(want)} in the reference, {len(got)} resumed; {len(differing)} differing")
    for path in differing[:20]:
        print(
            f"  differs: {path} ({'missing' if path not in got else 'extra' if path not in want else 'bytes'})"
        )
    identical = not differing
    print(f"resumed library byte-identical to the cold build: {identical}")
    if ns.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if identical and noop.built == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
