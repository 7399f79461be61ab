"""Agents, registered by name and loaded lazily (STYLE #5): adding one is one ``register`` call.

oracle   replays the task's gold calls, then answers with the answer keys
noop     calls nothing, answers nothing (the do-nothing baseline every rubric is checked against)
random   valid-but-random calls from the exposed tools' schemas, seeded
openai   any OpenAI-compatible chat-completions endpoint with tool calling

An installed package adds an agent with an entry point in the ``compoworld.agents`` group
(``mine = "my_pkg.agent:MyAgent"``). An agent class lists the options it takes in ``OPTIONS``;
``create_agent`` refuses any other, so a misspelt or misplaced option is an error, not a no-op.
"""

from __future__ import annotations

from typing import Any

from compoworld.registry import Registry
from orchestrator.agents.base import Action, Agent, Policy

__all__ = ["AGENTS", "Action", "Agent", "Policy", "agent_names", "agent_options", "create_agent", "register"]


def _is_agent_class(value: object) -> type[Agent]:
    if not isinstance(value, type) or not callable(getattr(value, "start", None)):
        raise TypeError(f"{value!r} is not an agent class (a class with start() and aclose())")
    return value


AGENTS: Registry[type[Agent]] = Registry("agent", entry_points="compoworld.agents", check=_is_agent_class)
AGENTS.register("oracle", "orchestrator.agents.oracle:OracleAgent")
AGENTS.register("noop", "orchestrator.agents.noop:NoopAgent")
AGENTS.register("random", "orchestrator.agents.random_agent:RandomAgent")
AGENTS.register("openai", "orchestrator.agents.openai_agent:OpenAIAgent")


def register(name: str, target: str | type[Agent]) -> None:
    """Register an agent class, or a lazy ``"package.module:Class"`` string (imported only when used)."""
    AGENTS.register(name, target)


def agent_names() -> list[str]:
    return AGENTS.names()


def agent_options(name: str) -> tuple[str, ...]:
    """The options agent ``name`` takes (its class's ``OPTIONS``)."""
    return tuple(getattr(AGENTS.get(name), "OPTIONS", ()))


def create_agent(name: str, **options: Any) -> Agent:
    """Instantiate a registered agent; ``None`` means "not given", an option it does not take is refused."""
    cls = AGENTS.get(name)
    given = {k: v for k, v in options.items() if v is not None}
    accepted = tuple(getattr(cls, "OPTIONS", ()))
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) or "none"
        raise ValueError(f"agent '{name}' does not take option(s) {', '.join(unknown)} (it takes: {takes})")
    agent: Agent = cls(**given)
    return agent
