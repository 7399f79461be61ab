"""Task files (JSONL, one Task per line) and the registry ``POST /episodes {task_id}`` reads from."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from orchestrator.errors import InvalidRequest, TaskNotFound
from orchestrator.models import Task

__all__ = ["TaskRegistry", "read_tasks", "write_tasks"]


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(path.glob("*.jsonl"))
    if path.is_file():
        return [path]
    raise InvalidRequest(f"task file {path} does not exist")


def read_tasks(path: Path) -> list[Task]:
    """Every task in a JSONL file (or in every ``*.jsonl`` of a folder), in file order."""
    tasks: list[Task] = []
    for file in _files(path):
        for lineno, line in enumerate(file.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                tasks.append(Task.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise InvalidRequest(f"{file}:{lineno}: not a valid task ({where}: {first['msg']})") from exc
    return tasks


def write_tasks(path: Path, tasks: Iterable[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(t.model_dump_json() + "\n" for t in tasks))


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
            raise InvalidRequest(f"two different tasks share the id '{task.id}'")
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
