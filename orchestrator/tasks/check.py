"""``tasks check``: re-verify every task of a file against a library and summarise."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field

from compoworld.runtime.service import ServiceRuntime
from orchestrator.graph.build import library_version
from orchestrator.models import Task
from orchestrator.rubric.readers import SeedCache
from orchestrator.tasks.seeds import SeedIndex
from orchestrator.tasks.verify import SolutionRates, TaskCheck, check_task
from orchestrator.tasksource import TaskFileError

__all__ = ["CheckReport", "InvalidTask", "check_tasks"]


class InvalidTask(BaseModel):
    """A task that parsed but does not verify."""

    line: int = Field(description="Line of the task file.")
    task_id: str = Field(description="Task id.")
    reasons: list[str] = Field(description="What failed.")


class CheckReport(BaseModel):
    """Outcome of re-verifying a task file."""

    lines: int = Field(default=0, description="Non-empty lines read.")
    valid: int = Field(default=0, description="Tasks that verify.")
    invalid: list[InvalidTask] = Field(
        default_factory=list, description="Tasks that parse but do not verify."
    )
    bad_lines: list[TaskFileError] = Field(default_factory=list, description="Lines that are not tasks.")
    solutions: SolutionRates = Field(
        default_factory=SolutionRates, description="Valid variants and wrong solutions judged, per kind."
    )
    other_library: int = Field(default=0, description="Tasks generated on a different library version.")
    seconds: float = Field(default=0.0, description="Wall time.")

    @property
    def ok(self) -> bool:
        return not self.invalid and not self.bad_lines and self.valid > 0


def check_tasks(
    tasks: Sequence[tuple[int, Task]],
    bad_lines: Sequence[TaskFileError],
    runtimes: Mapping[str, ServiceRuntime],
    progress: Callable[[int], None] | None = None,
    *,
    version: str | None = None,
    seeds: SeedIndex | None = None,
) -> CheckReport:
    """Verify each (line, task) in one event loop; an unexpected failure is reported against its line.

    ``version`` and ``seeds`` of a streamed library (``tasks.library.stream_library``) spare reading
    every runtime up front: its runtimes then load as the tasks reach them.
    """
    if version is None:
        version = library_version([r.manifest for r in runtimes.values()])
    seeds = seeds or SeedIndex(runtimes)
    cache = SeedCache()
    report = CheckReport(lines=len(tasks) + len(bad_lines), bad_lines=list(bad_lines))
    start = time.perf_counter()

    async def main() -> None:
        for done, (line, task) in enumerate(tasks, start=1):
            try:
                check = await check_task(task, runtimes, seeds, cache=cache)
            except Exception as exc:  # a hand-edited task must not crash the whole check
                check = TaskCheck(
                    task_id=task.id, valid=False, reasons=[f"cannot be replayed: {type(exc).__name__}: {exc}"]
                )
            if task.meta.library_version and task.meta.library_version != version:
                report.other_library += 1
            report.solutions.add(check)
            if check.valid:
                report.valid += 1
            else:
                report.invalid.append(InvalidTask(line=line, task_id=task.id, reasons=check.reasons))
            if progress is not None:
                progress(done)

    asyncio.run(main())
    report.seconds = time.perf_counter() - start
    return report
