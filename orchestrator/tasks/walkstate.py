"""The record of an executed walk: steps with provenance, results, and the rows they touched."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import EntityDef
from orchestrator.graph.model import ToolNode
from orchestrator.models import WalkStep

__all__ = ["DraftRejected", "Walk", "coerce_key", "is_stamp"]


class DraftRejected(Exception):
    """A walk or task draft that cannot become a task; ``reason`` is counted in the generation report.

    A signal inside task generation (the generator catches it and tries again), not an error.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Walk:
    """An executed walk: its steps (arguments with provenance), the nodes, and each step's result."""

    steps: list[WalkStep] = field(default_factory=list)
    nodes: list[ToolNode] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    pools: list[dict[str, tuple[str, Any]]] = field(default_factory=list)
    rows: list[tuple[str, str, str] | None] = field(default_factory=list)
    generated: set[tuple[str, str, str]] = field(default_factory=set)
    aggregate: bool = False

    def rewritten_after(self, index: int) -> bool:
        """Whether a later step writes the row step ``index`` read or wrote (its values are then stale)."""
        row = self.rows[index]
        return row is not None and any(
            self.rows[j] == row and self.steps[j].kind == "write" for j in range(index + 1, len(self.steps))
        )

    @property
    def services(self) -> list[str]:
        return list(dict.fromkeys(s.service for s in self.steps))


def coerce_key(entity: EntityDef, key: Any) -> Any:
    """A row key as the runtime stores it (``"12"`` -> 12 for integer keys)."""
    if entity.pk_type == "integer" and isinstance(key, str) and key.lstrip("-").isdigit():
        return int(key)
    return key


def is_stamp(entity: EntityDef | None, column: str) -> bool:
    col = entity.column(column) if entity else None
    return bool(col and col.read_only)
