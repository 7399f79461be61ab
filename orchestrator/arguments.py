"""Tool-call arguments as agents send them: a JSON object, or a string holding one.

Models often send arguments as a JSON string (the OpenAI wire format) and sometimes send
broken JSON; both are normal agent behaviour, so a bad value is returned as a failure
result the agent can act on, never raised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from compoworld.contracts import ToolResult

__all__ = ["BadArguments", "parse_arguments"]


@dataclass(frozen=True)
class BadArguments:
    """Arguments that are not a JSON object; ``error`` is the result to answer with."""

    error: ToolResult


def parse_arguments(raw: Any) -> dict[str, Any] | BadArguments:
    """A dict of arguments, or the reason they cannot be one."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return BadArguments(
                ToolResult.fail("invalid_arguments", f"arguments are not valid JSON ({exc.msg} at {exc.pos})")
            )
        if isinstance(value, dict):
            return value
        return BadArguments(
            ToolResult.fail(
                "invalid_arguments", f"arguments must be a JSON object, got {type(value).__name__}"
            )
        )
    return BadArguments(
        ToolResult.fail("invalid_arguments", f"arguments must be a JSON object, got {type(raw).__name__}")
    )
