"""Benchmark: verified scenario tasks per second (plan on forks, rubric, gold, do-nothing, valid and wrong solutions).

    python bench/bench_taskgen.py [--library DIR] [--n 500] [--seed 7] [--reference-n 100] [--json OUT]

Without ``--library`` it uses the starter library when it has services, else the
hand-built 4-service test library (tests/tasks_library.py) in a temporary folder.
Prints the figures docs/performance.md and docs/tasks.md record: throughput, the solution-family
rates, and the target shares of ``tasks stats``.

Throughput is given as CPU time of this process (one core; a shared machine's other load does
not count) and as wall time. Side by side in the same run, the first ``--reference-n`` tasks are
generated again with ``reuse=False`` (every solution replayed from the seed on eagerly forked
services, changed tables re-read by every grading pass): the same tasks and verdicts, the
previous approach's cost.

    python bench/bench_taskgen.py --library DIR --n 200 --memory [--memory-mb 2560]

``--memory`` runs the generation twice, each in a fresh process so its peak RSS is its own: the old
path (every runtime loaded, then the world index) and the new one (``stream_library``: one service
at a time, runtimes loaded on first use from a bounded pool). It prints peak RSS, RSS after the
index, index time, verified tasks per CPU second and whether the two task files are byte-identical.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compoworld.runtime import load_library  # noqa: E402
from compoworld.settings import Settings  # noqa: E402
from orchestrator.tasks.check import check_tasks  # noqa: E402
from orchestrator.tasks.generate import GenerateOptions, TaskGenerator  # noqa: E402
from orchestrator.tasks.stats import shares, spread  # noqa: E402


def _library(arg: str | None, scratch: Path) -> tuple[Path, str]:
    if arg:
        return Path(arg), "given"
    starter = Settings().library
    if any(starter.glob("*/manifest.json")):
        return starter, "starter"
    from tests.tasks_library import write_library

    return write_library(scratch / "lib"), "test fixture (4 services)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", default=None)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--reference-n", type=int, default=100, help="Tasks for the reuse=False side (0: skip)."
    )
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    parser.add_argument("--memory", action="store_true", help="Old and new path side by side (see above).")
    parser.add_argument("--memory-mb", type=float, default=None, help="The new path's pool budget (MiB).")
    parser.add_argument("--path", choices=("eager", "streamed"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.path is not None:
        return _one_path(args)
    if args.memory:
        return _memory(args)
    import asyncio

    with tempfile.TemporaryDirectory() as scratch:
        library, which = _library(args.library, Path(scratch))
        t0 = time.perf_counter()
        runtimes = load_library(library, Settings(library=library, llm_base_url=None))
        t1 = time.perf_counter()
        generator = TaskGenerator(runtimes, GenerateOptions(n=args.n, seed=args.seed))
        t2 = time.perf_counter()
        c2 = time.process_time()
        tasks, report = asyncio.run(generator.run())
        c3 = time.process_time()
        t3 = time.perf_counter()
        check = check_tasks(list(enumerate(tasks, start=1)), [], runtimes)
        t4 = time.perf_counter()
        reference = _reference(runtimes, args, tasks) if args.reference_n > 0 else None
    figures = {
        "library": which,
        "services": len(runtimes),
        "tools": sum(len(r.tools) for r in runtimes.values()),
        "people": report.people,
        "tasks": report.produced,
        "requested": args.n,
        "load_s": round(t1 - t0, 3),
        "world_index_s": round(t2 - t1, 3),
        "generate_s": round(t3 - t2, 3),
        "verified_tasks_per_cpu_s": round(report.produced / (c3 - c2), 1) if c3 > c2 else 0.0,
        "verified_tasks_per_s": round(report.produced / (t3 - t2), 1) if t3 > t2 else 0.0,
        "check_tasks_per_s": round(len(tasks) / (t4 - t3), 1) if t4 > t3 and tasks else 0.0,
        "share_2plus_services": round(report.multi_service_2, 3),
        "share_3plus_services": round(report.multi_service_3, 3),
        "valid_variants_complete": round(report.solutions.valid_rate, 4),
        "wrong_solutions_caught": round(report.solutions.wrong_caught_rate, 4),
        "noop_mean_rubric_fraction": round(report.solutions.noop_mean, 3),
        "check_valid_variants_complete": round(check.solutions.valid_rate, 4),
        "check_wrong_solutions_caught": round(check.solutions.wrong_caught_rate, 4),
        "check_valid": check.valid,
        **{name: round(value, 3) for name, value in shares(tasks).items()},
        **{
            name: round(value, 3)
            for name, value in spread(tasks, {n: r.manifest.domain for n, r in runtimes.items()}).items()
        },
        "python": platform.python_version(),
        "cpus": __import__("os").cpu_count(),
    }
    if reference is not None:
        figures |= reference
    for key, value in figures.items():
        print(f"{key:>62}: {value}")
    print(
        f"\nverified tasks per CPU second: {figures['verified_tasks_per_cpu_s']} "
        f"(wall: {figures['verified_tasks_per_s']}/s; generation + verification, one core)"
    )
    if reference is not None:
        print(
            f"side by side on the first {reference['reference_tasks']} tasks: reuse "
            f"{reference['reuse_tasks_per_cpu_s']}/CPU s vs reference (reuse=False) "
            f"{reference['reference_tasks_per_cpu_s']}/CPU s = {reference['speedup']}x; "
            f"same tasks: {reference['same_tasks']}"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


def _reference(runtimes: dict[str, Any], args: argparse.Namespace, tasks: list[Any]) -> dict[str, Any]:
    """The first tasks again with and without reuse, each on a fresh cache, timed in CPU seconds."""
    import asyncio

    n = min(args.reference_n, len(tasks))
    out: dict[str, Any] = {"reference_tasks": n}
    made: dict[bool, list[Any]] = {}
    for reuse in (False, True):
        generator = TaskGenerator(runtimes, GenerateOptions(n=n, seed=args.seed, reuse=reuse))
        c0 = time.process_time()
        made[reuse], _ = asyncio.run(generator.run())
        seconds = time.process_time() - c0
        out["reuse_tasks_per_cpu_s" if reuse else "reference_tasks_per_cpu_s"] = round(n / seconds, 1)
    out["speedup"] = round(out["reuse_tasks_per_cpu_s"] / out["reference_tasks_per_cpu_s"], 2)
    out["same_tasks"] = [t.model_dump_json() for t in made[True]] == [
        t.model_dump_json() for t in made[False]
    ]
    return out


def _one_path(args: argparse.Namespace) -> None:
    """One generation run in this process (``--path``): its figures as one JSON line."""
    import asyncio
    import hashlib
    import resource

    from compoworld.runtime.pool import load_library_skipping, rss_mb
    from orchestrator.tasks.library import MEMORY_MB, eager_library, stream_library
    from orchestrator.tasksource import dump_tasks

    library = Path(args.library)
    settings = Settings(library=library, llm_base_url=None)
    c0, t0 = time.process_time(), time.perf_counter()
    if args.path == "eager":
        runtimes, _ = load_library_skipping(library, settings)
        lib = eager_library(runtimes)
    else:
        lib = stream_library(library, settings, memory_mb=args.memory_mb or MEMORY_MB)
    generator = TaskGenerator(lib, GenerateOptions(n=args.n, seed=args.seed))
    c1, t1, indexed = time.process_time(), time.perf_counter(), rss_mb()
    tasks, report = asyncio.run(generator.run())
    c2, t2 = time.process_time(), time.perf_counter()
    pool = lib.runtimes
    figures = {
        "services": len(lib.runtimes),
        "index_s": round(t1 - t0, 2),
        "index_cpu_s": round(c1 - c0, 2),
        "rss_after_index_mb": round(indexed),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "tasks": report.produced,
        "verified_tasks_per_cpu_s": round(report.produced / (c2 - c1), 1) if c2 > c1 else 0.0,
        "verified_tasks_per_s": round(report.produced / (t2 - t1), 1) if t2 > t1 else 0.0,
        "loads": getattr(getattr(pool, "stats", None), "loads", len(lib.runtimes)),
        "evictions": getattr(getattr(pool, "stats", None), "evictions", 0),
        "sha256": hashlib.sha256(dump_tasks(tasks).encode()).hexdigest()[:16],
        **{name: round(value, 3) for name, value in spread(tasks, lib.world.domains).items()},
    }
    print(json.dumps(figures))


def _memory(args: argparse.Namespace) -> None:
    """The old and the new path, each in its own process, side by side."""
    from bench.side_by_side import run_paths

    if not args.library:
        raise SystemExit("--memory needs --library")
    command = ["--library", args.library, "--n", str(args.n), "--seed", str(args.seed)]
    if args.memory_mb is not None:
        command += ["--memory-mb", str(args.memory_mb)]
    paths = {"eager": "all runtimes loaded", "streamed": "streamed, on first use"}
    runs = run_paths(__file__, command, paths, 28, "tasks")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
