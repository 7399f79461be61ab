"""The oracle: replays the task's gold calls one per turn, then answers with the answer keys.

It is privileged (it reads the task's ground truth), so it runs in the runner, never behind
the episode API. A gold replay on a fresh fork reproduces the executed walk, ids included,
because forks are deterministic.
"""

from __future__ import annotations

from typing import Any

from orchestrator.agents.base import Action
from orchestrator.api import OpenResponse
from orchestrator.models import Task
from orchestrator.naming import direct_name

__all__ = ["OracleAgent", "oracle_answer"]


def oracle_answer(task: Task) -> str:
    """A final answer that names every answer key."""
    if not task.answer_keys:
        return "Done."
    return "Done. " + "; ".join(task.answer_keys)


class _OraclePolicy:
    def __init__(self, task: Task, episode: OpenResponse) -> None:
        self.task = task
        self.mode = episode.mode
        self.next = 0
        self.stats: dict[str, Any] = {}

    def _call(self, index: int) -> dict[str, Any]:
        gold = self.task.gold_calls[index]
        qualified = direct_name(gold.service, gold.tool)
        if self.mode == "gateway":
            args = {"tool_name": qualified, "arguments": gold.arguments}
            return {"id": f"oracle_{index + 1}", "name": "call_tool", "arguments": args}
        return {"id": f"oracle_{index + 1}", "name": qualified, "arguments": dict(gold.arguments)}

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action:
        if self.next < len(self.task.gold_calls):
            self.next += 1
            return Action(tool_calls=[self._call(self.next - 1)])
        return Action(content=oracle_answer(self.task))


class OracleAgent:
    """Gold calls, then an answer containing the answer keys."""

    name = "oracle"
    OPTIONS: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return "compoworld/oracle"

    def start(self, task: Task, episode: OpenResponse, seed: int) -> _OraclePolicy:
        return _OraclePolicy(task, episode)

    async def aclose(self) -> None:
        return None
