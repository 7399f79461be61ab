"""An agent backed by any OpenAI-compatible chat-completions endpoint with tool calling.

All model traffic goes through ``compoworld.llm.LLMClient`` (retries, timeouts, a concurrency
limit shared by every episode of a run). Token counts are kept per episode and end up in the
trajectory's meta.
"""

from __future__ import annotations

import json
from typing import Any

from compoworld.llm import LLMClient
from orchestrator.agents.base import Action
from orchestrator.api import OpenResponse
from orchestrator.models import Task

__all__ = ["OpenAIAgent", "to_api_messages"]


def to_api_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Episode messages in the wire format: tool-call arguments as JSON strings, extra keys dropped."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            calls = []
            for call in msg["tool_calls"]:
                fn = call.get("function", {})
                args = fn.get("arguments")
                text = args if isinstance(args, str) else json.dumps(args if args is not None else {})
                calls.append(
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": fn.get("name"), "arguments": text},
                    }
                )
            out.append({"role": "assistant", "content": msg.get("content") or "", "tool_calls": calls})
        elif role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": msg["tool_call_id"], "content": msg.get("content") or ""}
            )
        else:
            out.append({"role": role, "content": msg.get("content") or ""})
    return out


class _OpenAIPolicy:
    def __init__(self, agent: OpenAIAgent, seed: int) -> None:
        self.agent = agent
        self.seed = seed
        self.stats: dict[str, Any] = {
            "model": agent.model,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "llm_requests": 0,
        }

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action:
        result = await self.agent.client.chat(
            to_api_messages(messages),
            tools,
            temperature=self.agent.temperature,
            max_tokens=self.agent.max_tokens,
            seed=self.seed,
        )
        usage = result.raw.get("usage") or {}
        self.stats["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
        self.stats["completion_tokens"] += int(usage.get("completion_tokens") or 0)
        self.stats["llm_requests"] += 1
        message = ((result.raw.get("choices") or [{}])[0] or {}).get("message") or {}
        extra = (
            {"reasoning_content": message["reasoning_content"]} if message.get("reasoning_content") else {}
        )
        calls = [
            {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in result.tool_calls
        ]
        return Action(tool_calls=calls, content=result.content or "", extra=extra)


class OpenAIAgent:
    """Tool-calling chat completions against ``base_url`` with ``model``."""

    name = "openai"
    OPTIONS: tuple[str, ...] = (
        "model",
        "base_url",
        "api_key",
        "temperature",
        "max_tokens",
        "timeout_s",
        "retries",
        "concurrency",
    )

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str = "EMPTY",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout_s: float = 120.0,
        retries: int = 2,
        concurrency: int = 32,
    ) -> None:
        if not base_url or not model:
            raise ValueError("the openai agent needs --base-url and --model (an OpenAI-compatible endpoint)")
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.client = LLMClient(
            base_url, model, api_key, timeout_s=timeout_s, retries=retries, max_concurrency=concurrency
        )

    @property
    def label(self) -> str:
        return f"compoworld/openai/{self.model}"

    def start(self, task: Task, episode: OpenResponse, seed: int) -> _OpenAIPolicy:
        return _OpenAIPolicy(self, seed)

    async def aclose(self) -> None:
        await self.client.close()
