"""What the seed state holds, read once per generation run: rows per table and how common each value is.

Walks start from real seed rows, and a good lookup value is one that names exactly one
row (an email, a name); a good aggregation filter is one that several rows share.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from compoworld.manifest import EntityDef, ToolDef
from compoworld.runtime.service import ServiceRuntime

__all__ = ["SeedIndex", "value_key"]


def value_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class SeedIndex:
    """Lazily cached seed rows and value counts of every table of a library."""

    def __init__(self, runtimes: Mapping[str, ServiceRuntime]) -> None:
        self.runtimes = runtimes
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._by_key: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self._counts: dict[tuple[str, str, str], Counter[str]] = {}

    def entity(self, service: str, name: str | None) -> EntityDef | None:
        if name is None or service not in self.runtimes:
            return None
        return self.runtimes[service].manifest.entity(name)

    def tool(self, service: str, name: str) -> ToolDef | None:
        if service not in self.runtimes:
            return None
        return self.runtimes[service].manifest.tool(name)

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

    def count(self, service: str, table: str, column: str, value: Any) -> int:
        """How many seed rows of ``table`` have ``column == value``."""
        key = (service, table, column)
        if key not in self._counts:
            self._counts[key] = Counter(value_key(r.get(column)) for r in self.rows(service, table))
        return self._counts[key][value_key(value)]
