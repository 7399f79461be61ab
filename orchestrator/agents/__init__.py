"""Agents, registered by name and loaded lazily (STYLE #5): adding one is one ``register`` call.

oracle   replays the task's gold calls, then answers with the answer keys
noop     calls nothing, answers nothing (the do-nothing baseline every rubric is checked against)
random   valid-but-random calls from the exposed tools' schemas, seeded
openai   any OpenAI-compatible chat-completions endpoint with tool calling
"""

from __future__ import annotations

import importlib
from typing import Any

from orchestrator.agents.base import Action, Agent, Policy

__all__ = ["AGENTS", "Action", "Agent", "Policy", "agent_names", "create_agent", "register"]

AGENTS: dict[str, str] = {
    "oracle": "orchestrator.agents.oracle:OracleAgent",
    "noop": "orchestrator.agents.noop:NoopAgent",
    "random": "orchestrator.agents.random_agent:RandomAgent",
    "openai": "orchestrator.agents.openai_agent:OpenAIAgent",
}


def register(name: str, target: str) -> None:
    """Register an agent class as ``"package.module:Class"`` (imported only when used)."""
    if ":" not in target:
        raise ValueError(f"agent target must look like 'package.module:Class', got {target!r}")
    AGENTS[name] = target


def agent_names() -> list[str]:
    return sorted(AGENTS)


def create_agent(name: str, **options: Any) -> Agent:
    """Instantiate a registered agent; options the agent does not take are ignored."""
    target = AGENTS.get(name)
    if target is None:
        raise ValueError(f"unknown agent '{name}' (known: {', '.join(agent_names())})")
    module, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    accepted = getattr(cls, "OPTIONS", ())
    agent: Agent = cls(**{k: v for k, v in options.items() if k in accepted and v is not None})
    return agent
