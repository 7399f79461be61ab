"""Tool-call arguments as agents send them: a JSON object, or a string holding one.

Models often send arguments as a JSON string (the OpenAI wire format) and sometimes send
broken JSON; both are normal agent behaviour, so a bad value is returned as a failure
result the agent can act on, never raised. Arguments go through the same edge checks as a
service's own routes (``compoworld.sanitize``): at most ``Limits.max_bytes`` of JSON, finite
numbers, encodable strings, bounded depth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from compoworld.contracts import ToolResult
from compoworld.sanitize import InputRefused, Limits, check_value, load_json

__all__ = ["BadArguments", "parse_arguments"]

_DEFAULT = Limits()


@dataclass(frozen=True)
class BadArguments:
    """Arguments that are not a JSON object; ``error`` is the result to answer with."""

    error: ToolResult


def _refused(exc: InputRefused) -> BadArguments:
    return BadArguments(ToolResult.fail(exc.code, exc.message.replace("request body", "arguments")))


def parse_arguments(raw: Any, limits: Limits = _DEFAULT) -> dict[str, Any] | BadArguments:
    """A dict of arguments within ``limits``, or the reason they cannot be one."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        try:
            check_value(raw, limits, "arguments")
            size = len(json.dumps(raw, ensure_ascii=False, default=str))
        except InputRefused as exc:
            return _refused(exc)
        except (ValueError, RecursionError):
            return BadArguments(ToolResult.fail("invalid_json", "arguments are not JSON data"))
        if size > limits.max_bytes:
            return BadArguments(
                ToolResult.fail(
                    "payload_too_large",
                    f"arguments are {size} bytes of JSON; the limit is {limits.max_bytes}",
                )
            )
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            value = load_json(raw, limits, "arguments")
        except InputRefused as exc:
            if exc.syntax:  # broken JSON from a model: an ordinary bad call
                return BadArguments(ToolResult.fail("invalid_arguments", exc.message))
            return _refused(exc)
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
