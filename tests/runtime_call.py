"""One tool call on an in-process runtime, as the orchestrator makes it: the episode is forked
first (services create no state on an unknown id), then the call's envelope is returned."""

from __future__ import annotations

import asyncio
from typing import Any

from compoworld.runtime import ServiceRuntime

__all__ = ["call"]


def call(rt: ServiceRuntime, ep: str | None, name: str, args: Any) -> dict[str, Any]:
    """The call's envelope (the uniform route's wire form); ``ep=None`` reads the seed view."""
    if ep is not None and not rt.has_episode(ep):
        rt.fork(ep)
    return asyncio.run(rt.call_tool(ep, name, args)).envelope()
