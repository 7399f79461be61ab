"""The signal that an action tool binds to no typed state change (its reason is recorded)."""

from __future__ import annotations

__all__ = ["Unbound"]


class Unbound(Exception):
    """An action tool names no state change of typed state: it runs on the world model, and
    ``str(exc)`` is the reason the manifest records (``simulated_reason``)."""
