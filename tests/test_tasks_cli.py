"""`compoworld tasks generate|check|stats` through typer's CliRunner, including bad libraries and bad files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.manifest import ColumnDef, EntityDef, ServiceManifest, ToolDef
from orchestrator.models import Task
from orchestrator.tasks.cli import tasks_app
from tests.tasks_library import write_library, write_service

runner = CliRunner()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_library(tmp_path_factory.mktemp("lib"))


@pytest.fixture(scope="module")
def task_file(library: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "tasks.jsonl"
    result = runner.invoke(
        tasks_app(), ["generate", "--library", str(library), "--n", "25", "--seed", "5", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def broken_service(root: Path) -> Path:
    """A service whose every tool fails: its read wants an integer key for string ids, its list a token
    no value can satisfy (an empty match of at least one character)."""
    thing = EntityDef(
        name="thing",
        class_name="Thing",
        table="thing",
        pk="id",
        pk_type="string",
        id_prefix="thi",
        label_column="name",
        columns=[
            ColumnDef(name="id", type="string", primary_key=True, nullable=False, read_only=True),
            ColumnDef(name="name", type="string", semantic="title"),
        ],
    )
    tools = [
        ToolDef(
            name="getThing",
            kind="read",
            operation="read",
            backend="implemented",
            entity="thing",
            pk_arg="id",
            input_schema={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        ),
        ToolDef(
            name="listThings",
            kind="read",
            operation="list",
            backend="implemented",
            entity="thing",
            search_arg="q",
            input_schema={
                "type": "object",
                "properties": {
                    "q": {"type": "string"},
                    "token": {"type": "string", "pattern": "^$", "minLength": 1},
                },
                "required": ["token"],
            },
        ),
    ]
    manifest = ServiceManifest(name="broken", entities=[thing], tools=tools)
    write_service(
        root, manifest, {"thing": [{"id": f"thi_{i:06d}", "name": f"Thing {i}"} for i in range(1, 4)]}
    )
    return root


def test_generate_writes_tasks_and_a_report(task_file: Path) -> None:
    lines = task_file.read_text().splitlines()
    assert len(lines) == 25 and all(Task.model_validate_json(line) for line in lines)


def test_check_reports_every_task_valid_with_the_rates_per_solution_kind(
    task_file: Path, library: Path
) -> None:
    result = runner.invoke(tasks_app(), ["check", str(task_file), "--library", str(library)])
    assert result.exit_code == 0, result.output
    for line in ("25", "valid variants completed", "wrong solutions caught", "extra_delete", "do-nothing"):
        assert line in result.output


def test_stats_prints_the_distributions(task_file: Path) -> None:
    result = runner.invoke(tasks_app(), ["stats", str(task_file)])
    assert result.exit_code == 0, result.output
    for title in ("services per task", "walk length", "capabilities", "domains", "read / write"):
        assert title in result.output


def _cells(output: str) -> str:
    """A rich table's text with the borders gone and the spaces collapsed."""
    return " ".join(re.sub(r"[│┃┏┓┗┛┡┩└┘━─┳┻╇┼├┤]", " ", output).split())


def test_stats_prints_the_spread_with_the_domains_of_the_library_the_tasks_came_from(
    task_file: Path, library: Path
) -> None:
    from orchestrator.tasks.stats import BUSIEST, SAME_VERTICAL, spread
    from orchestrator.tasksource import scan_tasks

    tasks = [t for _, t in scan_tasks(task_file)[0]]
    domains = {p.parent.name: json.loads(p.read_text())["domain"] for p in library.glob("*/manifest.json")}
    figures = spread(tasks, domains)
    result = runner.invoke(tasks_app(), ["stats", str(task_file), "--library", str(library)])
    assert result.exit_code == 0, result.output
    text = _cells(result.output)
    assert f"busiest service's share of tasks {figures[BUSIEST]:.1%}" in text
    assert f"same-vertical service pairs {figures[SAME_VERTICAL]:.1%}" in text
    # without the library, the starter's domains do not name these services: no pair share is made up
    bare = _cells(runner.invoke(tasks_app(), ["stats", str(task_file)]).output)
    assert "same-vertical service pairs -" in bare and "pass --library" in bare


def test_check_names_each_bad_line_of_a_hand_edited_file(
    task_file: Path, library: Path, tmp_path: Path
) -> None:
    lines = task_file.read_text().splitlines()
    edited = json.loads(lines[2])
    edited["rubric"] = [c for c in edited["rubric"] if c["label"] == "no_op_pass"]  # nothing left to fail
    broken = [lines[0], "{not json", json.dumps({"id": "x"}), lines[0], json.dumps(edited), lines[1]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(broken) + "\n")
    result = runner.invoke(tasks_app(), ["check", str(bad), "--library", str(library)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    out = " ".join(result.output.split())
    assert "line 2: not valid JSON" in out
    assert "line 3: not a valid task" in out and "instruction" in out
    assert "line 4: duplicate task id" in out
    assert f"line 5 ({edited['id']})" in out and "no criterion fails when the agent does nothing" in out


def test_check_flags_a_task_whose_gold_arguments_were_changed(
    task_file: Path, library: Path, tmp_path: Path
) -> None:
    task = Task.model_validate_json(task_file.read_text().splitlines()[0])
    task.gold_calls[0].arguments = {"nonsense": 1}
    task.meta.walk[0].arguments = {"nonsense": 1}
    path = tmp_path / "t.jsonl"
    path.write_text(task.model_dump_json() + "\n")
    result = runner.invoke(tasks_app(), ["check", str(path), "--library", str(library)])
    assert result.exit_code == 1 and "line 1" in result.output and "Traceback" not in result.output


def test_a_library_with_one_service_has_no_cross_service_scenario_and_says_why(tmp_path: Path) -> None:
    lib = write_library(tmp_path / "lib", ["crm"])
    out = tmp_path / "t.jsonl"
    result = runner.invoke(tasks_app(), ["generate", "--library", str(lib), "--n", "5", "--out", str(out)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert "no valid task could be generated" in text and "discarded:" in text
    assert out.read_text() == ""


def test_a_service_whose_tools_all_fail_yields_a_report_and_no_task(tmp_path: Path) -> None:
    lib = broken_service(tmp_path / "lib")
    out = tmp_path / "t.jsonl"
    result = runner.invoke(tasks_app(), ["generate", "--library", str(lib), "--n", "3", "--out", str(out)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert "no valid task could be generated" in text and "no person" in text
    assert out.read_text() == ""


def test_a_broken_service_next_to_good_ones_never_reaches_a_task(tmp_path: Path) -> None:
    lib = broken_service(write_library(tmp_path / "lib", ["crm", "billing"]))
    out = tmp_path / "t.jsonl"
    result = runner.invoke(tasks_app(), ["generate", "--library", str(lib), "--n", "10", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert all("broken" not in Task.model_validate_json(x).services for x in out.read_text().splitlines())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-len", "5", "--max-len", "3"], "larger than --max-len"),
        (["--split-services", "nope"], "not in the library"),
    ],
)
def test_bad_options_are_clear_errors(library: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(
        tasks_app(), ["generate", "--library", str(library), "--out", str(tmp_path / "t"), *args]
    )
    assert result.exit_code == 2 and message in " ".join(result.output.split())


def test_missing_library_and_missing_file_are_clear_errors(tmp_path: Path) -> None:
    result = runner.invoke(tasks_app(), ["generate", "--library", str(tmp_path / "none")])
    assert result.exit_code == 2 and "does not exist" in " ".join(result.output.split())
    (tmp_path / "empty").mkdir()
    result = runner.invoke(tasks_app(), ["generate", "--library", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no services" in result.output
    for command in (
        ["check", str(tmp_path / "x.jsonl"), "--library", str(tmp_path)],
        ["stats", str(tmp_path / "x")],
    ):
        result = runner.invoke(tasks_app(), command)
        assert result.exit_code == 2 and "no task file" in result.output


def test_show_prints_one_task_per_opening_archetype_with_its_instruction(task_file: Path) -> None:
    from orchestrator.tasksource import scan_tasks

    tasks = [t for _, t in scan_tasks(task_file)[0]]
    result = runner.invoke(tasks_app(), ["show", str(task_file), "--per-archetype"])
    assert result.exit_code == 0, result.output
    openers = {t.meta.scenario[0] for t in tasks}
    assert result.output.count("### ") == len(openers)
    first = next(t for t in tasks if t.meta.scenario[0] == sorted(openers)[0])
    assert first.instruction[:60] in result.output.replace("\n", " ")


def test_a_strict_spread_changes_nothing_on_a_library_too_small_for_the_share_cap(
    library: Path, task_file: Path, tmp_path: Path
) -> None:
    """``--strict-spread`` gives up past the share cap only on a library of 800+ services; on four it is
    the same run, byte for byte."""
    out = tmp_path / "strict.jsonl"
    args = ["generate", "--library", str(library), "--n", "25", "--seed", "5", "--strict-spread"]
    result = runner.invoke(tasks_app(), [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == task_file.read_bytes()
