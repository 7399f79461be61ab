"""Workflow archetypes (notify, mirror, bill, schedule, follow up, ...) registered as data.

A task is a scenario over a walk (DESIGN.md, "Task"); each archetype is a named recipe for
one. This module holds only the registry: archetypes register here by name (``ARCHETYPES
.register("notify", "orchestrator.tasks.scenarios.notify:NOTIFY")``), or from an installed
package through the ``compoworld.archetypes`` entry-point group, and the task generator looks
them up by name. What an archetype builds is the scenario work's to define; the registry asks
only that it is named.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from compoworld.registry import Registry

__all__ = ["ARCHETYPES", "Archetype"]


@runtime_checkable
class Archetype(Protocol):
    """A named workflow recipe."""

    name: str


def _is_archetype(value: object) -> Archetype:
    if not isinstance(value, Archetype):
        raise TypeError(f"{value!r} is not an archetype (it has no 'name')")
    return value


ARCHETYPES: Registry[Archetype] = Registry(
    "task archetype", entry_points="compoworld.archetypes", check=_is_archetype
)
