"""The image's entrypoint serves with only what serving needs, and hands everything else to the CLI.

Real processes on 127.0.0.1, started exactly as a container starts them (``python -m
compoworld.deploy.entrypoint serve ...``). ``-X importtime`` makes the server itself list every
module it imports, start-up and a served tool call included; the heavy ones must not be there.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "generated_services"
HEAVY = (
    "matplotlib",
    "datasets",
    "pyarrow",
    "pandas",
    "typer",
    "rich",
    "sqlalchemy",
    "sqlmodel",
    "kubernetes",
    "docker",
    "networkx",
    "jinja2",
    "torch",
    "transformers",
    "openai",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def serve_and_list_imports(*names: str) -> tuple[set[str], dict[str, object]]:
    """Top-level packages a serving process imported, and the result of one tool call through it."""
    port = free_port()
    cmd = [sys.executable, "-X", "importtime", "-m", "compoworld.deploy.entrypoint", "serve", *names,
           "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    env = os.environ | {"COMPOWORLD_LIBRARY": str(LIBRARY), "COMPOWORLD_ADMIN_TOKEN": "t"}
    # the import list goes to a file: a pipe nobody reads while the server starts fills at 64 KiB and
    # blocks the server (a serving process that imports too much then hangs instead of failing here)
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
        base = f"http://127.0.0.1:{port}" + ("" if len(names) == 1 else f"/services/{names[0]}")
        try:
            deadline = time.monotonic() + 120
            while True:
                assert proc.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "the server did not start in 120 s"
                try:
                    if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            tool = next(t for t in httpx.get(f"{base}/tools").json() if t["x-kind"] == "read")
            result = httpx.post(f"{base}/tools/{tool['function']['name']}", json={}, timeout=30).json()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.seek(0)
            stderr = log.read()
    modules = {m.group(1).split(".")[0] for m in re.finditer(r"^import time:.*\|\s*(\S+)$", stderr, re.M)}
    return modules, result


@pytest.mark.parametrize("names", [("crm",), ("crm", "accounting", "mailsquad")], ids=["single", "pack"])
def test_serving_imports_none_of_the_heavy_modules(names: tuple[str, ...]) -> None:
    modules, result = serve_and_list_imports(*names)
    assert {"fastapi", "uvicorn", "compoworld"} <= modules  # the list is real
    assert result["success"] is True, result
    assert not modules & set(HEAVY), f"the serving process imported {sorted(modules & set(HEAVY))}"


def test_the_ddl_child_compiles_what_the_runtime_would() -> None:
    from compoworld.deploy.entrypoint import compile_ddl
    from compoworld.runtime.service import sqlmodel_ddl

    folder = LIBRARY / "crm"
    compiled = compile_ddl([folder])
    assert compiled == {str(folder): sqlmodel_ddl(folder, "crm")}
    assert compiled[str(folder)] and all(s.startswith("CREATE TABLE") for s in compiled[str(folder)] or [])


def run_entrypoint(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "compoworld.deploy.entrypoint", *args]
    env = os.environ | {"COMPOWORLD_LIBRARY": str(LIBRARY)} | (env or {})
    return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120, env=env)


def test_an_unknown_service_is_exit_2_with_its_name() -> None:
    result = run_entrypoint("serve", "crm", "no_such_service")
    assert result.returncode == 2 and "no service 'no_such_service'" in result.stderr


def test_a_limit_the_settings_refuse_is_exit_2_with_its_name() -> None:
    env = {"COMPOWORLD_ADMIN_TOKEN": "t", "COMPOWORLD_MAX_LIVE": "0"}
    result = run_entrypoint("orchestrator", "--port", "1", env=env)
    assert result.returncode == 2 and "max_live" in result.stderr and "Traceback" not in result.stderr


def test_other_commands_are_handed_to_the_full_cli(tmp_path: Path) -> None:
    shown = run_entrypoint("--help")
    assert shown.returncode == 0 and "tasks" in shown.stdout and "deploy" in shown.stdout
    out = tmp_path / "docker-compose.yml"
    written = run_entrypoint("deploy", "compose", "--out", str(out))
    assert written.returncode == 0, written.stderr
    assert "serve\n      - crm" in out.read_text()
    assert out.read_text().count("condition: service_healthy") == len(list(LIBRARY.glob("*/manifest.json")))
