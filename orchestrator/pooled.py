"""Clients of services held in a ``ServicePool``: loaded on first use, summarised from the catalog.

The orchestrator of ``compoworld up`` talks to every service through one of these. Nothing is
loaded to list services; a call, fork or grader read loads the service (a folder that fails
to load turns a tool call into a ``service_unavailable`` result and a fork into
``ServiceUnavailable``, naming the folder and the reason).
"""

from __future__ import annotations

from typing import Any

from compoworld.contracts import ToolResult
from compoworld.errors import ServiceUnavailable
from compoworld.runtime.pool import ServicePool
from compoworld.runtime.service import ServiceRuntime
from orchestrator.discovery import LocalService
from orchestrator.rubric.readers import SeedCache
from orchestrator.service_client import ServiceClient, unavailable

__all__ = ["PooledService", "pooled_clients"]


class PooledService(LocalService):
    """A ``LocalService`` whose runtime comes from the pool at each use (it may have been unloaded)."""

    def __init__(self, pool: ServicePool, name: str, timeout_s: float) -> None:
        self.pool = pool
        self.name = name
        self.timeout_s = timeout_s

    @property
    def runtime(self) -> ServiceRuntime:
        return self.pool[self.name]

    @runtime.setter
    def runtime(self, value: ServiceRuntime) -> None:
        raise AttributeError("a pooled service's runtime comes from its pool")

    @property
    def seed_cache(self) -> SeedCache:
        return self.pool.attached(self.name, "seed_cache", lambda _: SeedCache())

    @seed_cache.setter
    def seed_cache(self, value: SeedCache) -> None:
        raise AttributeError("a pooled service's seed cache lives in its pool")

    async def tool_schemas(self) -> list[dict[str, Any]]:
        schemas: list[dict[str, Any]] = self.pool.attached(self.name, "schemas", lambda rt: rt.tool_schemas())
        return schemas

    async def call(
        self, episode_id: str, tool: str, args: dict[str, Any], call_id: str | None = None
    ) -> ToolResult:
        try:
            self.runtime  # noqa: B018 - load it now, so a broken folder is a result, not an exception
        except ServiceUnavailable as exc:
            return unavailable(self.name, exc.reason)
        return await super().call(episode_id, tool, args, call_id)

    async def delete(self, episode_id: str) -> None:
        if self.pool.is_resident(self.name):  # an unloaded service holds no episode
            self.runtime.delete(episode_id)

    def summary(self) -> dict[str, Any]:
        entry = self.pool.catalog.entry(self.name)
        row: dict[str, Any] = {"name": self.name, "location": "embedded"}
        if entry is not None:
            row |= {
                "title": entry.title,
                "description": entry.description,
                "domain": entry.domain,
                "tools": entry.tools,
                "implemented": entry.implemented,
            }
        return row


def pooled_clients(pool: ServicePool, timeout_s: float) -> dict[str, ServiceClient]:
    """One client per catalog entry (none of them loads its service)."""
    return {name: PooledService(pool, name, timeout_s) for name in pool}
