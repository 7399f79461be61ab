"""The prompt an agent starts an episode with: one system message and the task's instruction.

The orchestrator opens episodes with it and the verl export writes it into the dataset rows, so
both sides train and serve the same text. It states the frozen date (the services' "today") and
how every tool result is wrapped, since an agent that misreads the envelope cannot recover from
a ``success: false``. The text is fixed (no randomness), so the same task always gives the same
prompt tokens.
"""

from __future__ import annotations

from typing import Literal

from orchestrator.models import Task

__all__ = ["ENVELOPE_HELP", "PromptMode", "build_prompt", "system_prompt"]

PromptMode = Literal["direct", "gateway", "mcp"]

ENVELOPE_HELP = (
    "Every tool returns a JSON envelope. On success it is "
    '{"success": true, "data": ...}: read the result from "data". On failure it is '
    '{"success": false, "error": {"code": ..., "message": ...}}: nothing was changed, and the '
    "message says what to fix (for example a missing or invalid argument) before you try again. "
    'A result may also say "backend": "simulated"; treat it like any other result.'
)

_MODE_HELP: dict[str, str] = {
    "direct": "The tools of the services you need are listed in your tool definitions; call them directly.",
    "gateway": (
        "You reach the services through four tools: list_services shows the services available, "
        "list_tools and describe_tool show a service's tools and their arguments, and call_tool runs "
        "one. Some services are unrelated to the request; find the ones you need first."
    ),
    "mcp": "The tools of the services you need are served over MCP; call them by name.",
}


def system_prompt(today: str, mode: PromptMode = "direct") -> str:
    """The system message for an episode frozen at ``today`` (YYYY-MM-DD)."""
    if mode not in _MODE_HELP:
        raise ValueError(f"unknown prompt mode {mode!r}; expected one of {sorted(_MODE_HELP)}")
    return "\n\n".join(
        [
            "You are an assistant that completes the user's request by calling tools of stateful "
            "services. Look up the values you need with the tools instead of guessing them, make the "
            "changes the request asks for and no others, then answer the user briefly with the values "
            "you found or changed.",
            f"Today's date is {today}. Interpret relative dates (today, tomorrow, next week) from it.",
            _MODE_HELP[mode],
            ENVELOPE_HELP,
        ]
    )


def build_prompt(task: Task, mode: PromptMode = "direct") -> list[dict[str, str]]:
    """Chat messages that open an episode of ``task``: the system prompt, then the instruction."""
    return [
        {"role": "system", "content": system_prompt(task.today, mode)},
        {"role": "user", "content": task.instruction},
    ]
