"""What an agent is to the runner: a factory of per-episode policies that propose actions.

The runner owns the loop (open → act → step … → finish); an agent only decides the next
assistant turn from the messages so far. ``Action`` with tool calls is a step; without
them it is the final answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from orchestrator.api import OpenResponse
from orchestrator.models import Task

__all__ = ["Action", "Agent", "Policy"]


@dataclass
class Action:
    """One assistant turn: tool calls ``[{id, name, arguments}]``, or a final answer in ``content``."""

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    content: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def final(self) -> bool:
        return not self.tool_calls


class Policy(Protocol):
    """The agent inside one episode."""

    stats: dict[str, Any]

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action: ...


class Agent(Protocol):
    """A named agent; ``start`` gives a fresh policy per episode."""

    name: str
    label: str

    def start(self, task: Task, episode: OpenResponse, seed: int) -> Policy: ...

    async def aclose(self) -> None: ...
