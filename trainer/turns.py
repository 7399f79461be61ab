"""Token-level pieces of a multi-turn episode shared by the torch loops (smoke run and recipe).

The policy writes Hermes ``<tool_call>`` blocks; the chat template (trainer/chat_template.j2)
renders each tool result as its own user turn. ``parse_tool_calls`` reads a turn's calls like
verl's Hermes parser (an unparsable block is just text), and ``observation_ids`` gives the tokens
the template puts between one assistant turn and the next, so a rollout's token sequence is
exactly what the template would render for its conversation.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["observation_ids", "parse_tool_calls"]

_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def parse_tool_calls(text: str, turn: int) -> list[dict[str, Any]]:
    """``[{id, name, arguments}]`` of the well-formed ``<tool_call>`` blocks in ``text`` (arguments a JSON string)."""
    calls = []
    for i, blob in enumerate(_TOOL_CALL.findall(text)):
        try:
            obj = json.loads(blob)
            calls.append(
                {
                    "id": f"call_{turn}_{i}",
                    "name": str(obj["name"]),
                    "arguments": json.dumps(obj["arguments"]),
                }
            )
        except (ValueError, KeyError, TypeError):
            continue  # like verl's Hermes parser: an unparsable call is just text
    return calls


def observation_ids(
    tok: Any, tool_messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> list[int]:
    """Tokens the chat template puts after an assistant turn for these tool results (+ next prompt)."""
    calls = [
        {"id": m["tool_call_id"], "type": "function", "function": {"name": m["name"], "arguments": "{}"}}
        for m in tool_messages
    ]
    head: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    head.append({"role": "assistant", "content": "", "tool_calls": calls})
    prefix = tok.apply_chat_template(head, tools=tools, tokenize=False)
    full = tok.apply_chat_template(
        head + tool_messages, tools=tools, tokenize=False, add_generation_prompt=True
    )
    if not full.startswith(prefix):
        raise RuntimeError("chat template is not append-only for tool messages")
    return list(tok.encode(full[len(prefix) :], add_special_tokens=False))
