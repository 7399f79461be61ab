"""Distributions over a task file, and the shares the task targets are stated in.

Besides the distributions (services per task, walk length, capabilities, domains, reads vs writes),
``TaskStats.shares`` gives the issue's targets: instructions that leak an internal key, a tool name,
a Python repr or a filler literal; tasks that need discovery, carry a rule or condition, need
aggregation or ranking, touch four or more services; the mean number of gold calls.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

from pydantic import BaseModel, Field

from orchestrator.models import Task
from orchestrator.tasks.scenario.text import identifier_like
from orchestrator.tasks.scenario.verticals import SHARED_DOMAINS, VERTICALS

__all__ = [
    "BUSIEST",
    "SAME_VERTICAL",
    "WITH_SHARED",
    "TaskStats",
    "busiest",
    "shares",
    "spread",
    "task_stats",
    "unnatural",
]


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
    archetypes: dict[str, int] = Field(default_factory=dict, description="Archetype -> tasks chaining it.")
    verticals: dict[str, int] = Field(default_factory=dict, description="Vertical -> tasks framed by it.")
    shares: dict[str, float] = Field(default_factory=dict, description="Target name -> share (or mean).")

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


#: what a person would not write in a request: id-shaped keys, Python reprs, word-pair fillers
_KEY = re.compile(r"\b[a-z]{2,5}_[0-9a-z]{6,}\b")
_REPR = re.compile(r"[\[{]'|': |\bNone\b|\bTrue\b|\bFalse\b")
_FILLER = re.compile(r"'([a-z]+) ([a-z]+)'")
_MALFORMED_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T[0-9:]+Z[A-Za-z0-9]")


def unnatural(task: Task) -> list[str]:
    """What in the task's instruction no colleague would write (empty for a natural request)."""
    text = task.instruction
    found = _KEY.findall(text) + _REPR.findall(text) + _MALFORMED_STAMP.findall(text)
    found += [" ".join(pair) for pair in _FILLER.findall(text)]
    found += [
        g.tool
        for g in task.gold_calls
        if identifier_like(g.tool) and re.search(rf"(?<![\w-]){re.escape(g.tool)}(?![\w-])", text)
    ]
    return found


def _share(tasks: Sequence[Task], test: Callable[[Task], object]) -> float:
    return sum(1 for t in tasks if test(t)) / len(tasks) if tasks else 0.0


def shares(tasks: Sequence[Task]) -> dict[str, float]:
    """The target shares of a set of tasks (each a fraction, the last a mean)."""

    def caps(t: Task) -> set[str]:
        return set(t.meta.capabilities)

    return {
        "instructions with an internal key, tool name, repr or filler": _share(tasks, lambda t: unnatural(t)),
        "need discovery": _share(tasks, lambda t: "discovery" in caps(t)),
        "carry a business rule or condition": _share(tasks, lambda t: "conditional" in caps(t)),
        "need aggregation or ranking": _share(tasks, lambda t: bool(caps(t) & {"aggregation", "ranking"})),
        "touch 4+ services": _share(tasks, lambda t: len(t.services) >= 4),
        "mean gold calls": sum(len(t.gold_calls) for t in tasks) / len(tasks) if tasks else 0.0,
    }


#: the names ``spread`` gives its figures
BUSIEST = "busiest service's share of tasks"
SAME_VERTICAL = "same-vertical service pairs"
WITH_SHARED = "same-vertical pairs, shared systems in every vertical"


def busiest(tasks: Sequence[Task]) -> str:
    """The service most tasks touch, and in how many ('avaza in 37 of 100'; '' for no task)."""
    use = Counter(s for t in tasks for s in set(t.services))
    if not use:
        return ""
    name, count = min(use.items(), key=lambda kv: (-kv[1], kv[0]))
    return f"{name} in {count} of {len(tasks)}"


def spread(tasks: Sequence[Task], domains: Mapping[str, str]) -> dict[str, float]:
    """How tasks spread over the library: the busiest service's share of tasks (the share touching it),
    and of the pairs of services a task joins, the share whose two domains belong to one vertical
    (``domains``: service -> its manifest's domain); and that share again with the systems every line of
    business runs (``SHARED_DOMAINS``: mail, messaging, calendars, task lists, CRM) counted in each."""
    if not tasks:
        return {BUSIEST: 0.0, SAME_VERTICAL: 0.0, WITH_SHARED: 0.0}
    use = Counter(s for t in tasks for s in set(t.services))
    pairs = same = shared = 0
    wide = [set(v.domains) | SHARED_DOMAINS for v in VERTICALS]
    for task in tasks:
        for a, b in combinations(sorted(set(task.services)), 2):
            pairs += 1
            da, db = domains.get(a, ""), domains.get(b, "")
            same += any(da in v.domains and db in v.domains for v in VERTICALS)
            shared += any(da in w and db in w for w in wide)
    return {
        BUSIEST: max(use.values()) / len(tasks),
        SAME_VERTICAL: same / pairs if pairs else 0.0,
        WITH_SHARED: shared / pairs if pairs else 0.0,
    }


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
        archetypes=_sorted(Counter(a for t in tasks for a in t.meta.scenario)),
        verticals=_sorted(Counter(t.meta.vertical for t in tasks if t.meta.vertical)),
        shares=shares(tasks),
    )
