"""Task files (JSONL, one Task per line): written deterministically, read with line-numbered errors.

A corrupted or hand-edited file names each bad line and why (not JSON, a missing field,
a duplicate id) instead of raising; the good lines are still returned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from orchestrator.models import Task

__all__ = ["TaskFileError", "dump_tasks", "read_tasks", "write_tasks"]


class TaskFileError(BaseModel):
    """One unusable line of a task file."""

    line: int = Field(description="1-based line number.")
    reason: str = Field(description="Why the line is not a valid task.")


def dump_tasks(tasks: Iterable[Task]) -> str:
    """The JSONL text of ``tasks``: the same tasks always give the same bytes."""
    return "".join(t.model_dump_json() + "\n" for t in tasks)


def write_tasks(path: Path, tasks: Iterable[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_tasks(tasks), encoding="utf-8")


def _reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "task"
        parts.append(f"{where}: {err['msg']}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more


def read_tasks(path: Path) -> tuple[list[tuple[int, Task]], list[TaskFileError]]:
    """(line number, task) for every valid line, and an error for every invalid one."""
    tasks: list[tuple[int, Task]] = []
    errors: list[TaskFileError] = []
    seen: dict[str, int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [TaskFileError(line=0, reason=f"cannot read {path}: {exc}")]
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(
                TaskFileError(line=number, reason=f"not valid JSON: {exc.msg} (column {exc.colno})")
            )
            continue
        try:
            task = Task.model_validate(data)
        except ValidationError as exc:
            errors.append(TaskFileError(line=number, reason=f"not a valid task: {_reason(exc)}"))
            continue
        if task.id in seen:
            errors.append(
                TaskFileError(
                    line=number, reason=f"duplicate task id '{task.id}' (first on line {seen[task.id]})"
                )
            )
            continue
        seen[task.id] = number
        tasks.append((number, task))
    return tasks, errors
