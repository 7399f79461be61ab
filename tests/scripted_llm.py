"""A scripted OpenAI-compatible chat server: it stands in for a model (vLLM, SGLang, a hosted API).

CI has no model, so tests that exercise ``compoworld/llm.py`` run it on 127.0.0.1 with a
``reply(body) -> message`` function deciding each assistant message (or an HTTP error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

Reply = Callable[[dict[str, Any]], dict[str, Any] | int]


def chat_server(reply: Reply, seen: list[dict[str, Any]] | None = None) -> FastAPI:
    """``POST /v1/chat/completions`` answering with ``reply(body)``; an int reply is an HTTP error status."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> JSONResponse:
        body = await request.json()
        if seen is not None:
            seen.append(body)
        message = reply(body)
        if isinstance(message, int):
            return JSONResponse({"error": {"message": "scripted failure"}}, status_code=message)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return JSONResponse(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )

    return app
