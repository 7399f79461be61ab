"""The do-nothing agent: no calls, empty answer. Every no_op_fail criterion must fail against it."""

from __future__ import annotations

from typing import Any

from orchestrator.agents.base import Action
from orchestrator.api import OpenResponse
from orchestrator.models import Task

__all__ = ["NoopAgent"]


class _NoopPolicy:
    def __init__(self) -> None:
        self.stats: dict[str, Any] = {}

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action:
        return Action(content="")


class NoopAgent:
    """Answers immediately with nothing."""

    name = "noop"
    OPTIONS: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return "compoworld/noop"

    def start(self, task: Task, episode: OpenResponse, seed: int) -> _NoopPolicy:
        return _NoopPolicy()

    async def aclose(self) -> None:
        return None
