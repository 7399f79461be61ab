"""The embedded deployment: the whole library and the orchestrator in one ASGI app."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import Progress

from compoworld.llm import llm_from_settings
from compoworld.manifest import library_folders
from compoworld.runtime import ServiceRuntime, create_library_app
from compoworld.runtime.service import load_library
from compoworld.settings import Settings

__all__ = ["build_embedded_app", "load_library_with_progress"]


def load_library_with_progress(path: Path, settings: Settings) -> dict[str, ServiceRuntime]:
    """``load_library`` with a progress bar and the configured world-model endpoint."""
    folders = library_folders(path)
    with Progress(transient=True) as progress:
        task = progress.add_task("loading services", total=len(folders))
        return load_library(path, settings, llm_from_settings(settings), lambda _: progress.advance(task))


def build_embedded_app(library: Path, settings: Settings, tasks: Path | None = None) -> tuple[Any, str]:
    """The library app with the orchestrator's routes attached."""
    runtimes = load_library_with_progress(library, settings)
    app = create_library_app(runtimes, settings)
    from orchestrator.server import attach_orchestrator

    attach_orchestrator(app, runtimes, settings, tasks)
    n_tools = sum(len(r.tools) for r in runtimes.values())
    n_impl = sum(1 for r in runtimes.values() for b in r.tools.values() if b.backend == "implemented")
    share = n_impl / n_tools if n_tools else 0.0
    return app, f"{len(runtimes)} services, {n_tools} tools ({share:.0%} implemented) from {library}"
