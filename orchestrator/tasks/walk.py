"""Seeded random walks over the dependency graph, executed on forks as they go.

A walk starts with a lookup that names one real seed row, then repeatedly follows an
edge out of a step already taken: the edge's output field (found in that step's actual
result) fills the target's argument, other required arguments come from earlier results,
from the seed state, or (for writes) from plausible literals. Each step runs at once on
the walk's session; a failed step is discarded and another edge tried. Cross-service
edges and services not yet visited weigh more, so information has to flow between
services. Only implemented tools produce values: a simulated result may differ under an
LLM world model, so nothing the rubric depends on is taken from one.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compoworld.manifest import EntityDef, ResponseShape, ToolDef
from compoworld.runtime.service import ServiceRuntime
from orchestrator.graph.model import GraphEdge, InputPort, ToolGraph, ToolNode
from orchestrator.graph.ports import schema_path
from orchestrator.models import WalkStep
from orchestrator.tasks.arguments import ArgumentFiller, arguments_read
from orchestrator.tasks.execute import Session
from orchestrator.tasks.paths import MISSING, get_path, leaves, list_items, set_arg, step_ref
from orchestrator.tasks.seeds import SeedIndex, value_key
from orchestrator.tasks.walkstate import DraftRejected, Walk, coerce_key, is_stamp

__all__ = ["SEMANTIC_WEIGHT", "DraftRejected", "Walk", "WalkConfig", "Walker", "coerce_key"]


@dataclass(frozen=True)
class WalkConfig:
    """Shape of the walks: length bounds and how strongly to favour crossing services."""

    min_len: int = 2
    max_len: int = 6
    cross_weight: float = 4.0
    new_service_weight: float = 3.0
    id_cross_weight: float = 0.25
    write_weight: float = 1.5
    aggregation_rate: float = 0.5
    step_tries: int = 10
    start_tries: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.min_len <= self.max_len <= 8:
            raise ValueError(
                f"walk length bounds must satisfy 1 <= min <= max <= 8, got {self.min_len}..{self.max_len}"
            )


# How telling a link of each semantic type is: an email or an amount carried from one service to
# another reads like real work; a title or free text fits almost any argument, so those links
# (the bulk of the graph) are followed less often. Unlisted types weigh 1.
SEMANTIC_WEIGHT: dict[str, float] = {
    "email": 3.0,
    "phone": 3.0,
    "money": 2.0,
    "currency": 1.5,
    "person_name": 2.0,
    "first_name": 1.5,
    "last_name": 1.5,
    "company_name": 2.0,
    "date": 1.5,
    "date-time": 1.2,
    "address": 1.5,
    "country": 1.2,
    "url": 0.7,
    "title": 0.4,
    "text": 0.4,
    "status": 0.3,
}


def _total(data: Any, shape: ResponseShape, count: int) -> Any:
    """The number of matching rows a list body states (its ``total`` paging field), else the page's."""
    path = next((p for p, role in shape.paging.items() if role == "total"), None)
    value = get_path(data, path) if path else MISSING
    return count if value is MISSING else value


def _weighted(rng: random.Random, items: Sequence[tuple[float, Any]]) -> Any:
    total = sum(w for w, _ in items)
    pick = rng.random() * total
    for weight, item in items:
        pick -= weight
        if pick <= 0:
            return item
    return items[-1][1]


class Walker:
    """Draws and executes walks over one library."""

    def __init__(
        self,
        graph: ToolGraph,
        runtimes: Mapping[str, ServiceRuntime],
        seeds: SeedIndex,
        config: WalkConfig,
        today: str,
    ) -> None:
        self.graph = graph
        self.runtimes = runtimes
        self.seeds = seeds
        self.cfg = config
        self.today = today
        self.filler = ArgumentFiller(runtimes, seeds, today)
        self.nodes = {n.id: n for n in graph.nodes}
        self.ports = {n.id: {p.name: p for p in n.inputs} for n in graph.nodes}
        self.starts = [(self._start_weight(n), n) for n in graph.nodes if self._startable(n)]
        self.adjacency = self._adjacency()

    # -- lookup of manifest objects -----------------------------------------------------

    def tool(self, node: ToolNode) -> ToolDef:
        return self.filler.tool(node)

    def entity(self, node: ToolNode) -> EntityDef | None:
        return self.filler.entity(node)

    def _startable(self, node: ToolNode) -> bool:
        if node.backend != "implemented" or node.operation not in ("read", "list", "search"):
            return False
        entity = self.entity(node)
        if entity is None or not self.seeds.rows(node.service, entity.table):
            return False
        return any(p.role in ("pk", "filter", "search") for p in node.inputs)

    def _start_weight(self, node: ToolNode) -> float:
        reach = {self.nodes[e.target].service for e in self.graph.out_edges(node.id) if e.cross_service}
        return 1.0 + len(reach)

    # -- the walk -----------------------------------------------------------------------

    async def walk(self, rng: random.Random, session: Session) -> Walk:
        """One executed walk; ``DraftRejected`` with the reason when none could be drawn."""
        if not self.starts:
            raise DraftRejected("no tool can start a walk (no implemented read over a seeded table)")
        walk = Walk()
        if not await self._start(rng, walk, session):
            raise DraftRejected("no start lookup succeeded")
        target = rng.randint(self.cfg.min_len, self.cfg.max_len)
        tried: set[tuple[str, str, int, str]] = set()
        while len(walk.steps) < target and not walk.aggregate:
            if not await self._extend(rng, walk, session, tried, last=len(walk.steps) + 1 >= target):
                break
        if len(walk.steps) < self.cfg.min_len:
            raise DraftRejected(f"walk stuck after {len(walk.steps)} step(s) (needs {self.cfg.min_len})")
        return walk

    async def _start(self, rng: random.Random, walk: Walk, session: Session) -> bool:
        for _ in range(self.cfg.start_tries):
            node: ToolNode = _weighted(rng, self.starts)
            entity = self.entity(node)
            assert entity is not None
            row = rng.choice(self.seeds.rows(node.service, entity.table))
            lookup = self._lookup(rng, walk, node, entity, row, session)
            if lookup is None:
                continue
            args, bindings = lookup
            if await self._run(walk, node, args, bindings, session, allow_many=False):
                return True
        return False

    def _lookup(
        self,
        rng: random.Random,
        walk: Walk,
        node: ToolNode,
        entity: EntityDef,
        row: dict[str, Any],
        session: Session,
    ) -> tuple[dict[str, Any], dict[str, str]] | None:
        """Arguments that name exactly ``row``: its key, a unique column value, or its label as a query
        (other required filters take the same row's values; anything else is filled as for any step)."""
        options: list[tuple[str, Any]] = []
        for port in node.inputs:
            if port.role == "pk":
                options.append((port.name, row.get(entity.pk)))
            elif port.role == "filter" and port.column:
                value = row.get(port.column)
                scalar = isinstance(value, (str, int)) and not isinstance(value, bool) and value != ""
                if scalar and self.seeds.count(node.service, entity.table, port.column, value) == 1:
                    options.append((port.name, value))  # a value only this row has
            elif port.role == "search" and entity.label_column:
                label = row.get(entity.label_column)
                if isinstance(label, str) and len(label) >= 3:
                    options.append((port.name, label))
        options = [o for o in options if o[1] is not None]
        if not options:
            return None
        name, value = rng.choice(options)
        args: dict[str, Any] = {}
        set_arg(args, name, value)
        bindings = {name: "seed"}
        for port in node.inputs:
            if port.required and port.role == "filter" and port.column and port.name != name:
                if row.get(port.column) is None:
                    return None
                set_arg(args, port.name, row[port.column])
                bindings[port.name] = "seed"
        return self.filler.complete(rng, walk, node, args, bindings, session)

    async def _extend(
        self,
        rng: random.Random,
        walk: Walk,
        session: Session,
        tried: set[tuple[str, str, int, str]],
        last: bool,
    ) -> bool:
        for _ in range(self.cfg.step_tries):
            candidates = self._candidates(walk, tried)
            if not candidates:
                return False
            edge, index, (path, value) = _weighted(rng, candidates)
            tried.add((edge.target, edge.arg, index, path))
            target = self.nodes[edge.target]
            planned = self.filler.assemble(rng, walk, target, edge.arg, value, step_ref(index, path), session)
            if planned is None:
                continue
            args, bindings = planned
            allow_many = (
                last and rng.random() < self.cfg.aggregation_rate and len(walk.steps) + 1 >= self.cfg.min_len
            )
            if await self._run(walk, target, args, bindings, session, allow_many=allow_many):
                return True
        return False

    def _adjacency(self) -> dict[str, dict[str, list[tuple[GraphEdge, ToolNode, InputPort, float]]]]:
        """Per node and output field: the edges a walk may follow, with their static weight."""
        out: dict[str, dict[str, list[tuple[GraphEdge, ToolNode, InputPort, float]]]] = {}
        reads = {
            n.id: arguments_read(self.tool(n), self.runtimes[n.service].manifest, n.backend)
            for n in self.graph.nodes
        }
        for node in self.graph.nodes:
            by_field: dict[str, list[tuple[GraphEdge, ToolNode, InputPort, float]]] = {}
            for edge in self.graph.out_edges(node.id):
                target = self.nodes[edge.target]
                if edge.arg not in reads[target.id]:
                    continue  # a header or parent path id the service ignores: the value would flow nowhere
                same_entity = (target.service, target.entity) == (node.service, node.entity)
                if target.kind == "read" and (target.backend != "implemented" or same_entity):
                    continue  # re-reading the row just found, or a read whose result may be simulated
                if same_entity and (
                    target.operation == "create" or (target.operation == "update" and edge.link == "value")
                ):
                    continue  # a copy of the row just found, or a row set to its own values: no one asks for that
                weight = SEMANTIC_WEIGHT.get(edge.semantic, 1.0) if edge.link == "value" else 1.0
                if edge.cross_service:
                    weight *= self.cfg.cross_weight * (self.cfg.id_cross_weight if edge.link == "id" else 1.0)
                if target.kind == "write":
                    weight *= self.cfg.write_weight
                by_field.setdefault(edge.field, []).append(
                    (edge, target, self.ports[target.id][edge.arg], weight)
                )
            out[node.id] = by_field
        return out

    def _candidates(
        self, walk: Walk, tried: set[tuple[str, str, int, str]]
    ) -> list[tuple[float, tuple[GraphEdge, int, tuple[str, Any]]]]:
        services = set(walk.services)
        used = {s.service + "." + s.tool for s in walk.steps}
        last = len(walk.nodes) - 1
        out: list[tuple[float, tuple[GraphEdge, int, tuple[str, Any]]]] = []
        for index, node in enumerate(walk.nodes):
            by_field = self.adjacency[node.id]
            for spath, hit in sorted(walk.pools[index].items()):
                for edge, target, port, static in by_field.get(spath, ()):
                    if (edge.target, edge.arg, index, hit[0]) in tried:
                        continue
                    if not self.filler.usable(walk, node.service, edge.semantic, hit[1], port):
                        continue
                    weight = static
                    if target.service not in services:
                        weight *= self.cfg.new_service_weight
                    if index == last:
                        weight *= 2.0
                    if target.id in used:
                        weight *= 0.2
                    out.append((weight, (edge, index, hit)))
        return out

    # -- execution ----------------------------------------------------------------------

    async def _run(
        self,
        walk: Walk,
        node: ToolNode,
        args: dict[str, Any],
        bindings: dict[str, str],
        session: Session,
        *,
        allow_many: bool,
    ) -> bool:
        """Execute one step; keep it only if it succeeded and its result can be referred to unambiguously."""
        for step in walk.steps:
            if (step.service, step.tool, step.arguments) == (node.service, node.tool, args):
                return False
        tool = self.tool(node)
        entity = self.entity(node)
        before = None
        row: tuple[str, str, str] | None = None
        if entity is not None and tool.pk_arg and tool.pk_arg in args and node.backend == "implemented":
            key = coerce_key(entity, args[tool.pk_arg])
            row = (node.service, entity.name, value_key(key))
            if node.kind == "write" and any(
                r == row and s.kind == "write" for r, s in zip(walk.rows, walk.steps, strict=True)
            ):
                return False  # one write per row: a second would erase what the first did
            if tool.operation == "update":
                rows = session.select(node.service, entity.table, {entity.pk: key})
                before = rows[0] if rows else None
        result = await session.call(node.service, node.tool, args)
        if not result.success:
            return False
        data = result.data
        many = False
        shape = tool.shape
        found = tool.rows_in(data) if node.backend == "implemented" else None  # rows keyed by column
        if node.backend == "implemented":
            items = list_items(data, shape)
            if items is not None and node.operation in ("list", "search"):
                total = _total(data, shape, len(items))
                if not items or (len(items) > 1 and not (allow_many and total == len(items))):
                    return False
                many = len(items) > 1
            record_now = found[0][1] if found and len(found) == 1 and not shape.many else None
            if (
                before is not None and record_now is None and entity is not None
            ):  # a body without the row (204)
                after = session.select(node.service, entity.table, {entity.pk: before[entity.pk]})
                record_now = after[0] if after else None
            changed = (
                record_now is not None
                and any(before.get(k) != v for k, v in record_now.items() if not is_stamp(entity, k))
                if before is not None
                else True
            )
            if not changed:
                return False
        if entity is not None and node.backend == "implemented":
            record = found[0][1] if found and len(found) == 1 else None
            if isinstance(record, dict) and record.get(entity.pk) is not None:
                row = (node.service, entity.name, value_key(record[entity.pk]))
                if node.operation == "create":
                    walk.generated.add((node.service, f"id:{entity.name}", value_key(record[entity.pk])))
        pool: dict[str, tuple[str, Any]] = {}
        if node.backend == "implemented" and node.operation != "delete":
            pool = {schema_path(path): (path, value) for path, value in leaves(data, shape)}
        walk.steps.append(
            WalkStep(
                service=node.service,
                tool=node.tool,
                bindings=bindings,
                arguments=args,
                kind=node.kind,
                operation=node.operation,
            )
        )
        walk.nodes.append(node)
        walk.results.append(data)
        walk.pools.append(pool)
        walk.rows.append(row)
        walk.aggregate = many
        return True
