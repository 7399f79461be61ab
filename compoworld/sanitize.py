"""Everything an agent (or a remote service) sends, checked at the edge before anything keeps it.

One module, so every edge refuses the same inputs with the same code and HTTP status: a
service's uniform tool route and its REST routes, the orchestrator's routes (step, open, MCP,
the group board), tool arguments sent as a JSON string, and results read back from a remote
service. Refused, never repaired (a repaired value would silently differ from what was sent):

    larger than Limits.max_bytes                   payload_too_large  413
    not JSON, or nested deeper than max_depth      invalid_json       400
    NaN / Infinity / a number beyond float range   invalid_json       400
    a string (or key) holding a lone surrogate     invalid_json       400

Without this a lone surrogate (``"\\ud800"``) is recorded and every later JSON encode of the
episode raises, NaN leaves results that are not JSON, and nesting 10,000 deep overflows the
recursion of whatever walks the value next. The walk here is iterative: it never recurses.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Protocol

from compoworld.contracts import ToolResult

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "InputRefused",
    "Limits",
    "check_value",
    "dumps",
    "load_json",
]

DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_MAX_DEPTH = 64


class _LimitSettings(Protocol):
    max_payload_bytes: int
    max_json_depth: int


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one edge: body size in bytes and nesting depth of objects and arrays."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH

    @classmethod
    def from_settings(cls, settings: _LimitSettings) -> Limits:
        return cls(max_bytes=settings.max_payload_bytes, max_depth=settings.max_json_depth)


class InputRefused(ValueError):
    """An input refused at the edge; ``result()`` is the failure to answer, ``status`` its HTTP status."""

    def __init__(self, code: str, message: str, *, syntax: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.syntax = syntax  # the text is not JSON at all (rather than JSON over a limit)

    @property
    def status(self) -> int:
        return self.result().status

    def result(self) -> ToolResult:
        return ToolResult.fail(self.code, self.message)


def _bad(message: str) -> InputRefused:
    return InputRefused("invalid_json", message)


def _no_constant(name: str) -> Any:
    raise _bad(f"{name} is not a finite JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _bad(f"number {text[:40]} is beyond the range of a finite JSON number")
    return value


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_value(value: Any, limits: Limits, what: str = "request body") -> None:
    """Raise ``InputRefused`` unless ``value`` is clean JSON data within ``limits.max_depth``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if isinstance(node, str):
            if not _encodable(node):
                raise _bad(f"{what} holds a string that is not valid Unicode (a lone surrogate)")
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise _bad(f"{what} holds {node!r}, which is not a finite JSON number")
        elif isinstance(node, dict | list | tuple):
            if depth >= limits.max_depth:
                raise _bad(f"{what} is nested deeper than {limits.max_depth} levels")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, item in items:
                if isinstance(key, str) and not _encodable(key):
                    raise _bad(f"{what} holds a key that is not valid Unicode (a lone surrogate)")
                if isinstance(item, dict | list | tuple | str | float):
                    push((item, depth + 1))


def load_json(raw: bytes | str, limits: Limits, what: str = "request body") -> Any:
    """Parse JSON text within ``limits``; ``InputRefused`` says why it cannot be accepted."""
    if len(raw) > limits.max_bytes:
        raise InputRefused(
            "payload_too_large", f"{what} is {len(raw)} bytes; the limit is {limits.max_bytes}"
        )
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except InputRefused:
        raise
    except RecursionError:
        raise _bad(f"{what} is nested deeper than {limits.max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError, an int over 4,300 digits
        raise InputRefused("invalid_json", f"{what} is not valid JSON: {exc}", syntax=True) from None
    if not _plainly_clean(raw, limits.max_depth):
        check_value(value, limits, what)
    return value


#: ``\uD800``-``\uDFFF``: the only way ASCII JSON text can hold a lone surrogate
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _plainly_clean(raw: bytes | str, max_depth: int) -> bool:
    """True when the text alone shows that ``check_value`` would find nothing in what it parsed to,
    so the walk can be skipped: ASCII with no escape of a UTF-16 surrogate (no lone surrogate can
    come out), and no more brackets than ``max_depth`` (no container nested that deep). Parsing
    has already refused non-finite numbers. Anything else (non-ASCII text, surrogate escapes, many
    brackets) is walked as before."""
    if not raw.isascii():
        return False
    if isinstance(raw, str):
        if _SURROGATE_ESCAPE.search(raw):
            return False
        return raw.count("[") + raw.count("{") <= max_depth
    if _SURROGATE_ESCAPE_BYTES.search(raw):
        return False
    return raw.count(b"[") + raw.count(b"{") <= max_depth


def dumps(value: Any) -> str:
    """JSON text that can always be written as UTF-8: a value that slipped past the edge is escaped.

    The fast path is the ordinary encoding; only a value holding a lone surrogate or a non-finite
    number falls back to ASCII escapes and ``null`` — for writers (trajectory files, logs) that must
    never die on one bad line.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
        text.encode("utf-8")
        return text
    except (ValueError, UnicodeEncodeError):
        return json.dumps(_finite(value), ensure_ascii=True, default=str)
    except RecursionError:
        return json.dumps(str(value)[:10_000], ensure_ascii=True)


def _finite(value: Any) -> Any:
    """A copy of ``value`` with non-finite floats as None (iterative: deep values do not recurse)."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            parent[key] = None
        elif isinstance(node, dict):
            copy: dict[Any, Any] = dict(node)
            parent[key] = copy
            stack.extend((copy, k, v) for k, v in copy.items())
        elif isinstance(node, list | tuple):
            items = list(node)
            parent[key] = items
            stack.extend((items, i, v) for i, v in enumerate(items))
    return root[0]
