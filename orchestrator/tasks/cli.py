"""``compoworld tasks generate|check|stats``: cross-service tasks from a library, re-verified, summarised."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from compoworld.catalog import read_catalog
from compoworld.commands import command_group
from compoworld.errors import CompoWorldError
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.tasks.check import CheckReport, check_tasks
from orchestrator.tasks.generate import GenerateOptions, GenerationReport, generate_tasks
from orchestrator.tasks.library import TaskLibrary, stream_library
from orchestrator.tasks.stats import BUSIEST, SAME_VERTICAL, WITH_SHARED, busiest, spread, task_stats
from orchestrator.tasks.verify import SolutionRates
from orchestrator.tasksource import scan_tasks, write_tasks

__all__ = ["tasks_app"]


LibraryOpt = Annotated[
    Path | None, typer.Option("--library", "-l", help="Library folder (default: the starter set).")
]


def _console() -> Console:
    return Console(highlight=False)


def _streamed(console: Console, library: Path | None, settings: Settings) -> TaskLibrary:
    """The library indexed one service at a time, runtimes loaded on first use (``tasks generate``)."""
    root = library or settings.library
    try:
        with _progress(console) as progress:  # a corpus-sized library takes minutes to index
            bar = progress.add_task("indexing the library", total=None)
            streamed = stream_library(
                root,
                settings.model_copy(update={"library": root, "llm_base_url": None}),
                on_skip=lambda miss: console.print(f"[yellow]skipped {miss.folder}: {miss.reason}[/yellow]"),
                on_progress=lambda done, total: progress.update(bar, completed=done, total=total),
            )
    except CompoWorldError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if not streamed.runtimes:
        console.print(f"[red]no services under {root} (expected <library>/<service>/manifest.json)[/red]")
        raise typer.Exit(2)
    return streamed


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _solution_rows(table: Table, rates: SolutionRates) -> None:
    """Valid variants completed and wrong solutions caught, per kind, and the do-nothing fraction."""
    for family, title in (("valid", "valid variants completed"), ("wrong", "wrong solutions caught")):
        kinds = {k: r for k, r in rates.kinds.items() if r.family == family}
        if not kinds:
            continue
        ok, n = sum(r.as_expected for r in kinds.values()), sum(r.applied for r in kinds.values())
        table.add_row(title, f"{ok}/{n} ({ok / n:.1%})")
        for kind, rate in kinds.items():
            table.add_row(f"  {kind}", f"{rate.as_expected}/{rate.applied} ({rate.rate:.1%})")
    if rates.noop_tasks:
        table.add_row("do-nothing mean rubric fraction", f"{rates.noop_mean:.3f}")


def _generation_table(report: GenerationReport) -> Table:
    table = Table(title="task generation", show_header=False)
    table.add_row(
        "tasks", f"{report.produced} of {report.requested} ({report.indices} indices, {report.walks} walks)"
    )
    table.add_row("touching 2+ / 3+ services", f"{report.multi_service_2:.0%} / {report.multi_service_3:.0%}")
    _solution_rows(table, report.solutions)
    table.add_row("verified tasks/s", f"{report.tasks_per_s:.1f} ({report.seconds:.1f} s)")
    table.add_row("people found in a party table (by e-mail)", str(report.people))
    if report.held_out:
        table.add_row("held-out services (test split)", ", ".join(report.held_out))
    if report.paraphrased:
        table.add_row("LLM paraphrases accepted", str(report.paraphrased))
    for reason, count in sorted(report.failures.items(), key=lambda kv: -kv[1])[:6]:
        table.add_row(f"discarded: {reason}", str(count))
    return table


def generate(
    library: LibraryOpt = None,
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="Tasks to generate.")] = 100,
    seed: Annotated[int, typer.Option(help="Generation seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output JSONL file.")] = Path("tasks.jsonl"),
    min_len: Annotated[int, typer.Option(min=1, max=40, help="Fewest gold calls a task may have.")] = 2,
    max_len: Annotated[int, typer.Option(min=1, max=60, help="Most gold calls a task may have.")] = 40,
    split_services: Annotated[
        str | None, typer.Option(help="Held-out services for the test split: 'a,b' or a fraction like 0.2.")
    ] = None,
    today: Annotated[str | None, typer.Option(help="Frozen date of the tasks (default: settings).")] = None,
    paraphrase: Annotated[
        bool, typer.Option(help="Paraphrase with the configured LLM endpoint, if any.")
    ] = True,
    solution_check: Annotated[
        bool, typer.Option(help="Run every valid variant and wrong solution on each task before keeping it.")
    ] = True,
    strict_spread: Annotated[
        bool,
        typer.Option(
            help="On a library of 800+ services, no workflow takes a system past its share of tasks "
            "(fewer busy systems, thinner tasks: see docs/tasks.md)."
        ),
    ] = False,
) -> None:
    """Scenarios over the library's people, executed on forks, kept only if their rubric verifies."""
    console = _console()
    settings = Settings()
    lib = _streamed(console, library, settings)
    if min_len > max_len:
        console.print(f"[red]--min-len {min_len} is larger than --max-len {max_len}[/red]")
        raise typer.Exit(2)
    split = [s.strip() for s in (split_services or "").split(",") if s.strip()]
    try:
        options = GenerateOptions(
            n=n,
            seed=seed,
            min_len=min_len,
            max_len=max_len,
            split_services=split,
            today=today or settings.default_today,
            solution_check=solution_check,
            strict_spread=strict_spread,
        )
        with _progress(console) as progress:
            bar = progress.add_task("generating tasks", total=n)
            tasks, report = generate_tasks(
                lib,
                options,
                progress=lambda done: progress.update(bar, completed=done),
                settings=settings if paraphrase else None,
            )
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    write_tasks(out, tasks)
    console.print(_generation_table(report))
    if report.people == 0:
        console.print(
            "[yellow]the library holds no person (a named row with an e-mail) to build a scenario around[/yellow]"
        )
    if not tasks:
        console.print(
            f"[red]no valid task could be generated from {len(lib.runtimes)} service(s); see the reasons above[/red]"
        )
        raise typer.Exit(1)
    if len(tasks) < n:
        console.print(f"[yellow]only {len(tasks)} of {n} tasks could be generated and verified[/yellow]")
    console.print(f"wrote {len(tasks)} tasks to {out}")


def _check_table(report: CheckReport) -> Table:
    table = Table(title="task check", show_header=False)
    table.add_row("lines", str(report.lines))
    table.add_row("valid tasks", f"[green]{report.valid}[/green]")
    table.add_row("invalid tasks", f"[red]{len(report.invalid)}[/red]" if report.invalid else "0")
    table.add_row("unreadable lines", f"[red]{len(report.bad_lines)}[/red]" if report.bad_lines else "0")
    _solution_rows(table, report.solutions)
    if report.other_library:
        table.add_row("built on another library version", str(report.other_library))
    table.add_row("seconds", f"{report.seconds:.2f}")
    return table


def check(
    file: Annotated[Path, typer.Argument(help="Task file (JSONL).")],
    library: LibraryOpt = None,
) -> None:
    """Re-verify every task: gold and valid variants complete, doing nothing and wrong solutions do not."""
    console = _console()
    if not file.is_file():
        console.print(f"[red]no task file {file}[/red]")
        raise typer.Exit(2)
    lib = _streamed(console, library, Settings())  # runtimes load as the tasks reach them
    tasks, bad = scan_tasks(file)
    with _progress(console) as progress:
        bar = progress.add_task("checking tasks", total=len(tasks))
        report = check_tasks(
            tasks,
            bad,
            lib.runtimes,
            progress=lambda done: progress.update(bar, completed=done),
            version=lib.version,
            seeds=lib.seeds,
        )
    console.print(_check_table(report))
    for err in report.bad_lines:
        console.print(f"[red]line {err.line}:[/red] {err.reason}")
    for inv in report.invalid:
        console.print(f"[red]line {inv.line} ({inv.task_id}):[/red] {'; '.join(inv.reasons[:3])}")
    if not report.ok:
        raise typer.Exit(1)


def _dist(title: str, counts: dict[str, int], total: int) -> Table:
    table = Table(title=title)
    table.add_column("value")
    table.add_column("count", justify="right")
    table.add_column("share", justify="right")
    for key, count in counts.items():
        table.add_row(key, str(count), f"{count / total:.0%}" if total else "-")
    return table


def _spread_rows(targets: Table, tasks: list[Task], library: Path | None) -> None:
    """The busiest service's share of tasks, and the same-vertical share of a task's service pairs: the
    domains are the library's (``--library``, else the starter set); a task file of another library
    gets no pair share rather than a wrong one."""
    figures = spread(tasks, {})
    targets.add_row("busiest service's share of tasks", f"{figures[BUSIEST]:.1%} ({busiest(tasks)})")
    root = library or Settings().library
    try:
        domains = {e.name: e.domain for e in read_catalog(root).services}
    except CompoWorldError:
        domains = {}
    missing = {s for t in tasks for s in t.services} - set(domains)
    if missing:
        targets.add_row(SAME_VERTICAL, f"- ({len(missing)} services not in {root}: pass --library)")
    else:
        figures = spread(tasks, domains)
        targets.add_row(SAME_VERTICAL, f"{figures[SAME_VERTICAL]:.1%}")
        targets.add_row(WITH_SHARED, f"{figures[WITH_SHARED]:.1%}")


def stats(
    file: Annotated[Path, typer.Argument(help="Task file (JSONL).")],
    library: Annotated[
        Path | None,
        typer.Option(
            "--library", "-l", help="Library the tasks were made from (its domains; default: starter)."
        ),
    ] = None,
) -> None:
    """Distributions: services per task, walk length, capabilities, domains, read/write mix, and the spread."""
    console = _console()
    if not file.is_file():
        console.print(f"[red]no task file {file}[/red]")
        raise typer.Exit(2)
    parsed, bad = scan_tasks(file)
    for err in bad:
        console.print(f"[yellow]line {err.line} skipped:[/yellow] {err.reason}")
    tasks = [t for _, t in parsed]
    if not tasks:
        console.print("[red]no valid tasks in the file[/red]")
        raise typer.Exit(1)
    s = task_stats(tasks)
    two, three = s.share_multi_service
    console.print(f"{s.tasks} tasks; {two:.0%} touch 2+ services, {three:.0%} touch 3+")
    targets = Table(title="targets")
    targets.add_column("share of tasks")
    targets.add_column("value", justify="right")
    for name, value in s.shares.items():
        targets.add_row(name, f"{value:.1f}" if name.startswith("mean") else f"{value:.0%}")
    _spread_rows(targets, tasks, library)
    console.print(targets)
    steps = sum(s.steps_by_kind.values())
    for title, counts, total in [
        ("services per task", s.services_per_task, s.tasks),
        ("walk length", s.walk_length, s.tasks),
        ("capabilities", s.capabilities, s.tasks),
        ("domains", s.domains, s.tasks),
        ("archetypes", s.archetypes, s.tasks),
        ("verticals", s.verticals, s.tasks),
        ("steps: read / write", s.steps_by_kind, steps),
        ("steps by operation", s.operations, steps),
        ("criteria by kind", s.criteria_by_kind, sum(s.criteria_by_kind.values())),
        ("splits", s.splits, s.tasks),
    ]:
        console.print(_dist(title, counts, total))


def show(
    file: Annotated[Path, typer.Argument(help="Task file (JSONL).")],
    per_archetype: Annotated[
        bool, typer.Option("--per-archetype", help="Only the first task that opens with each archetype.")
    ] = False,
) -> None:
    """Print tasks as a reader judges them: id, archetypes, services, gold calls, labels, the instruction."""
    console = Console(highlight=False, soft_wrap=True)
    if not file.is_file():
        console.print(f"no task file {file}")
        raise typer.Exit(2)
    seen: set[str] = set()
    for _, task in scan_tasks(file)[0]:
        first = task.meta.scenario[0] if task.meta.scenario else ""
        if per_archetype and first in seen:
            continue
        seen.add(first)
        console.print(
            f"### {first or task.id}\n\n`{task.id}` · {' + '.join(task.meta.scenario)} · "
            f"{task.meta.vertical or task.meta.domain} · {len(task.services)} services "
            f"({', '.join(task.services)}) · {len(task.gold_calls)} gold calls · "
            f"{', '.join(task.meta.capabilities)}\n\n> {task.instruction}\n"
        )


@command_group
def tasks_app() -> typer.Typer:
    """A fresh ``tasks_app`` Typer app (built per ``cli_app()``, never shared)."""
    app = typer.Typer(no_args_is_help=True, add_completion=False, help="Generate, check and summarise tasks.")
    app.command()(generate)
    app.command()(check)
    app.command()(stats)
    app.command()(show)
    return app
