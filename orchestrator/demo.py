"""``compoworld demo``: the main job end to end, offline, in about a minute.

Load a library → generate a handful of verified tasks → run them with the oracle and the
do-nothing agent on an in-process orchestrator (graded by the rubric) → write trajectories
and the report (tables + PNG) → hand the oracle's trajectories to ``exports`` (the SFT and
verl exports live in the trainer, a layer above; the application passes them in).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from rich.console import Console

from compoworld.errors import CompoWorldError
from compoworld.runtime.service import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.agents import create_agent
from orchestrator.episodes import Orchestrator
from orchestrator.models import Task
from orchestrator.report import plot_report, summarize, tables
from orchestrator.runner import RunConfig, RunSummary, run_tasks
from orchestrator.tasks.generate import GenerateOptions, generate_tasks
from orchestrator.tasksource import read_tasks, write_tasks

__all__ = ["Exports", "run_demo"]

console = Console()


Exports = Callable[[Path, Path, Path], list[tuple[str, str, str]]]
"""(out folder, oracle trajectories, task file) -> summary rows of what was exported."""


def _generate(runtimes: dict[str, ServiceRuntime], n: int, seed: int) -> tuple[list[Task], str]:
    """Tasks from the task generator (offline: no paraphrasing), and a one-line note."""
    options = GenerateOptions(n=n, seed=seed, distractors=(1, 3), attempts=4)
    tasks, report = generate_tasks(runtimes, options)
    return list(tasks), f"{report.produced} of {report.requested} tasks in {report.seconds:.1f} s"


async def _run_agents(
    orch: Orchestrator, tasks: list[Task], out: Path, agents: list[str], cfg: RunConfig
) -> dict[str, RunSummary]:
    results = {}
    for name in agents:
        agent = create_agent(name)
        results[name] = await run_tasks(orch, agent, tasks, cfg, out / f"traj_{name}.jsonl", progress=True)
        await agent.aclose()
    await orch.aclose()
    return results


def run_demo(
    out: Path,
    settings: Settings,
    library: Path | None = None,
    tasks_file: Path | None = None,
    n_tasks: int = 8,
    seed: int = 0,
    mode: Literal["direct", "gateway", "mcp"] = "gateway",
    rollouts: int = 1,
    exports: Exports | None = None,
) -> list[tuple[str, str, str]]:
    """Everything the demo does; returns the summary rows (step, result, where)."""
    started = time.perf_counter()
    settings = settings.model_copy(update={"llm_base_url": None})  # offline, whatever it says
    root = library or settings.library
    out.mkdir(parents=True, exist_ok=True)
    runtimes = load_library(root, settings)
    if not runtimes:
        raise CompoWorldError(
            f"library {root} holds no services (build some with `compoworld build`, or --library)"
        )
    rows: list[tuple[str, str, str]] = [("library", f"{len(runtimes)} services", str(root))]
    if tasks_file is not None:
        tasks = read_tasks(tasks_file)
        note = f"{len(tasks)} tasks read"
    else:
        tasks, note = _generate(runtimes, n_tasks, seed)
    if not tasks:
        raise CompoWorldError(f"no tasks to run ({note}); the library may know no person in two services")
    written = out / "tasks.jsonl"
    write_tasks(written, tasks)
    first = tasks[0]
    scenario = ", ".join(first.meta.scenario) or "walk"
    console.print(f"[bold]example task[/bold] ({scenario}; {', '.join(first.services)}):")
    console.print(first.instruction, highlight=False)
    rows.append(("tasks", note, str(written)))
    orch = Orchestrator.embedded(runtimes, settings)
    cfg = RunConfig(mode=mode, rollouts=rollouts, concurrency=8, seed=seed)
    runs = asyncio.run(_run_agents(orch, tasks, out, ["oracle", "noop"], cfg))
    for name, summary in runs.items():
        rows.append(
            (
                f"run: {name}",
                f"pass {summary.pass_rate:.0%}, score {summary.mean_score:.2f}, "
                f"{summary.episodes} episodes, {len(summary.errors)} errors",
                str(summary.out),
            )
        )
    combined = out / "trajectories.jsonl"
    combined.write_text("".join(p.out.read_text() for p in runs.values()))
    data = summarize([json.loads(line) for line in combined.read_text().splitlines() if line])
    for table in tables(data):
        console.print(table)
    png = plot_report(data, out / "report.png", title=f"CompoWorld demo: {len(tasks)} tasks, oracle vs noop")
    rows.append(("report", f"{data.total.episodes} episodes", str(png)))
    if exports is not None:
        rows.extend(exports(out, runs["oracle"].out, written))
    rows.append(("total", f"{time.perf_counter() - started:.1f} s", str(out)))
    return rows
