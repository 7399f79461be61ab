"""The orchestrator's edge: every JSON body it is sent is checked before a route parses it.

``BodyGuard`` is a plain ASGI middleware in front of the orchestrator's routes (episodes, step,
MCP, the group board, admin). A body larger than the limit is refused by its declared length
before a byte is read, or as soon as the bytes read pass the limit; a body that is not clean
JSON (``compoworld.sanitize``: finite numbers, encodable strings, bounded depth) is refused
with the same code and status a service's own routes answer. What passes is handed on
unchanged (and the parsed value is left in the scope under ``PARSED_BODY``, so the step route
need not parse it again). A library's service routes (mounted under ``/services/``) check their own bodies
with the same limits, so they are left alone here.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from compoworld.sanitize import InputRefused, Limits, load_json

__all__ = ["PARSED_BODY", "BodyGuard"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
ADMIN_FACTOR = 64  # token holders load task files: their bodies may be this many times larger
#: The scope key a checked JSON body is left under, parsed, for the routes inside (``orchestrator.fastpath``).
PARSED_BODY = "compoworld.parsed_body"


class BodyGuard:
    """Refuse oversized or unclean JSON bodies (413 / 400, ``{"detail", "code"}``) before routing."""

    def __init__(
        self, app: ASGIApp, limits: Limits, *, skip_prefixes: tuple[str, ...] = ("/services/",)
    ) -> None:
        self.app = app
        self.limits = limits
        self.admin_limits = Limits(limits.max_bytes * ADMIN_FACTOR, limits.max_depth)
        self.skip = skip_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path.startswith(self.skip):
            await self.app(scope, receive, send)
            return
        limits = self.admin_limits if path.startswith("/admin/") else self.limits
        try:
            body = await _read(scope, receive, limits.max_bytes)
            if body.strip() and _is_json(scope):
                scope[PARSED_BODY] = load_json(body, limits)
        except InputRefused as exc:
            await _refuse(send, exc)
            return
        await self.app(scope, _replay(body, receive), send)


def _is_json(scope: Scope) -> bool:
    for key, value in scope.get("headers", []):
        if key == b"content-type":
            kind = value.split(b";", 1)[0].strip().lower()
            return kind == b"application/json" or kind.endswith(b"+json")
    return True  # no content type: FastAPI reads the body as JSON anyway


async def _read(scope: Scope, receive: Receive, limit: int) -> bytes:
    for key, value in scope.get("headers", []):
        if key == b"content-length" and value.isdigit() and int(value) > limit:
            raise InputRefused(
                "payload_too_large", f"request body is {int(value)} bytes; the limit is {limit}"
            )
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise InputRefused(
                "payload_too_large", f"request body is over {limit} bytes; the limit is {limit}"
            )
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: wait for the disconnect, as the server would

    return replay


async def _refuse(send: Send, exc: InputRefused) -> None:
    payload = json.dumps({"detail": exc.message, "code": exc.code}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
