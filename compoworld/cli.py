"""``compoworld`` — the application: the command line and the embedded composition.

This is the one module allowed to import every layer (kernel ← orchestrator ← trainer ← here;
tests/test_layers.py checks it). ``cli_app()`` builds a fresh Typer app each call from the
commands each package contributes (``command_registry``: lazy strings and the
``compoworld.commands`` entry points); a command that cannot be imported fails loudly here
(``RegistryError``), it is never dropped from the listing.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from compoworld.catalog import SkippedFolder, read_catalog
from compoworld.commands import is_command_group
from compoworld.deploy.entrypoint import EntrypointError, run_asgi, serve_services
from compoworld.errors import CompoWorldError, ServiceUnavailable
from compoworld.llm import llm_from_settings
from compoworld.manifest import library_folders
from compoworld.registry import Registry
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.hosting import create_pooled_app
from compoworld.runtime.pool import ServicePool, load_library_skipping
from compoworld.settings import Settings
from orchestrator.demo import run_demo
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.server import attach_orchestrator
from orchestrator.tasksource import read_tasks
from trainer.export_sft import write_sft_jsonl
from trainer.export_verl import write_verl_parquet

__all__ = [
    "BUILTIN_COMMANDS",
    "build_embedded_app",
    "cli_app",
    "command_registry",
    "load_library_with_progress",
    "main",
    "trainer_exports",
]

#: Commands other packages contribute, by the name they are called with: a Typer app (a group of
#: sub-commands) or a command function, as lazy "module:attr" strings. An installed package adds
#: one with an entry point in the ``compoworld.commands`` group.
BUILTIN_COMMANDS: dict[str, str] = {
    "build": "compoworld.synth.cli:build",
    "starter": "compoworld.starter:starter",
    "deploy": "compoworld.deploy.cli:deploy_app",
    "k8s": "compoworld.deploy.cli:k8s_app",
    "graph": "orchestrator.graph.cli:graph",
    "library": "compoworld.catalog_cli:library_app",
    "tasks": "orchestrator.tasks.cli:tasks_app",
    "run": "orchestrator.cli:run",
    "report": "orchestrator.report:report",
    "orchestrator": "orchestrator.cli:orchestrator",
    "export": "trainer.cli:export_app",
}


def _is_command(value: object) -> Any:
    if not (isinstance(value, typer.Typer) or callable(value)):
        raise TypeError(f"{value!r} is neither a Typer app nor a command function")
    return value


def command_registry() -> Registry[Any]:
    """The contributed commands: the built-in ones and every installed package's entry points."""
    registry: Registry[Any] = Registry("command", entry_points="compoworld.commands", check=_is_command)
    for name, target in BUILTIN_COMMANDS.items():
        registry.register(name, target)
    return registry


LibraryOpt = Annotated[
    Path | None, typer.Option("--library", "-l", help="Library folder (default: the starter set).")
]


def load_library_with_progress(path: Path, settings: Settings) -> dict[str, ServiceRuntime]:
    """Every service that loads, with a progress bar and the configured world-model endpoint;
    a folder that does not load is skipped with a message naming it and why."""
    folders = library_folders(path)
    with Progress(transient=True) as progress:
        task = progress.add_task("loading services", total=len(folders))
        runtimes, skipped = load_library_skipping(
            path, settings, llm_from_settings(settings), lambda _: progress.advance(task)
        )
    _report_skipped(skipped)
    return runtimes


def _report_skipped(skipped: list[SkippedFolder]) -> None:
    console = Console(stderr=True)
    for miss in skipped:
        console.print(f"[yellow]skipped {miss.folder}: {miss.reason}[/yellow]")


def build_embedded_app(
    library: Path,
    settings: Settings,
    tasks: Path | None = None,
    *,
    preload: bool = False,
    max_resident: int = 256,
    memory_mb: float | None = None,
    config: OrchestratorConfig | None = None,
) -> tuple[Any, str]:
    """The embedded deployment: the library and the orchestrator in one ASGI app.

    Services load on first use from the library's catalog (and idle ones are unloaded past
    ``max_resident`` or ``memory_mb``); ``preload`` loads every one now, skipping those that fail.
    """
    catalog = read_catalog(library)
    _report_skipped(catalog.skipped)
    pool = ServicePool(
        library,
        settings,
        llm_from_settings(settings),
        catalog=catalog,
        max_resident=max(max_resident, len(catalog.services)) if preload else max_resident,
        memory_mb=memory_mb,
    )
    if preload:
        with Progress(transient=True) as progress:
            task = progress.add_task("loading services", total=len(pool))
            for name in pool:
                with contextlib.suppress(ServiceUnavailable):  # the pool names it and keeps the reason
                    pool.load(name)
                progress.advance(task)
        _report_skipped([SkippedFolder(folder=str(library / n), reason=r) for n, r in pool.broken.items()])
    app = create_pooled_app(pool, settings)
    attach_orchestrator(app, pool, settings, tasks, config)
    n_tools = sum(e.tools for e in catalog.services)
    n_impl = sum(e.implemented for e in catalog.services)
    share = n_impl / n_tools if n_tools else 0.0
    how = f"{len(pool.resident())} loaded" if preload else "each loads on first use"
    summary = f"{len(pool)} services ({how}), {n_tools} tools ({share:.0%} implemented) from {library}"
    return app, summary


def trainer_exports(out: Path, oracle_traj: Path, tasks_file: Path) -> list[tuple[str, str, str]]:
    """The demo's last step: the SFT export of the oracle's trajectories and the verl RL rows."""
    sft = out / "sft.jsonl"
    stats = write_sft_jsonl(oracle_traj, sft)
    rows = [("SFT export", f"{stats.kept} of {stats.read} trajectories kept", str(sft))]
    try:
        n = write_verl_parquet(read_tasks(tasks_file), out / "verl.parquet")
        rows.append(("verl export", f"{n} RL rows", str(out / "verl.parquet")))
    except ValueError as exc:  # e.g. a prompt over the RL length limit: reported, the demo goes on
        rows.append(("verl export", f"skipped ({exc})", "-"))
    return rows


def _own_commands(app: typer.Typer, console: Console) -> None:
    """The commands that compose layers: serve, up, demo."""

    @app.command()
    def serve(
        names: Annotated[list[str], typer.Argument(help="Service name(s) from the library.")],
        library: LibraryOpt = None,
        host: str = "127.0.0.1",
        port: int = 9001,
    ) -> None:
        """Serve one service at /, or several (a pack), each under /services/<name> (as containers do)."""
        try:
            serve_services(names, library, host, port)
        except EntrypointError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from exc

    @app.command()
    def up(
        library: LibraryOpt = None,
        tasks: Annotated[
            Path | None, typer.Option(help="Task file(s) whose ids POST /episodes accepts.")
        ] = None,
        host: str = "127.0.0.1",
        port: int = 8000,
        preload: Annotated[
            bool, typer.Option(help="Load every service now (default: each on its first use).")
        ] = False,
        max_resident: Annotated[
            int, typer.Option(min=1, help="Unload idle services beyond this many loaded ones.")
        ] = 256,
        memory_mb: Annotated[
            float | None, typer.Option(help="Unload idle services while the process is over this RSS (MiB).")
        ] = None,
        max_live: Annotated[
            int | None, typer.Option(help="Episodes held at most (live or ended, not deleted); beyond: 503.")
        ] = None,
        max_steps: Annotated[int | None, typer.Option(help="Default tool-calling turns per episode.")] = None,
        max_wall_s: Annotated[
            float | None, typer.Option(help="Default wall-clock limit of an episode (at most 86400).")
        ] = None,
        idle_ttl_s: Annotated[
            float | None, typer.Option(help="A live episode idle this long expires (forks released).")
        ] = None,
        retain_s: Annotated[
            float | None, typer.Option(help="Ended episodes are forgotten after this long.")
        ] = None,
        lock_wait_s: Annotated[
            float | None, typer.Option(help="How long a request waits for an episode's turn held by another.")
        ] = None,
        reap_interval_s: Annotated[float | None, typer.Option(help="How often the reaper runs.")] = None,
        max_request_bytes: Annotated[
            int | None, typer.Option(help="Largest orchestrator request body (a step's tool calls).")
        ] = None,
        max_payload_bytes: Annotated[
            int | None, typer.Option(help="Largest tool-call body or arguments, on every route.")
        ] = None,
        max_json_depth: Annotated[
            int | None, typer.Option(help="Deepest JSON nesting accepted at any edge (2 to 512).")
        ] = None,
        max_result_bytes: Annotated[
            int | None, typer.Option(help="Largest tool result read from a remote service.")
        ] = None,
        max_episodes: Annotated[
            int | None, typer.Option(help="Forks per service at most; a fork beyond it is refused (503).")
        ] = None,
        max_trajectory_messages: Annotated[
            int | None, typer.Option(help="Messages one episode may record; a turn beyond it is 413.")
        ] = None,
        max_trajectory_bytes: Annotated[
            int | None, typer.Option(help="JSON bytes one episode may record; a turn beyond it is 413.")
        ] = None,
        group_timeout_max_s: Annotated[
            float | None, typer.Option(help="Longest timeout_s a group reward report may ask (at most 3600).")
        ] = None,
        group_open_deadline_s: Annotated[
            float | None,
            typer.Option(
                help="Give up on a group's unopened siblings after this long without an open (0: off)."
            ),
        ] = None,
    ) -> None:
        """Every service of a library and the orchestrator, in one process (the embedded deployment)."""
        limits: dict[str, Any] = {
            "max_live": max_live,
            "max_steps": max_steps,
            "max_wall_s": max_wall_s,
            "idle_ttl_s": idle_ttl_s,
            "retain_s": retain_s,
            "lock_wait_s": lock_wait_s,
            "reap_interval_s": reap_interval_s,
            "max_request_bytes": max_request_bytes,
            "max_payload_bytes": max_payload_bytes,
            "max_json_depth": max_json_depth,
            "max_result_bytes": max_result_bytes,
            "max_episodes": max_episodes,
            "max_trajectory_messages": max_trajectory_messages,
            "max_trajectory_bytes": max_trajectory_bytes,
            "group_timeout_max_s": group_timeout_max_s,
            "group_open_deadline_s": group_open_deadline_s,
        }
        try:  # every limit checked by Settings: a bad value is exit 2 with the reason
            settings = Settings(**{k: v for k, v in limits.items() if v is not None})
            config = OrchestratorConfig.from_settings(settings)
        except ValidationError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from exc
        root = library or settings.library
        try:
            asgi, summary = build_embedded_app(
                root,
                settings,
                tasks,
                preload=preload,
                max_resident=max_resident,
                memory_mb=memory_mb,
                config=config,
            )
        except CompoWorldError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from exc
        console.print(summary)
        if not settings.admin_token_configured:
            console.print(f"admin token (random, this start only): {write_admin_token(settings.admin_token)}")
        console.print(f"listening on http://{host}:{port}  (GET /services, POST /episodes)")
        run_asgi(asgi, host, port)

    @app.command()
    def demo(
        out: Annotated[Path, typer.Option("--out", "-o", help="Where everything is written.")] = Path(
            "demo-out"
        ),
        library: LibraryOpt = None,
        tasks: Annotated[
            Path | None, typer.Option("--tasks", help="Use these tasks instead of generating.")
        ] = None,
        n_tasks: Annotated[int, typer.Option("--n-tasks", min=1, help="Tasks to generate.")] = 8,
        seed: Annotated[int, typer.Option(help="Generation and rollout seed.")] = 0,
        mode: Annotated[Literal["direct", "gateway", "mcp"], typer.Option(help="Tool exposure.")] = "gateway",
    ) -> None:
        """The main job end to end, offline: tasks → oracle and noop episodes → grades → report → exports."""
        try:
            rows = run_demo(out, Settings(), library, tasks, n_tasks, seed, mode, exports=trainer_exports)
        except (CompoWorldError, ValueError) as exc:
            console.print(f"[red]demo failed: {exc}[/red]")
            raise typer.Exit(1) from exc
        table = Table(title="CompoWorld demo")
        for col in ("step", "result", "written to"):
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        console.print(table)


def write_admin_token(token: str, path: Path | None = None) -> str:
    """Where a generated admin token can be read (a file only its owner can read), for the console."""
    path = path or Path.home() / ".compoworld" / "admin-token"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600, exist_ok=True)
        path.chmod(0o600)
        path.write_text(token + "\n")
    except OSError as exc:
        return f"{token} (not written to {path}: {exc.strerror})"
    return f"in {path}"


def cli_app() -> typer.Typer:
    """A fresh, fully registered CLI (for ``main``, tests and embedding)."""
    app = typer.Typer(
        no_args_is_help=True,
        add_completion=False,
        help="CompoWorld: verified tool services, tasks, episodes.",
    )
    for name, command in command_registry().items():
        if is_command_group(command):
            app.add_typer(command(), name=name)
        elif isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
        else:
            app.command(name)(command)
    _own_commands(app, Console())
    return app


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    cli_app()()


if __name__ == "__main__":
    main()
