"""Agent-facing tool names: ``<svc>__<tool>``, only ``[A-Za-z0-9_-]``, at most 64 characters (STYLE #3).

OpenAI-compatible endpoints reject other names, so a long or odd name is cleaned and, when
needed, shortened with a hash suffix; the caller keeps the map back to (service, tool).
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_NAME", "SEP", "direct_name"]

MAX_NAME = 64
SEP = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def direct_name(service: str, tool: str) -> str:
    """The exposed name of a service's tool: ``svc__tool``, cleaned and shortened to 64 characters.

    A name that had to change keeps a readable prefix and ends in 8 hex characters of
    sha256(service/tool), so two different tools never share an exposed name.
    """
    raw = f"{service}{SEP}{tool}"
    clean = _BAD.sub("_", raw)
    if clean == raw and len(clean) <= MAX_NAME:
        return clean
    suffix = hashlib.sha256(f"{service}/{tool}".encode()).hexdigest()[:8]
    return f"{clean[: MAX_NAME - len(suffix) - 1]}_{suffix}"
