"""The trajectory budget: how many messages and how many bytes one episode may record.

Every turn appends the assistant message and one tool message per call; without a bound a
policy that sends (or provokes) large content grows its episode until the process runs out of
memory. A turn that would take the episode past either bound is refused before any of its calls
run (``TrajectoryFull``, HTTP 413) and the episode ends graded on its state so far
(``finish_reason`` ``trajectory_limit``, like ``max_steps``); a turn whose results take it past the
bytes bound is answered, and the episode ends the same way. Nothing already recorded is dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from compoworld.settings import DEFAULT_MAX_MESSAGES, DEFAULT_MAX_TRAJECTORY_BYTES

__all__ = ["TrajectoryBudget", "message_bytes"]


class _BudgetSettings(Protocol):
    max_trajectory_messages: int
    max_trajectory_bytes: int


def message_bytes(message: dict[str, Any]) -> int:
    """UTF-8 size of one recorded message as JSON (what the store and the trajectory file hold)."""
    return len(json.dumps(message, ensure_ascii=False, default=str).encode("utf-8", "replace"))


@dataclass(frozen=True)
class TrajectoryBudget:
    """Bounds of one episode's recorded messages: their count and their total JSON bytes."""

    max_messages: int = DEFAULT_MAX_MESSAGES
    max_bytes: int = DEFAULT_MAX_TRAJECTORY_BYTES

    @classmethod
    def from_settings(cls, settings: _BudgetSettings) -> TrajectoryBudget:
        return cls(max_messages=settings.max_trajectory_messages, max_bytes=settings.max_trajectory_bytes)

    def over(self, n_messages: int, n_bytes: int) -> str:
        """Why a trajectory of this size is over the budget, or "" when it fits."""
        if n_messages > self.max_messages:
            return f"{n_messages} messages, over the limit of {self.max_messages} per episode"
        if n_bytes > self.max_bytes:
            return f"{n_bytes} bytes of messages, over the limit of {self.max_bytes} per episode"
        return ""
