"""Task files: one reader and writer for every caller (tasks check, the runner, the exports)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.errors import InvalidRequest
from orchestrator.tasksource import dump_tasks, read_tasks, scan_tasks, write_tasks
from tests.orchestrator_fixture import task_create, task_update


def test_written_tasks_read_back_equal_and_the_bytes_are_stable(tmp_path: Path) -> None:
    tasks = [task_create(), task_update()]
    write_tasks(tmp_path / "a" / "tasks.jsonl", tasks)
    assert read_tasks(tmp_path / "a" / "tasks.jsonl") == tasks
    assert (tmp_path / "a" / "tasks.jsonl").read_text() == dump_tasks(tasks)


def test_a_folder_reads_every_jsonl_in_name_order(tmp_path: Path) -> None:
    write_tasks(tmp_path / "b.jsonl", [task_update()])
    write_tasks(tmp_path / "a.jsonl", [task_create()])
    assert [t.id for t in read_tasks(tmp_path)] == [task_create().id, task_update().id]


def test_scanning_names_every_bad_line_and_keeps_the_good_ones(tmp_path: Path) -> None:
    good = task_create().model_dump_json()
    path = tmp_path / "tasks.jsonl"
    path.write_text(f"{good}\nnot json\n{{}}\n\n{good}\n")
    tasks, errors = scan_tasks(path)
    assert [n for n, _ in tasks] == [1]
    assert [(e.line, e.reason.split(":")[0]) for e in errors] == [
        (2, "not valid JSON"),
        (3, "not a valid task"),
        (5, f"duplicate task id '{task_create().id}' (first on line 1)"),
    ]


def test_the_strict_reader_refuses_a_file_with_a_bad_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(task_create().model_dump_json() + "\n{}\n")
    with pytest.raises(InvalidRequest, match=r"tasks\.jsonl:2: not a valid task: id: Field required"):
        read_tasks(path)
    with pytest.raises(InvalidRequest, match="does not exist"):
        read_tasks(tmp_path / "missing.jsonl")
