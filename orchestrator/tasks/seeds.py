"""What the seed state holds, read once per generation run: the rows of every table, and rows by key.

Scenarios are built from real seed rows (the world index reads them here once), and the
solution families look rows up by key to make their variants.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compoworld.manifest import EntityDef
from compoworld.runtime.service import ServiceRuntime

__all__ = ["SeedIndex", "value_key"]


def value_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class SeedIndex:
    """Lazily cached seed rows of every table of a library."""

    def __init__(self, runtimes: Mapping[str, ServiceRuntime]) -> None:
        self.runtimes = runtimes
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._by_key: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}

    def rows(self, service: str, table: str) -> list[dict[str, Any]]:
        key = (service, table)
        if key not in self._rows:
            runtime = self.runtimes[service]
            self._rows[key] = runtime.select(None, table, None) if table in runtime.store.tables else []
        return self._rows[key]

    def row(self, service: str, entity: EntityDef, pk_value: Any) -> dict[str, Any] | None:
        key = (service, entity.table)
        if key not in self._by_key:
            self._by_key[key] = {value_key(r.get(entity.pk)): r for r in self.rows(service, entity.table)}
        return self._by_key[key].get(value_key(pk_value))
