"""Benchmark: verified scenario tasks per second (plan on forks, rubric, gold, do-nothing, valid and wrong solutions).

    python bench/bench_taskgen.py [--library DIR] [--n 500] [--seed 7] [--json OUT]

Without ``--library`` it uses the starter library when it has services, else the
hand-built 4-service test library (tests/tasks_library.py) in a temporary folder.
Prints the figures docs/performance.md and docs/tasks.md record: throughput, the solution-family
rates, and the target shares of ``tasks stats``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compoworld.runtime import load_library  # noqa: E402
from compoworld.settings import Settings  # noqa: E402
from orchestrator.tasks.check import check_tasks  # noqa: E402
from orchestrator.tasks.generate import GenerateOptions, TaskGenerator  # noqa: E402
from orchestrator.tasks.stats import shares  # noqa: E402


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
        tasks, report = asyncio.run(generator.run())
        t3 = time.perf_counter()
        check = check_tasks(list(enumerate(tasks, start=1)), [], runtimes)
        t4 = time.perf_counter()
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
        "python": platform.python_version(),
        "cpus": __import__("os").cpu_count(),
    }
    for key, value in figures.items():
        print(f"{key:>62}: {value}")
    print(f"\nverified tasks/s: {figures['verified_tasks_per_s']} (generation + verification, one core)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
