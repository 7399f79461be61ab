"""Which verdicts of a verification round the next round keeps, after some tools were switched.

A build verifies a folder, switches the tools that failed to the simulated backend, renders it
again and verifies again, until no implemented tool fails (``compoworld.synth.build``). In the
next round the seed, the entities and every other tool's definition are what they were; only the
switched tools' definitions changed (``pipeline.simulate``). A check can come out differently only
where it meets a switched tool, and there are few ways a check or the runtime finds another tool:

- it calls it (``Twin`` records every call), and the runtime calls an action's per-item tool
  (``ActionDef.each``) for it: ``tool:<name>``;
- ``reader_of(entity)``, the entity's first implemented read tool, which reads a row back after a
  write or an action (``_read_back`` on the action's own entity or the one it writes):
  ``reader:<entity>``, found on every read tool of the entity;
- ``_set_up``, another transition of the same entity run first (pause, then resume):
  ``transition:<entity>``, found on every transition of the entity;
- a simulated tool's check looks through the simulated tools of its collection (``address_of``:
  ``_known_key``, create -> read): ``collection:<collection>``, found on every tool of it.

A switch only ever takes a tool away from the implemented and action backends, so a lookup of the
first implemented tool of some kind (``reader_of``, the lister a whole-table clear reads back
through) changes its answer only if the tool it answered was switched, and that tool was then
called (``tool:``) or is found by its key; only lookups of *simulated* tools gain candidates, and
those are by collection. The runtime itself serves a tool from its own definition and its entity's
table; its world model reads other tools only by what a switch leaves as it was (name, path,
schemas, ``address_of``).
So a check's *reach* is what it can look up by those keys, and a switched tool is *found* by its
keys before the switch and after it (simulating a tool drops its action); a verdict is kept when
nothing switched is found within its reach. Everything else a check uses (the seed, the entities,
its own definition, ``seeded_rng`` by tool name) is unchanged, and episode ids name forks, never
values. ``tests/test_synth_reverify.py`` compares kept rounds against full ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compoworld.manifest import ToolDef
from compoworld.runtime.worldstate import address_of

if TYPE_CHECKING:
    from compoworld.synth.verify import ToolCheck

__all__ = ["Verdicts", "called", "found_by", "looks_up"]


def _collection(tool: ToolDef) -> str | None:
    address = address_of(tool)
    return f"collection:{address.collection}" if address is not None else None


def looks_up(tool: ToolDef, backend: str) -> frozenset[str]:
    """The keys the check of ``tool``, served by ``backend`` in this round, may find other tools by."""
    keys = {f"tool:{tool.name}"}
    if tool.entity:
        keys |= {f"reader:{tool.entity}", f"transition:{tool.entity}"}
    if tool.action is not None:
        keys.add(f"reader:{tool.action.target}")
        if tool.action.each:
            keys.add(f"tool:{tool.action.each}")
    collection = _collection(tool)
    if backend == "simulated" and collection is not None:
        keys.add(collection)
    return frozenset(keys)


def called(tool: ToolDef) -> frozenset[str]:
    """The keys a call of ``tool`` reaches: the tool, and the per-item tool the runtime calls for it."""
    keys = {f"tool:{tool.name}"}
    if tool.action is not None and tool.action.each:
        keys.add(f"tool:{tool.action.each}")
    return frozenset(keys)


def found_by(tool: ToolDef) -> frozenset[str]:
    """The keys a check can find ``tool`` by (its definition in one round)."""
    keys = {f"tool:{tool.name}"}
    if tool.entity and tool.operation == "read":
        keys.add(f"reader:{tool.entity}")
    if tool.entity and tool.action is not None and tool.action.kind == "transition":
        keys.add(f"transition:{tool.entity}")
    collection = _collection(tool)
    if collection is not None:
        keys.add(collection)
    return frozenset(keys)


@dataclass
class Verdicts:
    """The verdicts of one verification round, each with the keys its check could reach."""

    checks: dict[str, ToolCheck] = field(default_factory=dict)
    reach: dict[str, frozenset[str]] = field(default_factory=dict)

    def add(self, check: ToolCheck, reach: frozenset[str]) -> None:
        self.checks[check.tool] = check
        self.reach[check.tool] = reach

    def kept(self, before: Iterable[ToolDef], after: Iterable[ToolDef]) -> Verdicts:
        """The verdicts nothing switched can change; ``before`` and ``after`` are the definitions of
        the tools that changed, in the round just run and in the next."""
        switched: set[str] = set()
        found: set[str] = set()
        for tool in (*before, *after):
            switched.add(tool.name)
            found |= found_by(tool)
        out = Verdicts()
        for name, check in self.checks.items():
            if name not in switched and not (self.reach[name] & found):
                out.add(check, self.reach[name])
        return out
