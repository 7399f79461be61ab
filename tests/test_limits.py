"""Bounded memory: ended episodes count against capacity, limits are bounded, and every limit of
``compoworld up`` is settable from its command line (a bad value is exit 2, never a server)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

import compoworld.cli as cli
from compoworld.cli import build_embedded_app, cli_app
from compoworld.runtime.app import trim_heap
from compoworld.runtime.pool import rss_mb
from compoworld.settings import ORCHESTRATOR_LIMITS, Settings
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.server import create_orchestrator_app
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, write_library


@pytest.fixture
def library(tmp_path: Path) -> tuple[Path, Path]:
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    return write_library(tmp_path / "lib"), tmp_path / "tasks.jsonl"


async def test_ended_episodes_count_against_capacity_until_deleted(library: tuple[Path, Path]) -> None:
    lib, tasks = library
    app, _ = build_embedded_app(lib, Settings(admin_token="t"), tasks, config=OrchestratorConfig(max_live=2))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        first = (await http.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
        assert (await http.post(f"/episodes/{first}/finish", json={"answer": ""})).status_code == 200
        assert (await http.post("/episodes", json={"task_id": "t-create"})).status_code == 201
        full = await http.post("/episodes", json={"task_id": "t-create"})
        assert full.status_code == 503 and "2 episodes are held" in full.json()["detail"]
        assert (await http.delete(f"/episodes/{first}")).status_code == 200
        assert (await http.post("/episodes", json={"task_id": "t-create"})).status_code == 201


async def test_an_episode_wall_clock_beyond_a_day_is_refused(library: tuple[Path, Path]) -> None:
    lib, tasks = library
    app, _ = build_embedded_app(lib, Settings(admin_token="t"), tasks)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        resp = await http.post("/episodes", json={"task_id": "t-create", "max_wall_s": 1e9})
        assert resp.status_code == 422
    with pytest.raises(ValueError):
        OrchestratorConfig(max_wall_s=1e9)


@pytest.mark.parametrize(
    "flags",
    [
        ["--max-wall-s", "1e9"],
        ["--max-live", "0"],
        ["--max-request-bytes", "0"],
        ["--max-trajectory-bytes", "0"],
        ["--max-episodes", "0"],
        ["--group-open-deadline-s", "-1"],
        ["--max-json-depth", "1"],
    ],
    ids=str,
)
def test_up_refuses_a_bad_limit_with_exit_2(
    flags: list[str], library: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[Any] = []
    monkeypatch.setattr(cli, "run_asgi", lambda asgi, host, port: served.append(asgi))
    result = CliRunner().invoke(cli_app(), ["up", "--library", str(library[0]), *flags])
    assert result.exit_code == 2 and not served, result.output


def test_the_orchestrator_command_refuses_a_bad_limit_from_its_environment_with_exit_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPOWORLD_ADMIN_TOKEN", "t")
    monkeypatch.setenv("COMPOWORLD_GROUP_OPEN_DEADLINE_S", "-1")
    result = CliRunner().invoke(cli_app(), ["orchestrator"])
    assert result.exit_code == 2 and "group_open_deadline_s" in result.output, result.output


def test_up_passes_every_limit_from_its_flags(
    library: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[Any] = []
    monkeypatch.setattr(cli, "run_asgi", lambda asgi, host, port: served.append(asgi))
    monkeypatch.setenv("COMPOWORLD_ADMIN_TOKEN", "from-env")
    flags = ["--max-live", "7", "--max-steps", "9", "--max-wall-s", "60", "--max-request-bytes", "5000"]
    flags += ["--max-payload-bytes", "4000", "--max-result-bytes", "6000", "--max-episodes", "11"]
    flags += ["--max-trajectory-messages", "50", "--max-trajectory-bytes", "70000"]
    result = CliRunner().invoke(
        cli_app(), ["up", "--library", str(library[0]), "--tasks", str(library[1]), *flags]
    )
    assert result.exit_code == 0, result.output
    orch = served[0].state.orchestrator
    assert (orch.config.max_live, orch.config.max_steps, orch.config.max_wall_s) == (7, 9, 60.0)
    assert orch.limits.max_bytes == 4000 and "admin token" not in result.output  # configured: none made
    assert (orch.budget.max_messages, orch.budget.max_bytes) == (50, 70000)
    pool = served[0].state.runtimes
    assert (pool.settings.max_request_bytes, pool.settings.max_result_bytes, pool.settings.max_episodes) == (
        5000,
        6000,
        11,
    )


REMOTE_ONLY = {"service_timeout_s", "store_turn_limit_s"}  # remote services, shared store: not in `up`


def _changed(name: str) -> int | float:
    """A valid value of the setting ``name`` other than its default."""
    default = Settings.model_fields[name].default
    return default + 1 if isinstance(default, int) else default / 2


def test_up_has_a_flag_for_every_orchestrator_limit_and_each_reaches_the_orchestrator(
    library: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[Any] = []
    monkeypatch.setattr(cli, "run_asgi", lambda asgi, host, port: served.append(asgi))
    chosen = {n: _changed(n) for n in ORCHESTRATOR_LIMITS if n not in REMOTE_ONLY}
    flags = [arg for n, v in chosen.items() for arg in (f"--{n.replace('_', '-')}", str(v))]
    result = CliRunner().invoke(
        cli_app(), ["up", "--library", str(library[0]), "--tasks", str(library[1]), *flags]
    )
    assert result.exit_code == 0, result.output
    settings = served[0].state.runtimes.settings
    assert {n: getattr(settings, n) for n in chosen} == chosen
    config = served[0].state.orchestrator.config
    assert {f: getattr(config, f) for f in OrchestratorConfig.model_fields if f in chosen} == {
        f: chosen[f] for f in OrchestratorConfig.model_fields if f in chosen
    }


def test_the_orchestrator_alone_takes_every_limit_from_its_settings() -> None:
    chosen: dict[str, Any] = {n: _changed(n) for n in ORCHESTRATOR_LIMITS}
    app = create_orchestrator_app(Settings(admin_token="t", **chosen), urls={"crm": ["http://127.0.0.1:9"]})
    orch = app.state.orchestrator
    shared = [f for f in OrchestratorConfig.model_fields if f in chosen]
    assert len(shared) == 7 and all(getattr(orch.config, f) == chosen[f] for f in shared)
    assert (orch.budget.max_messages, orch.budget.max_bytes) == (
        chosen["max_trajectory_messages"],
        chosen["max_trajectory_bytes"],
    )
    assert (orch.limits.max_bytes, orch.limits.max_depth) == (
        chosen["max_payload_bytes"],
        chosen["max_json_depth"],
    )


def test_settings_and_the_orchestrator_config_default_alike() -> None:
    config = OrchestratorConfig()
    for name in OrchestratorConfig.model_fields:
        if name in Settings.model_fields:
            assert Settings.model_fields[name].default == getattr(config, name), name
    assert OrchestratorConfig.from_settings(Settings.defaults(episode_ttl_s=300)).idle_ttl_s == 300  # capped


async def test_trimming_after_a_burst_hands_the_released_memory_back(library: tuple[Path, Path]) -> None:
    lib, tasks = library
    app, _ = build_embedded_app(
        lib, Settings(admin_token="t"), tasks, config=OrchestratorConfig(max_live=5000)
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        opened = [
            (await http.post("/episodes", json={"task_id": "t-create"})).json()["episode_id"]
            for _ in range(600)
        ]
        for eid in opened:
            await http.delete(f"/episodes/{eid}")
    assert app.state.orchestrator.released == 600  # what the reaper watches before it trims
    gc.collect()
    before = rss_mb()
    assert trim_heap()
    assert rss_mb() < before - 10, (before, rss_mb())
