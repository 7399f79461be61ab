"""The smoke run's world: a library, its tasks, and the embedded orchestrator served on 127.0.0.1.

The services of ``--library`` and the orchestrator run in the smoke's own process and event loop
(``create_library_app`` + ``attach_orchestrator``, as ``compoworld up`` does), served by uvicorn
on a free loopback port, so rollouts go over real HTTP exactly as verl's agent loop would.
Tasks come from the task generator (``orchestrator.tasks``) unless a task file is given.
Everything is offline: no LLM endpoint is used whatever the environment says.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from compoworld.errors import CompoWorldError
from compoworld.runtime import ServiceRuntime, create_library_app, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.tasksource import write_tasks

__all__ = [
    "SmokeSetupError",
    "generate_smoke_tasks",
    "load_services",
    "offline_settings",
    "select_tasks",
    "serve_embedded",
    "serving",
]


class SmokeSetupError(CompoWorldError, ValueError):
    """The smoke run cannot start: no services, no tasks, or an unknown task id."""


def offline_settings(settings: Settings) -> Settings:
    """The entry point's settings minus any LLM endpoint (the smoke run is offline)."""
    return settings.model_copy(update={"llm_base_url": None})


def load_services(library: Path, settings: Settings) -> dict[str, ServiceRuntime]:
    """Every service of ``library``; an empty or missing library is a clear error."""
    try:
        runtimes = load_library(library, settings)
    except CompoWorldError as exc:
        raise SmokeSetupError(f"cannot load the library: {exc}") from exc
    if not runtimes:
        raise SmokeSetupError(
            f"library {library} holds no services (no */manifest.json). The starter library under "
            "generated_services/ may not be built yet: build services with `compoworld build SPECS "
            "--out DIR` and pass --library DIR, or use --orchestrator-url with a running orchestrator."
        )
    return runtimes


def generate_smoke_tasks(runtimes: dict[str, ServiceRuntime], n: int, seed: int) -> list[Task]:
    """``n`` verified tasks from the task generator (offline: no paraphrasing)."""
    from orchestrator.tasks.generate import GenerateOptions, generate_tasks  # our own: never optional

    options = GenerateOptions(n=n, seed=seed, distractors=(1, 3), attempts=4)
    tasks, report = generate_tasks(runtimes, options)
    if not tasks:
        raise SmokeSetupError(
            f"the task generator made no task from {len(runtimes)} services "
            f"(discarded attempts: {report.failures}); pass --tasks FILE"
        )
    return list(tasks)


def select_tasks(tasks: Sequence[Task], task_ids: Sequence[str] | None) -> list[Task]:
    """The tasks named by ``task_ids`` (all when none are named), in the order named."""
    if not task_ids:
        return list(tasks)
    by_id = {t.id: t for t in tasks}
    unknown = [i for i in task_ids if i not in by_id]
    if unknown:
        raise SmokeSetupError(f"unknown task id(s) {unknown}; the tasks are {sorted(by_id)}")
    return [by_id[i] for i in dict.fromkeys(task_ids)]


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (a free port) in this event loop; yield its URL."""
    import uvicorn

    # keep-alive outlives a training step: the loop is busy with the model while connections idle,
    # and a server closing them at that moment races the next request (ReadError)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", timeout_keep_alive=3600
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(3000):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        if not server.started:
            if task.done() and task.exception() is not None:
                raise RuntimeError(f"the orchestrator did not start: {task.exception()}")
            raise RuntimeError("the orchestrator did not start within 30 s")
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task


@contextlib.asynccontextmanager
async def serve_embedded(
    runtimes: dict[str, ServiceRuntime], settings: Settings, tasks: Sequence[Task]
) -> AsyncIterator[str]:
    """The library app with the orchestrator attached (tasks loaded), served on 127.0.0.1."""
    from orchestrator.server import attach_orchestrator

    with tempfile.TemporaryDirectory(prefix="compoworld-smoke-") as tmp:
        task_file = Path(tmp) / "tasks.jsonl"
        write_tasks(task_file, tasks)
        app = create_library_app(runtimes, settings)
        attach_orchestrator(app, runtimes, settings, task_file)
        async with serving(app) as url:
            yield url
