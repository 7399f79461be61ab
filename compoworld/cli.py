"""``compoworld`` — the command line. Each package contributes its commands by name (STYLE #5)."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from compoworld.settings import Settings

__all__ = ["app", "cli_app", "main"]

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help="CompoWorld: verified tool services, tasks, episodes."
)
console = Console()

# name -> "module:attr" of a typer app (sub-command group) or a command function
SUBAPPS: dict[str, str] = {
    "tasks": "orchestrator.tasks.cli:tasks_app",
    "export": "trainer.cli:export_app",
    "deploy": "compoworld.deploy.cli:deploy_app",
    "k8s": "compoworld.deploy.cli:k8s_app",
}
COMMANDS: dict[str, str] = {
    "build": "compoworld.synth.cli:build",
    "starter": "compoworld.starter:starter",
    "graph": "orchestrator.graph.cli:graph",
    "run": "orchestrator.cli:run",
    "demo": "orchestrator.demo:demo",
    "report": "orchestrator.report:report",
    "orchestrator": "orchestrator.cli:orchestrator",
}


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _register() -> None:
    for name, target in SUBAPPS.items():
        try:
            app.add_typer(_load(target), name=name)
        except (ImportError, AttributeError) as exc:
            logging.getLogger(__name__).debug("sub-command %s unavailable: %s", name, exc)
    for name, target in COMMANDS.items():
        try:
            app.command(name)(_load(target))
        except (ImportError, AttributeError) as exc:
            logging.getLogger(__name__).debug("command %s unavailable: %s", name, exc)


LibraryOpt = Annotated[
    Path | None, typer.Option("--library", "-l", help="Library folder (default: the starter set).")
]


def _serve(asgi_app: Any, host: str, port: int) -> None:
    import uvicorn

    from compoworld.runtime.app import freeze_heap

    freeze_heap()
    uvicorn.run(asgi_app, host=host, port=port, log_level="warning", access_log=False)


@app.command()
def serve(
    names: Annotated[list[str], typer.Argument(help="Service name(s) from the library.")],
    library: LibraryOpt = None,
    host: str = "127.0.0.1",
    port: int = 9001,
) -> None:
    """Serve one service at / (a container's entrypoint), or several, each under /services/<name>."""
    from compoworld.llm import llm_from_settings
    from compoworld.runtime import ServiceRuntime, create_library_app, create_service_app

    settings = Settings()
    llm = llm_from_settings(settings)
    root = library or settings.library
    runtimes = {}
    for name in names:
        folder = root / name
        if not (folder / "manifest.json").exists():
            console.print(f"[red]no service '{name}' in {root}[/red]")
            raise typer.Exit(2)
        runtimes[name] = ServiceRuntime.from_folder(folder, settings, llm)
    asgi = (
        create_service_app(runtimes[names[0]], settings)
        if len(names) == 1
        else create_library_app(runtimes, settings)
    )
    console.print(f"serving {', '.join(names)} on http://{host}:{port}")
    _serve(asgi, host, port)


@app.command()
def up(
    library: LibraryOpt = None,
    tasks: Annotated[Path | None, typer.Option(help="Task file(s) whose ids POST /episodes accepts.")] = None,
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """Every service of a library and the orchestrator, in one process (the embedded deployment)."""
    from compoworld.embedded import build_embedded_app

    settings = Settings()
    asgi, summary = build_embedded_app(library or settings.library, settings, tasks)
    console.print(summary)
    console.print(f"listening on http://{host}:{port}  (GET /services, POST /episodes)")
    _serve(asgi, host, port)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    _register()
    app()


def cli_app() -> typer.Typer:
    """The fully registered CLI (for tests and embedding)."""
    _register()
    return app


if __name__ == "__main__":
    main()
