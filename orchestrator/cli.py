"""``compoworld run`` (collect trajectories) and ``compoworld orchestrator`` (the orchestrator alone).

Registered by ``compoworld/cli.py`` as ``orchestrator.cli:run`` and ``orchestrator.cli:orchestrator``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from compoworld.errors import CompoWorldError
from compoworld.settings import Settings
from orchestrator.agents import agent_names, agent_options, create_agent
from orchestrator.backends import EpisodeBackend, RemoteBackend, embedded_backend, remote_services_backend
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.remote import load_url_map
from orchestrator.runner import RunConfig, RunSummary, run_tasks
from orchestrator.tasksource import read_tasks

__all__ = ["orchestrator", "run", "summary_table"]

console = Console()
Mode = Literal["direct", "gateway", "mcp"]


def summary_table(summary: RunSummary, title: str) -> Table:
    table = Table(title=title)
    for col in ("episodes", "complete", "pass rate", "mean rubric score", "errors", "seconds", "written to"):
        table.add_column(col)
    table.add_row(
        str(summary.episodes),
        str(summary.complete),
        f"{summary.pass_rate:.1%}",
        f"{summary.mean_score:.3f}",
        str(len(summary.errors)),
        f"{summary.elapsed_s:.1f}",
        str(summary.out),
    )
    return table


def _agent_defaults(agent: str, settings: Settings, concurrency: int, base_url: str | None) -> dict[str, Any]:
    """What the settings supply for the options ``agent`` takes (an option the user gave wins)."""
    defaults = {
        "model": settings.llm_model if base_url or settings.llm_base_url else None,
        "base_url": settings.llm_base_url,
        "api_key": settings.llm_api_key,
        "concurrency": concurrency,
        "timeout_s": settings.llm_timeout_s * 4,
        "retries": settings.llm_retries,
    }
    accepted = agent_options(agent)
    return {k: v for k, v in defaults.items() if k in accepted}


def _backend(
    orchestrator_url: str | None,
    service_urls: Path | None,
    library: Path | None,
    settings: Settings,
    cfg: OrchestratorConfig,
) -> EpisodeBackend:
    if orchestrator_url:
        return RemoteBackend(orchestrator_url)
    if service_urls is not None:
        return remote_services_backend(settings, load_url_map(service_urls), cfg)
    if settings.service_url_template and library is None:
        return remote_services_backend(settings, None, cfg)
    return embedded_backend(library or settings.library, settings, cfg)


def run(
    tasks: Annotated[Path, typer.Option("--tasks", "-t", help="Task file (JSONL) or folder of them.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Trajectories (JSONL).")] = Path("traj.jsonl"),
    agent: Annotated[
        str, typer.Option("--agent", "-a", help=f"One of: {', '.join(agent_names())}.")
    ] = "oracle",
    mode: Annotated[
        Mode,
        typer.Option(
            help="How tools are exposed: gateway (the 4 meta-tools, as in the published data) | direct | mcp."
        ),
    ] = "gateway",
    rollouts: Annotated[int, typer.Option(min=1, help="Rollouts per task.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes at once.")] = 8,
    seed: Annotated[int, typer.Option(help="Base seed (episode seeds derive from it).")] = 0,
    max_steps: Annotated[int, typer.Option(min=1, max=1000, help="Tool-calling turns per episode.")] = 30,
    max_wall_s: Annotated[float, typer.Option(help="Wall-clock limit per episode (seconds).")] = 1800.0,
    limit: Annotated[int | None, typer.Option(help="Only the first N tasks.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (openai agent).")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (openai agent).")] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (openai agent).")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature (openai agent).")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Completion tokens per turn (openai agent).")] = None,
    orchestrator_url: Annotated[
        str | None, typer.Option(help="Drive a running orchestrator over HTTP instead of an in-process one.")
    ] = None,
    library: Annotated[
        Path | None, typer.Option("--library", "-l", help="Library folder (in-process).")
    ] = None,
    service_urls: Annotated[
        Path | None, typer.Option(help="JSON map service -> URL(s): remote services.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run tasks x rollouts with an agent and write trajectories (JSONL, the published format)."""
    settings = Settings()
    try:
        task_list = read_tasks(tasks)[:limit] if limit else read_tasks(tasks)
        given = {  # None: not given, so the agent's own default (or the settings') applies
            "model": model,
            "base_url": base_url,
            "api_key": api_key,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        options = {**_agent_defaults(agent, settings, concurrency, base_url)}
        options.update({k: v for k, v in given.items() if v is not None})
        the_agent = create_agent(agent, **options)
        orch_cfg = OrchestratorConfig(max_steps=max_steps, max_wall_s=max_wall_s)
        backend = _backend(orchestrator_url, service_urls, library, settings, orch_cfg)
    except (CompoWorldError, ValueError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    cfg = RunConfig(
        mode=mode,
        rollouts=rollouts,
        concurrency=concurrency,
        seed=seed,
        max_steps=max_steps,
        max_wall_s=max_wall_s,
    )

    async def go() -> RunSummary:
        try:
            return await run_tasks(backend, the_agent, task_list, cfg, out, progress=progress)
        finally:
            await the_agent.aclose()
            await backend.aclose()

    summary = asyncio.run(go())
    console.print(summary_table(summary, f"{agent} on {len(task_list)} tasks x {rollouts} ({mode})"))
    for err in summary.errors[:10]:
        console.print(f"[yellow]{err}[/yellow]")
    if summary.errors and not summary.episodes:
        raise typer.Exit(1)


def orchestrator(
    service_urls: Annotated[
        Path | None, typer.Option(help="JSON map service -> base URL (or list of replica URLs).")
    ] = None,
    tasks: Annotated[Path | None, typer.Option(help="Task file(s) whose ids POST /episodes accepts.")] = None,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
) -> None:
    """The orchestrator alone, services remote (containers, Kubernetes)."""
    from orchestrator.server import orchestrator_app_from

    try:  # a limit out of range (COMPOWORLD_MAX_LIVE=0, ...) is exit 2 with its name
        settings = Settings()
    except ValidationError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if not settings.admin_token_configured:  # its services must hold the same token
        console.print(
            "[red]COMPOWORLD_ADMIN_TOKEN is not set: the orchestrator and its services share it[/red]"
        )
        raise typer.Exit(2)
    try:
        app = orchestrator_app_from(settings, service_urls, tasks)
    except CompoWorldError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    console.print(f"orchestrator on http://{host}:{port}  (POST /episodes, GET /services)")
    from compoworld.runtime.app import run_asgi

    run_asgi(app, host, port)
