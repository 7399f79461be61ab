"""Task files (JSONL, one Task per line): the one reader and writer, and the registry of loaded tasks.

``scan_tasks`` reads a file (or every ``*.jsonl`` of a folder) and names each unusable line and
why (not JSON, not a task, a duplicate id) while still returning the good ones: what ``tasks
check`` reports. ``read_tasks`` is the strict form every other reader uses (the runner, the
orchestrator's registry, the exports): the first bad line is an ``InvalidRequest`` naming it.
``write_tasks`` writes deterministically (the same tasks always give the same bytes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from orchestrator.errors import InvalidRequest, TaskConflict, TaskNotFound
from orchestrator.models import Task

__all__ = ["TaskFileError", "TaskRegistry", "dump_tasks", "read_tasks", "scan_tasks", "write_tasks"]


class TaskFileError(BaseModel):
    """One unusable line of a task file (a report entry, not an exception)."""

    line: int = Field(description="1-based line number (0: the file itself could not be read).")
    reason: str = Field(description="Why the line is not a valid task.")
    file: str = Field(default="", description="The file, when a folder of task files was read.")

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}" if self.file else f"line {self.line}: {self.reason}"


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(path.glob("*.jsonl"))
    if path.is_file():
        return [path]
    raise InvalidRequest(f"task file {path} does not exist")


def _reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "task"
        parts.append(f"{where}: {err['msg']}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more


def _parse(line: str) -> Task:
    """The task on one line; InvalidRequest says why there is none."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"not valid JSON: {exc.msg} (column {exc.colno})") from exc
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        raise InvalidRequest(f"not a valid task: {_reason(exc)}") from exc


def scan_tasks(path: Path) -> tuple[list[tuple[int, Task]], list[TaskFileError]]:
    """(line number, task) for every valid line, and an error for every unusable one."""
    tasks: list[tuple[int, Task]] = []
    errors: list[TaskFileError] = []
    seen: dict[str, str] = {}
    files = _files(path)
    for file in files:
        label = str(file) if len(files) > 1 or path.is_dir() else ""
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(TaskFileError(line=0, reason=f"cannot read {file}: {exc}", file=label))
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                parsed = _parse(line)
            except InvalidRequest as exc:
                errors.append(TaskFileError(line=number, reason=str(exc), file=label))
                continue
            if parsed.id in seen:
                reason = f"duplicate task id '{parsed.id}' (first on {seen[parsed.id]})"
                errors.append(TaskFileError(line=number, reason=reason, file=label))
            else:
                seen[parsed.id] = f"{label}:{number}" if label else f"line {number}"
                tasks.append((number, parsed))
    return tasks, errors


def read_tasks(path: Path) -> list[Task]:
    """Every task in a JSONL file (or in every ``*.jsonl`` of a folder), in file order; strict."""
    tasks, errors = scan_tasks(path)
    if errors:
        first = errors[0]
        where = first.file or str(path)
        raise InvalidRequest(f"{where}:{first.line}: {first.reason}")
    return [task for _, task in tasks]


def dump_tasks(tasks: Iterable[Task]) -> str:
    """The JSONL text of ``tasks``: the same tasks always give the same bytes."""
    return "".join(t.model_dump_json() + "\n" for t in tasks)


def write_tasks(path: Path, tasks: Iterable[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_tasks(tasks), encoding="utf-8")


class TaskRegistry:
    """Tasks by id; ids must be unique across the loaded files."""

    def __init__(self, tasks: Iterable[Task] = ()) -> None:
        self._tasks: dict[str, Task] = {}
        for task in tasks:
            self.add(task)

    @classmethod
    def load(cls, path: Path | None) -> TaskRegistry:
        return cls(read_tasks(path) if path is not None else ())

    def add(self, task: Task) -> None:
        if task.id in self._tasks and self._tasks[task.id] != task:
            raise TaskConflict(f"two different tasks share the id '{task.id}'")
        self._tasks[task.id] = task

    def get(self, task_id: str) -> Task:
        task = self._tasks.get(task_id)
        if task is None:
            hint = (
                f"{len(self._tasks)} tasks are loaded"
                if self._tasks
                else "no task file is loaded (--tasks FILE)"
            )
            raise TaskNotFound(f"unknown task '{task_id}': {hint}")
        return task

    def ids(self) -> list[str]:
        return sorted(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)
