"""The episode state machine: states, legal transitions, limits, and the episode record.

    open ──step──▶ running ──step──▶ running
      │               │
      ├──finish───────┼──▶ finished   (answered | max_steps | timeout)
      ├──abort/DELETE─┼──▶ aborted    (the driver gave up; every criterion counts as failed)
      └──idle TTL─────┴──▶ expired    (abandoned; forks released by the reaper)

Terminal states accept nothing but reads (GET) and release (DELETE).

The record is plain data (``record_to_json`` / ``record_from_json``): no live objects and only
wall-clock times, so a store shared by several orchestrator replicas can hold it and any
replica can serve the next request of any episode.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field, TypeAdapter

from orchestrator.errors import EpisodeConflict
from orchestrator.exposure import ExposurePlan
from orchestrator.models import Task, Verdict

if TYPE_CHECKING:
    from compoworld.settings import Settings

__all__ = [
    "TERMINAL",
    "EpisodeRecord",
    "EpisodeState",
    "OrchestratorConfig",
    "OutcomeLedger",
    "record_from_json",
    "record_to_json",
    "task_from_json",
    "task_to_json",
]


class OutcomeLedger(Protocol):
    """The group board: told of every episode opened in a group, and of every ended episode's outcome
    (its verdict row, None when aborted)."""

    async def record_open(self, group_id: str, episode_id: str) -> None: ...

    async def record_outcome(
        self, episode_id: str, row: list[bool] | None, group_id: str | None = None
    ) -> None: ...


class EpisodeState(StrEnum):
    OPEN = "open"
    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"
    EXPIRED = "expired"


TERMINAL = frozenset({EpisodeState.FINISHED, EpisodeState.ABORTED, EpisodeState.EXPIRED})
_LIVE_NEXT = frozenset(
    {EpisodeState.RUNNING, EpisodeState.FINISHED, EpisodeState.ABORTED, EpisodeState.EXPIRED}
)
ALLOWED: dict[EpisodeState, frozenset[EpisodeState]] = {
    EpisodeState.OPEN: _LIVE_NEXT,
    EpisodeState.RUNNING: _LIVE_NEXT,
    EpisodeState.FINISHED: frozenset(),
    EpisodeState.ABORTED: frozenset(),
    EpisodeState.EXPIRED: frozenset(),
}


class OrchestratorConfig(BaseModel):
    """Limits of the orchestrator's episodes."""

    max_steps: int = Field(default=30, ge=1, le=1000, description="Default tool-calling turns per episode.")
    max_wall_s: float = Field(
        default=1800.0,
        gt=0,
        le=86400.0,
        description="Default wall-clock limit of an episode (at most a day).",
    )
    idle_ttl_s: float = Field(default=900.0, gt=0, description="A live episode idle this long expires.")
    retain_s: float = Field(
        default=900.0, ge=0, description="Terminal episodes are forgotten after this long."
    )
    max_live: int = Field(
        default=20000,
        ge=1,
        description="Episodes held at most: live ones and ended ones not yet deleted or reaped (a new "
        "open beyond it is 503).",
    )
    reap_interval_s: float = Field(default=30.0, gt=0, description="How often the server's reaper runs.")
    session_today: str = Field(
        default="2026-01-15", description="Frozen date of an episode opened over services, without a task."
    )
    lock_wait_s: float = Field(
        default=60.0, gt=0, description="How long a request waits for the episode's turn held elsewhere."
    )

    @classmethod
    def from_settings(cls, settings: Settings) -> OrchestratorConfig:
        """The limits as configured (environment, ``compoworld up`` flags, the chart's env); the idle
        expiry at most the services' fork TTL (``episode_ttl_s``)."""
        same = ("max_steps", "max_wall_s", "retain_s", "max_live", "reap_interval_s", "lock_wait_s")
        return cls(
            **{name: getattr(settings, name) for name in same},
            idle_ttl_s=min(settings.idle_ttl_s, settings.episode_ttl_s),
        )


@dataclass
class EpisodeRecord:
    """Everything the orchestrator keeps about one episode (the grader's view stays in ``task``).

    Times are wall-clock seconds (``time.time()``): replicas share them. ``pins`` maps a forked
    service to the replica base URL its state lives at (empty for in-process services);
    ``last_step`` keeps the id and answer of the latest turn so a retried turn is answered, not
    run twice; ``logged`` counts the messages a store has already persisted.
    """

    id: str
    task: Task
    mode: str
    seed: int
    exposure: ExposurePlan
    messages: list[dict[str, Any]]
    max_steps: int
    deadline: float
    group_id: str | None = None
    rollout_idx: int = 0
    source: str = ""
    library_version: str = ""
    forked: list[str] = field(default_factory=list)
    pins: dict[str, str] = field(default_factory=dict)
    state: EpisodeState = EpisodeState.OPEN
    finish_reason: str = ""
    created: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.time)
    n_steps: int = 0
    n_tool_calls: int = 0
    n_real_tool_calls: int = 0
    answer: str | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    score: float = 0.0
    complete: bool = False
    released: bool = False
    environment_error: str = ""  # first failure of the environment (not the agent), if any
    last_step: dict[str, Any] | None = None
    version: int = 0
    logged: int = 0
    n_bytes: int = -1  # JSON bytes of ``messages`` (orchestrator.budget); -1: not counted yet

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    @property
    def steps_left(self) -> int:
        return 0 if self.terminal else max(0, self.max_steps - self.n_steps)

    def advance(self, new: EpisodeState, reason: str = "") -> None:
        """Move to ``new`` if the machine allows it; a refused move is a 409 for the caller."""
        if new not in ALLOWED[self.state]:
            raise EpisodeConflict(f"episode is {self.state.value}{self._why()}: cannot become {new.value}")
        self.state = new
        if reason:
            self.finish_reason = reason

    def _why(self) -> str:
        return f" ({self.finish_reason})" if self.finish_reason else ""

    def refuse(self, action: str) -> EpisodeConflict:
        """The conflict raised when a terminal episode is asked to ``action``."""
        return EpisodeConflict(f"episode is {self.state.value}{self._why()}; it accepts no more {action}")

    def touch(self) -> None:
        self.last_active = time.time()


_RECORD = TypeAdapter(EpisodeRecord)


_TASK = TypeAdapter(Task)


def record_to_json(rec: EpisodeRecord, *, with_messages: bool = True, with_task: bool = True) -> bytes:
    """The record as JSON; a store that keeps the step log apart leaves the messages out, and one
    that keeps the task apart (it never changes after the open) leaves the task out."""
    exclude = ({"messages"} if not with_messages else set()) | ({"task"} if not with_task else set())
    return _RECORD.dump_json(rec, exclude=exclude or None)


def task_to_json(task: Task) -> bytes:
    """The task as its record holds it (what ``record_to_json`` leaves out with ``with_task=False``)."""
    return _TASK.dump_json(task)


def task_from_json(raw: bytes | str) -> Task:
    return _TASK.validate_json(raw)


def record_from_json(
    raw: bytes | str, messages: list[dict[str, Any]] | None = None, task: Task | None = None
) -> EpisodeRecord:
    """A record from ``record_to_json``; ``messages`` given replace the stored ones (a separate log),
    and ``task`` given is the record's task where the JSON leaves it out.

    Given messages and task are taken as they are (the store's own log and a task it decoded
    once), not validated again: a replica reads the record on every turn, the log only grows and
    the task never changes. A generated task carries its gold calls' results (~200 KB), so
    reading it again each turn would cost more than the turn.
    """
    if messages is None and task is None:
        return _RECORD.validate_json(raw)
    text = raw.encode() if isinstance(raw, str) else raw
    if task is None and text.endswith(b"}") and b'"messages":' not in text:  # one parse, by pydantic
        rec = _RECORD.validate_json(text[:-1] + b',"messages":[]}')
    else:
        data = json.loads(text)
        data["messages"] = []
        if "task" not in data:
            if task is None:
                raise ValueError("the record's JSON holds no task and none was given")
            data["task"] = task
        rec = _RECORD.validate_python(data)
    if messages is not None:
        rec.messages = messages
    return rec
