"""Distributions over a task file: services per task, walk length, capabilities, domains, reads vs writes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from orchestrator.models import Task

__all__ = ["TaskStats", "task_stats"]


class TaskStats(BaseModel):
    """Counts over a set of tasks (keys are stringified so the model round-trips through JSON)."""

    tasks: int = Field(description="Tasks counted.")
    services_per_task: dict[str, int] = Field(description="Number of services -> tasks.")
    walk_length: dict[str, int] = Field(description="Number of walk steps -> tasks.")
    capabilities: dict[str, int] = Field(description="Capability label -> tasks carrying it.")
    domains: dict[str, int] = Field(description="Domain -> tasks.")
    operations: dict[str, int] = Field(description="Operation -> steps.")
    steps_by_kind: dict[str, int] = Field(description="read / write -> steps.")
    criteria_by_kind: dict[str, int] = Field(description="Criterion kind -> criteria.")
    splits: dict[str, int] = Field(description="Split -> tasks.")
    service_use: dict[str, int] = Field(description="Service -> tasks that need it.")

    @property
    def share_multi_service(self) -> tuple[float, float]:
        """Shares of tasks touching 2+ and 3+ services."""
        if not self.tasks:
            return 0.0, 0.0
        two = sum(n for k, n in self.services_per_task.items() if int(k) >= 2)
        three = sum(n for k, n in self.services_per_task.items() if int(k) >= 3)
        return two / self.tasks, three / self.tasks


def _sorted(counter: Counter[str], numeric: bool = False) -> dict[str, int]:
    if numeric:
        return {k: counter[k] for k in sorted(counter, key=int)}
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def task_stats(tasks: Sequence[Task]) -> TaskStats:
    steps = [s for t in tasks for s in t.meta.walk]
    return TaskStats(
        tasks=len(tasks),
        services_per_task=_sorted(Counter(str(len(t.services)) for t in tasks), numeric=True),
        walk_length=_sorted(Counter(str(len(t.meta.walk) or len(t.gold_calls)) for t in tasks), numeric=True),
        capabilities=_sorted(Counter(c for t in tasks for c in t.meta.capabilities)),
        domains=_sorted(Counter(t.meta.domain for t in tasks)),
        operations=_sorted(Counter(s.operation or "?" for s in steps)),
        steps_by_kind=_sorted(Counter(s.kind for s in steps)),
        criteria_by_kind=_sorted(Counter(c.kind for t in tasks for c in t.rubric)),
        splits=_sorted(Counter(t.meta.split for t in tasks)),
        service_use=_sorted(Counter(s for t in tasks for s in t.services)),
    )
