"""The step route answered before FastAPI's routing: the one route every tool call crosses.

``POST /episodes/{id}/step`` served by FastAPI costs, beside the turn itself, the included
router's matching (``_IncludedRouter.matches``), dependency solving, a second parse of the body
``BodyGuard`` has just parsed, and a ``Request``. ``StepFastPath`` is an ASGI middleware inside
``BodyGuard``: for a step whose body the guard parsed as JSON and that validates as a
``StepRequest``, it runs the same ``Orchestrator.step`` and sends the same response (through the
same ``answer`` function as the FastAPI route). Everything else goes on to FastAPI unchanged:
other routes, a body the guard did not parse (empty, not JSON by its content type), and a body
that fails validation, so every error body is FastAPI's own. The FastAPI route stays registered,
so the OpenAPI document does not change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pydantic import ValidationError
from starlette.responses import Response

from orchestrator.api import StepRequest
from orchestrator.episodes import Orchestrator
from orchestrator.guard import PARSED_BODY

__all__ = ["StepFastPath"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Answer = Callable[[Awaitable[Any]], Awaitable[Response]]

_PREFIX, _SUFFIX = "/episodes/", "/step"
_MISSING = object()


def step_episode(scope: Scope) -> str | None:
    """The episode id when ``scope`` is ``POST /episodes/{id}/step`` as the router would match it
    (``{id}`` one path segment, ``[^/]+``); None otherwise, or under a root path (left to FastAPI)."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
        return None
    path: str = scope["path"]
    if not (path.startswith(_PREFIX) and path.endswith(_SUFFIX)):
        return None
    episode_id = path[len(_PREFIX) : -len(_SUFFIX)]
    return episode_id if episode_id and "/" not in episode_id else None


def _json_typed(scope: Scope) -> bool:
    """No content type, or ``application/json`` (FastAPI parses both as JSON; anything else is its call)."""
    for key, value in scope.get("headers", ()):
        if key == b"content-type":
            return value.split(b";", 1)[0].strip().lower() == b"application/json"
    return True


class StepFastPath:
    """Answers well-formed ``POST /episodes/{id}/step`` turns itself; hands on everything else."""

    def __init__(self, app: ASGIApp, orch: Orchestrator, answer: Answer) -> None:
        self.app = app
        self.orch = orch
        self.answer = answer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        episode_id = step_episode(scope)
        body = scope.get(PARSED_BODY, _MISSING) if episode_id is not None else _MISSING
        if episode_id is not None and body is not _MISSING and _json_typed(scope):
            try:
                req = StepRequest.model_validate(body)
            except ValidationError:
                pass  # FastAPI answers it: its own 422 body
            else:
                response = await self.answer(self.orch.step(episode_id, req))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
