"""One turn's pieces as recorded: the assistant message, each result's text, environment errors."""

from __future__ import annotations

import json
from typing import Any

from compoworld.contracts import ToolResult
from orchestrator.api import ENVIRONMENT_ERROR_CODES
from orchestrator.arguments import BadArguments
from orchestrator.exposure import MetaAnswer
from orchestrator.lifecycle import EpisodeRecord

__all__ = ["Call", "assistant_message", "note_environment_error", "shown"]


Call = tuple[str, str, Any, "dict[str, Any] | BadArguments"]


def note_environment_error(rec: EpisodeRecord, name: str, result: ToolResult | MetaAnswer) -> None:
    """Remember the first tool result that is the environment's failure (ENVIRONMENT_ERROR_CODES)."""
    if not isinstance(result, ToolResult) or result.success or rec.environment_error:
        return
    if result.code in ENVIRONMENT_ERROR_CODES:
        rec.environment_error = f"{name}: {result.code}: {result.message}"[:500]


def shown(result: ToolResult | MetaAnswer) -> tuple[ToolResult | MetaAnswer, str]:
    """The result and its JSON text for the agent; a result that is not clean JSON (a lone
    surrogate, NaN, nesting past the encoder) becomes the service's failure instead of a record
    that no later read can encode."""
    shown = result.payload if isinstance(result, MetaAnswer) else result.envelope()
    try:
        content = json.dumps(shown, ensure_ascii=False, allow_nan=False, default=str)
        if not content.isascii():
            content.encode("utf-8")
    except (ValueError, UnicodeEncodeError, RecursionError) as exc:
        failed = ToolResult.fail(
            "service_unavailable",
            f"the service answered a result that is not clean JSON ({type(exc).__name__})",
        )
        return failed, json.dumps(failed.envelope())
    return result, content


def assistant_message(assistant: dict[str, Any] | None, calls: list[Call]) -> dict[str, Any]:
    """The assistant turn as recorded, in the OpenAI wire format: arguments as a JSON string.

    A string from the model is kept byte for byte (malformed JSON included: the SFT export
    must see it to drop it); an object is serialised.
    """
    msg: dict[str, Any] = {"role": "assistant", "content": str((assistant or {}).get("content") or "")}
    reasoning = (assistant or {}).get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        msg["reasoning_content"] = reasoning
    recorded = []
    for call_id, name, raw, _ in calls:
        args = raw if isinstance(raw, str) else json.dumps(raw if raw is not None else {}, ensure_ascii=False)
        recorded.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": args}})
    msg["tool_calls"] = recorded
    return msg
