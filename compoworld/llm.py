"""The single place that talks to an OpenAI-compatible model endpoint.

Used by the world model (simulated tool responses), task paraphrasing, and the
``openai`` agent. Nothing else imports ``openai``. Offline (no base URL configured)
callers must not construct a client: they use their deterministic fallbacks.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compoworld.errors import LLMError

if TYPE_CHECKING:
    from compoworld.settings import Settings

__all__ = ["ChatResult", "LLMClient", "TokenUsage", "llm_from_settings"]

log = logging.getLogger(__name__)


@dataclass
class TokenUsage:
    """Running token counts of one client."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    failures: int = 0

    def add(self, usage: Any) -> None:
        self.requests += 1
        if usage is not None:
            self.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)


@dataclass
class ChatResult:
    """One assistant turn: text and tool calls (arguments as JSON strings, as the API gives them)."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


class LLMClient:
    """Thin async wrapper over ``openai.AsyncOpenAI`` with retries, timeouts and token accounting."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "EMPTY",
        *,
        timeout_s: float = 30.0,
        retries: int = 2,
        max_concurrency: int = 32,
    ) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.retries = retries
        self.usage = TokenUsage()
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
        self._sem = asyncio.Semaphore(max_concurrency)

    async def close(self) -> None:
        await self._client.close()

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResult:
        """One chat completion, retried on transport errors; raises LLMError when retries run out."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if tools:
            kwargs["tools"] = tools
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if seed is not None:
            kwargs["seed"] = seed
        if response_format is not None:
            kwargs["response_format"] = response_format
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                async with self._sem:
                    resp = await self._client.chat.completions.create(**kwargs)
                self.usage.add(resp.usage)
                choice = resp.choices[0]
                calls = [
                    {
                        "id": tc.id,
                        "type": "function",
                        "function": {"name": tc.function.name, "arguments": tc.function.arguments or "{}"},
                    }
                    for tc in (choice.message.tool_calls or [])
                ]
                return ChatResult(
                    choice.message.content, calls, choice.finish_reason or "", resp.model_dump()
                )
            except Exception as exc:  # transport, HTTP status, malformed payload: all retried the same way
                last = exc
                self.usage.failures += 1
                log.warning("LLM call failed (attempt %d/%d): %s", attempt + 1, self.retries + 1, exc)
                await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
        raise LLMError(f"model endpoint failed after {self.retries + 1} attempts: {last}")

    async def complete_json(self, system: str, user: str, *, seed: int | None = None) -> Any:
        """Ask for a JSON value; raises LLMError if the reply is not JSON."""
        result = await self.chat(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            seed=seed,
            response_format={"type": "json_object"},
        )
        text = (result.content or "").strip()
        if text.startswith("```"):
            text = text.strip("`").removeprefix("json").strip()
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMError(f"model reply is not JSON: {text[:120]!r}") from exc


def llm_from_settings(settings: Settings) -> LLMClient | None:
    """The configured endpoint's client, or None when no base URL is set (the offline default)."""
    if not settings.llm_base_url:
        return None
    return LLMClient(
        settings.llm_base_url,
        settings.llm_model,
        settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        retries=settings.llm_retries,
    )
