"""The image's entrypoint: serve services or the orchestrator with only what serving needs.

Every container of a mesh runs ``serve`` or ``orchestrator``, and each pays for what its
process imports, once per replica. The full CLI (typer, rich, every command's modules) and
the SQLModel classes of ``models.py`` (SQLAlchemy) are not needed to answer requests, so
this module parses the two container commands with argparse, reads each service's table DDL
from its ``schema.sql`` (or, for a folder built before it existed, compiles it from
``models.py`` in a short-lived child process: ``python -m compoworld.deploy.ddl``), and keeps
only the runtime resident: FastAPI, uvicorn, SQLite, jsonschema.

    python -m compoworld.deploy.entrypoint serve crm [more services] --host 0.0.0.0 --port 8000
    python -m compoworld.deploy.entrypoint orchestrator --host 0.0.0.0 --port 8000 [--tasks F]

Any other command is handed to the full ``compoworld`` CLI unchanged, so ``docker run
compoworld tasks generate ...`` keeps working. ``compoworld serve`` and ``compoworld
orchestrator`` call the same functions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from compoworld.deploy.errors import DeployError

__all__ = [
    "EntrypointError",
    "compile_ddl",
    "load_services",
    "main",
    "read_settings",
    "require_admin_token",
    "run_asgi",
    "serve_orchestrator",
    "serve_services",
]

SERVING_COMMANDS = ("serve", "orchestrator")


class EntrypointError(DeployError):
    """A container command that cannot start (bad name, unreadable library): exit 2 with the reason."""


def compile_ddl(folders: list[Path]) -> dict[str, list[str] | None]:
    """CREATE TABLE statements of each folder's ``models.py``, compiled in a child process.

    The child imports SQLModel and SQLAlchemy and exits; this process never does.
    """
    if not folders:
        return {}
    cmd = [sys.executable, "-m", "compoworld.deploy.ddl", *map(str, folders)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise EntrypointError(done.stderr.strip() or f"DDL compilation exited {done.returncode}")
    ddl: dict[str, list[str] | None] = json.loads(done.stdout)
    return ddl


def load_services(names: list[str], library: Path | None = None) -> tuple[dict[str, Any], Any]:
    """Runtimes of ``names`` from the library (default ``COMPOWORLD_LIBRARY``), and the settings."""
    from compoworld.llm import llm_from_settings
    from compoworld.runtime.service import SCHEMA_FILE, ServiceRuntime

    settings = read_settings()
    root = library or settings.library
    folders = [root / name for name in names]
    missing = [f.name for f in folders if not (f / "manifest.json").is_file()]
    if missing:
        raise EntrypointError(f"no service {', '.join(map(repr, missing))} in {root}")
    # schema.sql (written by the build) is read directly; an older folder with only models.py has
    # its DDL compiled in a child process
    ddl = compile_ddl([f for f in folders if not (f / SCHEMA_FILE).is_file()])
    llm = llm_from_settings(settings)
    runtimes: dict[str, Any] = {}
    failed: list[str] = []
    for f in folders:
        try:
            runtimes[f.name] = ServiceRuntime.from_folder(f, settings, llm, ddl=ddl.get(str(f)))
        except Exception as exc:  # a pack goes on without a folder that does not load, and says so
            failed.append(f"{f}: {type(exc).__name__}: {exc}"[:500])
    if not runtimes:
        raise EntrypointError("no service loads: " + "; ".join(failed))
    for reason in failed:
        print(f"skipped {reason}", file=sys.stderr, flush=True)
    return runtimes, settings


def run_asgi(asgi: Any, host: str, port: int) -> None:
    """uvicorn on ``host:port`` (``compoworld.runtime.app.run_asgi``: frozen heap, exit hooks)."""
    from compoworld.runtime.app import run_asgi as serve

    serve(asgi, host, port)


def read_settings() -> Any:
    """The process's settings from its environment; a value they refuse (a limit out of range, from
    the chart's ``orchestrator.limits`` or ``-e``) is exit 2 with the reason, not a traceback."""
    from pydantic import ValidationError

    from compoworld.settings import Settings

    try:
        return Settings()
    except ValidationError as exc:
        raise EntrypointError(f"a setting in the environment is refused: {exc}") from exc


def require_admin_token(settings: Any) -> None:
    """A process serving beside others (a service pack, the orchestrator alone) shares their admin
    token; without one configured it would make up its own and nothing could talk to it."""
    if not settings.admin_token_configured:
        raise EntrypointError(
            "COMPOWORLD_ADMIN_TOKEN is not set: the services and the orchestrator must share one admin "
            "token; set a long random value (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )


def serve_services(names: list[str], library: Path | None, host: str, port: int) -> None:
    """One service at ``/``, or several (a pack), each under ``/services/<name>``."""
    from compoworld.runtime.app import create_library_app, create_service_app

    runtimes, settings = load_services(names, library)
    require_admin_token(settings)
    if len(names) == 1:
        asgi = create_service_app(runtimes[names[0]], settings)
    else:
        asgi = create_library_app(runtimes, settings)
    print(f"serving {', '.join(runtimes)} on http://{host}:{port}", flush=True)
    run_asgi(asgi, host, port)


def serve_orchestrator(service_urls: Path | None, tasks: Path | None, host: str, port: int) -> None:
    """The orchestrator alone over remote services (URL map file or URL template)."""
    from compoworld.errors import CompoWorldError
    from orchestrator.server import orchestrator_app_from

    settings = read_settings()
    require_admin_token(settings)
    try:
        app = orchestrator_app_from(settings, service_urls, tasks)
    except CompoWorldError as exc:
        raise EntrypointError(str(exc)) from exc
    print(f"orchestrator on http://{host}:{port}  (POST /episodes, GET /services)", flush=True)
    run_asgi(app, host, port)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compoworld", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="Serve one service, or several each under /services/<name>.")
    serve.add_argument("names", nargs="+", help="Service name(s) from the library.")
    serve.add_argument("--library", "-l", type=Path, default=None, help="Library folder.")
    orch = commands.add_parser("orchestrator", help="The orchestrator alone, services remote.")
    orch.add_argument("--service-urls", type=Path, default=None, help="JSON map service -> URL(s).")
    orch.add_argument(
        "--tasks", type=Path, default=None, help="Task file(s) whose ids POST /episodes accepts."
    )
    for sub, port in ((serve, 9001), (orch, 8000)):
        sub.add_argument("--host", default="127.0.0.1", help="Interface to bind.")
        sub.add_argument("--port", type=int, default=port, help="Port.")
    return parser


def _full_cli(argv: list[str]) -> None:
    """Replace this process with the full CLI (every other command)."""
    script = Path(sys.executable).with_name("compoworld")
    if script.is_file():
        os.execv(script, [str(script), *argv])
    os.execvp("compoworld", ["compoworld", *argv])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in SERVING_COMMANDS:
        _full_cli(args)
    ns = _parser().parse_args(args)
    try:
        if ns.command == "serve":
            serve_services(ns.names, ns.library, ns.host, ns.port)
        else:
            serve_orchestrator(ns.service_urls, ns.tasks, ns.host, ns.port)
    except EntrypointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
