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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
