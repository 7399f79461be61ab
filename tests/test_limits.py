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
from compoworld.settings import Settings
from orchestrator.lifecycle import OrchestratorConfig
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
