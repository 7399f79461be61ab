"""What the orchestrator needs of a service, wherever it runs (``ServiceClient``).

Two implementations: ``LocalService`` (``orchestrator.discovery``: an in-process runtime) and
``HttpService`` (``orchestrator.remote``: a service behind URLs). A service that cannot answer a
tool call gives the agent ``unavailable(...)``, a failure result, never an exception.
"""

from __future__ import annotations

from typing import Any, Protocol

from compoworld.contracts import ToolResult

__all__ = ["SEED_VIEW", "ServiceClient", "unavailable"]


class ServiceClient(Protocol):
    """What the orchestrator needs from a service, wherever it runs."""

    name: str
    local: bool

    async def tool_schemas(self) -> list[dict[str, Any]]: ...
    async def fork(self, episode_id: str, today: str | None) -> str: ...
    def adopt(self, episode_id: str, base: str) -> None: ...
    async def delete(self, episode_id: str) -> None: ...
    async def freeze(self, episode_id: str) -> None: ...
    async def touch(self, episode_ids: list[str]) -> list[str]: ...
    async def call(
        self, episode_id: str, tool: str, args: dict[str, Any], call_id: str | None = None
    ) -> ToolResult: ...
    async def select(self, episode_id: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]: ...
    async def dump(self, episode_id: str) -> dict[str, Any]: ...
    async def state_hash(self, episode_id: str) -> str: ...
    async def tables(self, episode_id: str) -> dict[str, list[dict[str, Any]]]: ...
    def summary(self) -> dict[str, Any]: ...


#: The episode id the admin routes read as the seed view (what every episode forks from).
SEED_VIEW = "__seed__"


def unavailable(service: str, reason: str) -> ToolResult:
    """The result an agent sees when a service cannot answer."""
    return ToolResult.fail(
        "service_unavailable", f"service '{service}' is unavailable: {reason}. Try again or use another tool."
    )
