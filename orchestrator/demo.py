"""``compoworld demo``: the main job end to end, offline, in about a minute.

Load a library → generate a handful of verified tasks → run them with the oracle and the
do-nothing agent on an in-process orchestrator (graded by the rubric) → write trajectories,
the report (tables + PNG), the SFT and verl exports → print where everything went.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import time
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from compoworld.errors import CompoWorldError
from compoworld.runtime.service import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.agents import create_agent
from orchestrator.episodes import Orchestrator
from orchestrator.models import Task
from orchestrator.report import plot_report, summarize, tables
from orchestrator.runner import RunConfig, RunSummary, run_tasks
from orchestrator.tasksource import read_tasks, write_tasks

__all__ = ["demo", "run_demo"]

console = Console()


def _generate(runtimes: dict[str, ServiceRuntime], n: int, seed: int) -> tuple[list[Task], str]:
    """Tasks from the task generator (offline: no paraphrasing), and a one-line note."""
    try:
        generate = importlib.import_module("orchestrator.tasks.generate")
    except ImportError as exc:
        raise CompoWorldError(f"the task generator is not available ({exc}); pass --tasks FILE") from exc
    options = generate.GenerateOptions(n=n, seed=seed, distractors=(1, 3), attempts=4)
    tasks, report = generate.generate_tasks(runtimes, options)
    return list(tasks), f"{report.produced} of {report.requested} tasks in {report.seconds:.1f} s"


def _exports(out: Path, oracle_traj: Path, tasks_file: Path) -> list[tuple[str, str, str]]:
    """SFT and verl exports, when the trainer package is installed."""
    rows: list[tuple[str, str, str]] = []
    try:
        sft = importlib.import_module("trainer.export_sft")
        stats = sft.write_sft_jsonl(oracle_traj, out / "sft.jsonl")
        rows.append(("SFT export", f"{stats.kept} of {stats.read} trajectories kept", str(out / "sft.jsonl")))
    except ImportError as exc:
        rows.append(("SFT export", f"skipped ({exc})", "-"))
    try:
        verl = importlib.import_module("trainer.export_verl")
        n = verl.write_verl_parquet(read_tasks(tasks_file), out / "verl.parquet")
        rows.append(("verl export", f"{n} RL rows", str(out / "verl.parquet")))
    except (ImportError, ValueError) as exc:
        rows.append(("verl export", f"skipped ({exc})", "-"))
    return rows


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
    library: Path | None = None,
    tasks_file: Path | None = None,
    n_tasks: int = 8,
    seed: int = 0,
    mode: Literal["direct", "gateway", "mcp"] = "gateway",
    rollouts: int = 1,
) -> list[tuple[str, str, str]]:
    """Everything the demo does; returns the summary rows (step, result, where)."""
    started = time.perf_counter()
    settings = Settings(llm_base_url=None)  # offline, whatever the environment says
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
        raise CompoWorldError(f"no tasks to run ({note}); the library may have no usable walks")
    written = out / "tasks.jsonl"
    write_tasks(written, tasks)
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
    rows.extend(_exports(out, runs["oracle"].out, written))
    rows.append(("total", f"{time.perf_counter() - started:.1f} s", str(out)))
    return rows


def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Where everything is written.")] = Path("demo-out"),
    library: Annotated[
        Path | None, typer.Option("--library", "-l", help="Library folder (default: the starter set).")
    ] = None,
    tasks: Annotated[
        Path | None, typer.Option("--tasks", help="Use these tasks instead of generating.")
    ] = None,
    n_tasks: Annotated[int, typer.Option("--n-tasks", min=1, help="Tasks to generate.")] = 8,
    seed: Annotated[int, typer.Option(help="Generation and rollout seed.")] = 0,
    mode: Annotated[Literal["direct", "gateway", "mcp"], typer.Option(help="Tool exposure.")] = "gateway",
) -> None:
    """The main job end to end, offline: tasks → oracle and noop episodes → grades → report → exports."""
    try:
        rows = run_demo(out, library, tasks, n_tasks, seed, mode)
    except (CompoWorldError, ValueError) as exc:
        console.print(f"[red]demo failed: {exc}[/red]")
        raise typer.Exit(1) from exc
    table = Table(title="CompoWorld demo")
    for col in ("step", "result", "written to"):
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    console.print(table)
