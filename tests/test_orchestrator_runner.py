"""The runner's commands: `run` (in process and against a remote orchestrator), `report`, `demo`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from compoworld.cli import build_embedded_app, cli_app
from compoworld.settings import Settings
from orchestrator.agents import create_agent
from orchestrator.backends import RemoteBackend
from orchestrator.cli import run
from orchestrator.report import report, summarize
from orchestrator.runner import RunConfig, run_tasks
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import serving, task_create, task_update, write_library
from tests.tasks_library import write_library as scenario_library


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("run")(run)
    app.command("report")(report)
    return app


def test_run_writes_trajectories_and_report_reads_them(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create(), task_update()])
    out = tmp_path / "traj.jsonl"
    args = [
        "run",
        "--tasks",
        str(tmp_path / "tasks.jsonl"),
        "--library",
        str(tmp_path / "lib"),
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(
        cli(), [*args, "--agent", "oracle", "--mode", "gateway", "--rollouts", "2", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and all(r["meta"]["score"] == 1.0 for r in rows)
    assert all(set(r) == {"tools", "messages", "meta", "source"} for r in rows)
    png = tmp_path / "report.png"
    shown = CliRunner().invoke(cli(), ["report", str(out), "--out-png", str(png)])
    assert shown.exit_code == 0, shown.output
    assert "By capability" in shown.output and "field_equals" in shown.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = CliRunner().invoke(cli(), [*args, "--agent", "nope"])
    assert bad.exit_code == 2 and "unknown agent" in bad.output


def test_report_breaks_results_down_by_label() -> None:
    def row(source: str, caps: list[str], services: int, walk: int, passed: list[bool]) -> dict[str, object]:
        criteria = [
            {"id": f"c{i}", "kind": "row_exists" if i else "answer_contains", "passed": p}
            for i, p in enumerate(passed)
        ]
        meta = {
            "score": 1.0 if all(passed) else 0.0,
            "rubric_score": sum(passed) / len(passed),
            "capabilities": caps,
            "domain": "crm",
            "services": [f"s{i}" for i in range(services)],
            "walk_length": walk,
            "criteria": criteria,
        }
        return {"source": source, "meta": meta}

    data = summarize(
        [
            row("a", ["x", "y"], 2, 3, [True, True]),
            row("b", ["x"], 1, 1, [False, True]),
            row("b", [], 1, 2, [False, False]),
        ]
    )
    assert data.total.episodes == 3 and data.total.complete == 1
    assert data.breakdowns["capability"].cells["x"].pass_rate == 0.5
    assert data.breakdowns["capability"].cells["(none)"].episodes == 1
    assert data.breakdowns["agent"].cells["b"].mean_score == 0.25
    assert data.breakdowns["services"].cells["2"].pass_rate == 1.0
    assert data.criteria == {"answer_contains": (1, 3), "row_exists": (2, 3)}


async def test_run_drives_a_remote_orchestrator_over_http(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    app, _ = build_embedded_app(tmp_path / "lib", Settings(), None)
    async with serving(app) as url:
        backend = RemoteBackend(url)
        summary = await run_tasks(
            backend,
            create_agent("oracle"),
            [task_update()],
            RunConfig(rollouts=3, concurrency=3),
            tmp_path / "t.jsonl",
            progress=False,
        )
        await backend.aclose()
    assert summary.episodes == 3 and summary.complete == 3 and summary.errors == []
    assert app.state.orchestrator.store._records == {}  # every episode was released


def test_demo_runs_end_to_end_on_a_hand_made_library(tmp_path: Path) -> None:
    scenario_library(tmp_path / "lib")  # people known in several services: what scenarios are built on
    out = tmp_path / "demo"
    result = CliRunner().invoke(
        cli_app(), ["demo", "--library", str(tmp_path / "lib"), "--out", str(out), "--n-tasks", "4"]
    )
    assert result.exit_code == 0, result.output
    for name in ("tasks.jsonl", "traj_oracle.jsonl", "traj_noop.jsonl", "trajectories.jsonl", "report.png"):
        assert (out / name).stat().st_size > 0, name
    oracle = [json.loads(line) for line in (out / "traj_oracle.jsonl").read_text().splitlines()]
    noop = [json.loads(line) for line in (out / "traj_noop.jsonl").read_text().splitlines()]
    assert len(oracle) == 4 and all(r["meta"]["score"] == 1.0 for r in oracle)
    assert all(r["meta"]["score"] == 0.0 for r in noop)
    assert "CompoWorld demo" in result.output and "written to" in result.output
    assert len((out / "sft.jsonl").read_text().splitlines()) == 4  # the trainer's export of the oracle's
    empty = CliRunner().invoke(cli_app(), ["demo", "--library", str(tmp_path / "nothing"), "--out", str(out)])
    assert empty.exit_code == 1 and "demo failed" in empty.output
