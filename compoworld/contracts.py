"""Typed values that cross the seams between the runtime, the orchestrator, task generation and the trainer.

``ToolResult`` is the outcome of one tool call, wherever it ran (an in-process runtime, a
service over HTTP, the orchestrator's own meta-tools). It is either a success carrying the
response body (``data``), the backend that produced it and the HTTP status a REST route
answers with (200, 201, 204...), or a failure carrying a code, a message and its status.
Failures are observations an agent can act on (STYLE #7), never exceptions.

Its wire form is the envelope of the uniform route ``POST /tools/{name}``, rendered by one
method::

    {"success": true, "data": <body>, "backend": "implemented"}
    {"success": false, "error": {"code": "not_found", "message": "..."}, "backend": "implemented"}

and read back by ``ToolResult.from_envelope``. A REST route answers ``data`` itself with
``status`` (no body at all for 204). The class is a slotted dataclass rather than a pydantic
model because one is built on every tool call: it must cost next to nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = ["BACKENDS", "ERROR_STATUS", "Backend", "ToolResult"]

Backend = Literal["implemented", "action", "simulated"]
"""Who answered: CRUD on typed state, a state transition on typed state, or the world model."""

BACKENDS: tuple[Backend, ...] = get_args(Backend)

ERROR_STATUS: Mapping[str, int] = {
    "invalid_arguments": 422,
    "not_found": 404,
    "conflict": 409,
    "invalid_transition": 409,
    "episode_required": 400,
    "unknown_tool": 404,
    "payload_too_large": 413,
    "invalid_json": 400,
    "invalid_episode": 400,
    "tool_error": 422,
    "service_unavailable": 503,
    "episode_gone": 410,
    "episode_finished": 409,
}
"""The HTTP status a REST route answers a failure with, by error code (others: 400)."""


@dataclass(slots=True)
class ToolResult:
    """The outcome of one tool call. Build it with ``ok`` or ``fail``; treat it as immutable."""

    success: bool
    data: Any = None
    backend: Backend | None = None
    code: str = ""
    message: str = ""
    status: int = 200

    @classmethod
    def ok(cls, data: Any, backend: Backend | None = None, status: int = 200) -> ToolResult:
        """A success: ``data`` is the response body, ``status`` what a REST route answers with."""
        return cls(True, data, backend, "", "", status)

    @classmethod
    def fail(
        cls, code: str, message: str, backend: Backend | None = None, status: int | None = None
    ) -> ToolResult:
        """A failure the caller can act on; ``status`` defaults to the code's (``ERROR_STATUS``)."""
        return cls(
            False, None, backend, code, message, ERROR_STATUS.get(code, 400) if status is None else status
        )

    @property
    def has_body(self) -> bool:
        """Whether a REST route sends a body (a 204 or 304 success has none)."""
        return not (self.success and self.status in (204, 304))

    def envelope(self) -> dict[str, Any]:
        """The uniform route's JSON envelope (what agents read, what ``from_envelope`` parses)."""
        out: dict[str, Any] = (
            {"success": True, "data": self.data}
            if self.success
            else {"success": False, "error": {"code": self.code, "message": self.message}}
        )
        if self.backend is not None:
            out["backend"] = self.backend
        return out

    @classmethod
    def from_envelope(cls, value: object, status: int | None = None) -> ToolResult:
        """Read an envelope back (from a service over HTTP); ``ValueError`` if it is not one."""
        if not isinstance(value, dict) or not isinstance(value.get("success"), bool):
            raise ValueError("not a tool-result envelope (no boolean 'success')")
        backend = value.get("backend")
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r} in a tool-result envelope")
        if value["success"]:
            return cls(True, value.get("data"), backend, "", "", 200 if status is None else status)
        error = value.get("error")
        if not isinstance(error, dict):
            raise ValueError("a failed tool-result envelope has no 'error' object")
        code, message = str(error.get("code") or "tool_error"), str(error.get("message") or "")
        return cls.fail(code, message, backend, status)
