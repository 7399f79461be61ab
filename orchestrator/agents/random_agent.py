"""The random baseline: valid-but-random calls from the exposed tools' schemas, seeded.

Direct mode: a random tool per turn with schema-valid arguments (ids seen in earlier results
are reused, so some calls land on real rows). Gateway mode: it explores like a careful agent
would (list_services → list_tools → describe_tool → call_tool) but picks at random.
Same seed, same calls.
"""

from __future__ import annotations

import json
import random
from typing import Any

from compoworld.seeding import seeded_rng
from orchestrator.agents.base import Action
from orchestrator.agents.schema_values import random_value
from orchestrator.api import OpenResponse
from orchestrator.models import Task

__all__ = ["RandomAgent"]


def _harvest(value: Any, seen: dict[str, list[Any]], key: str = "", depth: int = 0) -> None:
    """Remember scalar values by field name (``id`` values also under ``<entity>_id``-style names)."""
    if depth > 6:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _harvest(v, seen, str(k), depth + 1)
    elif isinstance(value, list):
        for v in value[:20]:
            _harvest(v, seen, key, depth + 1)
    elif key and isinstance(value, str | int | float) and not isinstance(value, bool):
        bucket = seen.setdefault(key, [])
        if value not in bucket and len(bucket) < 50:
            bucket.append(value)


class _RandomPolicy:
    def __init__(self, episode: OpenResponse, rng: random.Random, max_turns: int) -> None:
        self.mode = episode.mode
        self.rng = rng
        self.turns = rng.randint(1, max(1, max_turns))
        self.turn = 0
        self.seen: dict[str, list[Any]] = {}
        self.services: list[str] = []
        self.tools: dict[str, list[str]] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        self.pending: str | None = None
        self.stats: dict[str, Any] = {}

    def _observe(self, messages: list[dict[str, Any]]) -> None:
        last = [m for m in messages[-8:] if m.get("role") == "tool"]
        for msg in last:
            try:
                value = json.loads(msg.get("content") or "null")
            except ValueError:
                continue
            if isinstance(value, dict) and "services" in value:
                self.services = [str(s) for s in value["services"]]
            elif isinstance(value, dict) and "tools" in value and "service" in value:
                self.tools[str(value["service"])] = [str(t["name"]) for t in value["tools"]]
            elif isinstance(value, dict) and "parameters" in value and "name" in value:
                self.schemas[str(value["name"])] = value["parameters"]
            else:
                _harvest(value, self.seen)

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action:
        self._observe(messages)
        self.turn += 1
        if self.turn > self.turns:
            picks = sorted({str(v) for vals in self.seen.values() for v in vals})
            return Action(content=" ".join(self.rng.sample(picks, min(3, len(picks)))))
        call = self._gateway_call() if self.mode == "gateway" else self._direct_call(tools)
        call["id"] = f"random_{self.turn}"
        return Action(tool_calls=[call])

    def _direct_call(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        fn = self.rng.choice(tools)["function"]
        args = random_value(fn.get("parameters") or {"type": "object"}, self.rng, seen=self.seen)
        return {"name": fn["name"], "arguments": args if isinstance(args, dict) else {}}

    def _gateway_call(self) -> dict[str, Any]:
        if not self.services:
            return {"name": "list_services", "arguments": {}}
        if self.pending is not None and self.pending in self.schemas:
            tool, self.pending = self.pending, None
            args = random_value(self.schemas[tool], self.rng, seen=self.seen)
            return {"name": "call_tool", "arguments": {"tool_name": tool, "arguments": args or {}}}
        service = self.rng.choice(self.services)
        if not self.tools.get(service):
            return {"name": "list_tools", "arguments": {"service": service}}
        tool = self.rng.choice(self.tools[service])
        self.pending = tool
        if tool in self.schemas:
            return self._gateway_call()
        return {"name": "describe_tool", "arguments": {"tool": tool}}


class RandomAgent:
    """A seeded random baseline."""

    name = "random"
    OPTIONS: tuple[str, ...] = ("max_turns",)

    def __init__(self, max_turns: int = 8) -> None:
        self.max_turns = max_turns

    @property
    def label(self) -> str:
        return "compoworld/random"

    def start(self, task: Task, episode: OpenResponse, seed: int) -> _RandomPolicy:
        return _RandomPolicy(
            episode, seeded_rng("random-agent", task.id, seed), min(self.max_turns, episode.max_steps)
        )

    async def aclose(self) -> None:
        return None
