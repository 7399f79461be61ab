"""Agent-facing tool names: ``<svc>__<tool>``, only ``[A-Za-z0-9_-]``, at most 64 characters (STYLE #3).

OpenAI-compatible endpoints reject other names, so a long or odd name is cleaned and, when
needed, shortened with a hash suffix; the caller keeps the map back to (service, tool).
"""

from __future__ import annotations

import hashlib
import random
import re

__all__ = ["MAX_NAME", "SEP", "direct_name", "seeded_rng", "stable_int"]

MAX_NAME = 64
SEP = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def stable_int(*parts: object) -> int:
    """A 64-bit integer from sha256 of the parts (never Python's salted ``hash()``)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def seeded_rng(*parts: object) -> random.Random:
    """A private RNG seeded from names, so every ordering decision is reproducible."""
    return random.Random(stable_int(*parts))


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
