"""A StateReader over in-process ServiceRuntimes (task generation, verification, the embedded mesh)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compoworld.runtime.service import ServiceRuntime
from orchestrator.rubric.base import CriterionError

__all__ = ["RuntimeStateReader"]


class RuntimeStateReader:
    """Reads one episode's state (or the seed view, for ``episode_id=None``) across several services."""

    def __init__(self, runtimes: Mapping[str, ServiceRuntime], episode_id: str | None) -> None:
        self.runtimes = runtimes
        self.episode_id = episode_id

    def _runtime(self, service: str) -> ServiceRuntime:
        runtime = self.runtimes.get(service)
        if runtime is None:
            raise CriterionError(f"unknown service '{service}'")
        return runtime

    async def select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        runtime = self._runtime(service)
        if table != "action_log" and table not in runtime.store.tables:
            raise CriterionError(f"service '{service}' has no table '{table}'")
        columns = runtime.store.tables[table].column_set if table != "action_log" else None
        if columns is not None and not set(where) <= columns:
            raise CriterionError(
                f"table '{table}' of '{service}' has no column {sorted(set(where) - columns)}"
            )
        return runtime.select(self.episode_id, table, where)

    async def dump(self, service: str) -> dict[str, Any]:
        return self._runtime(service).dump(self.episode_id)
