"""What the seed state holds, read once per generation run: the rows of every table, and rows by key.

Scenarios are built from real seed rows (the world index reads them here once), and the
solution families look rows up by key to make their variants. The rows of a table are read from its
runtime on first use and kept; a world indexed one service at a time (``World.add``) reads them from
the runtime it is given and forgets those no scenario reads, which are read again if ever asked for.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from compoworld.manifest import EntityDef
from compoworld.runtime.service import ServiceRuntime

__all__ = ["SeedIndex", "value_key"]


def value_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class SeedIndex:
    """Seed rows of a library's tables, read on first use and kept.

    With ``recent=None`` every table read is kept (a library held in memory). With a bound, the tables
    read through :meth:`read` (the world index's) stay until forgotten, and of the others only the
    ``recent`` used last: the rest are read again from their runtime when asked for (the same rows).
    """

    def __init__(self, runtimes: Mapping[str, ServiceRuntime], *, recent: int | None = None) -> None:
        self.runtimes = runtimes
        self.recent = recent
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._lru: OrderedDict[tuple[str, str], list[dict[str, Any]]] = OrderedDict()
        self._by_key: OrderedDict[tuple[str, str], dict[str, dict[str, Any]]] = OrderedDict()

    def rows(self, service: str, table: str) -> list[dict[str, Any]]:
        key = (service, table)
        rows = self._rows.get(key)
        if rows is not None:
            return rows
        if self.recent is None:
            return self.read(self.runtimes[service], table)
        rows = self._lru.get(key)
        if rows is None:
            rows = self._lru[key] = _select(self.runtimes[service], table)
            _trim(self._lru, self.recent)
        self._lru.move_to_end(key)
        return rows

    def read(self, runtime: ServiceRuntime, table: str) -> list[dict[str, Any]]:
        """The rows of ``table``, read from this runtime unless they are kept already; kept until forgotten."""
        key = (runtime.name, table)
        if key not in self._rows:
            self._rows[key] = self._lru.pop(key, []) or _select(runtime, table)
        return self._rows[key]

    def forget(self, service: str, table: str) -> None:
        """Drop the kept rows of a table (they are read again on first use)."""
        self._rows.pop((service, table), None)
        self._by_key.pop((service, table), None)

    def kept(self) -> int:
        """Tables whose rows are held now."""
        return len(self._rows) + len(self._lru)

    def row(self, service: str, entity: EntityDef, pk_value: Any) -> dict[str, Any] | None:
        key = (service, entity.table)
        by_key = self._by_key.get(key)
        if by_key is None:
            by_key = self._by_key[key] = {
                value_key(r.get(entity.pk)): r for r in self.rows(service, entity.table)
            }
            if self.recent is not None:
                _trim(self._by_key, self.recent)
        elif self.recent is not None:
            self._by_key.move_to_end(key)
        return by_key.get(value_key(pk_value))


def _select(runtime: ServiceRuntime, table: str) -> list[dict[str, Any]]:
    return runtime.select(None, table, None) if table in runtime.store.tables else []


def _trim(kept: OrderedDict[Any, Any], size: int) -> None:
    while len(kept) > size:
        kept.popitem(last=False)
