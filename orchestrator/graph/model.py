"""Typed contract of the tool dependency graph (STYLE #6): nodes, edges, summary.

Persisted as ``graph.json`` (nodes and fan-out; edges are drawn from a role index, see
``orchestrator.graph.index``). Converts to networkx for analysis.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import networkx as nx
from pydantic import BaseModel, Field, PrivateAttr

__all__ = [
    "FanOut",
    "GraphEdge",
    "GraphSummary",
    "InputPort",
    "OutputPort",
    "PortRole",
    "ToolGraph",
    "ToolNode",
]

PortRole = Literal["pk", "filter", "search", "field", "arg"]


class InputPort(BaseModel):
    """An argument a typed value can fill."""

    name: str = Field(description="Argument name; 'body.key' for a field of a nested body argument.")
    semantic: str = Field(description="Semantic type it accepts ('email', 'id:contact', 'query'...).")
    role: PortRole = Field(
        description="pk: names the row; filter: narrows a list; search: free text; field: sets a column."
    )
    column: str | None = Field(default=None, description="Entity column the argument binds to, if any.")
    required: bool = Field(default=False, description="Whether the tool needs it.")


class OutputPort(BaseModel):
    """A typed field of a tool's result."""

    path: str = Field(description="Schema path in the result: 'email', 'items[].email', '[].id'.")
    semantic: str = Field(description="Semantic type of the value.")


class ToolNode(BaseModel):
    """One tool of one service."""

    id: str = Field(description="'<service>.<tool>'.")
    service: str = Field(description="Service name.")
    tool: str = Field(description="Tool name.")
    kind: Literal["read", "write"] = Field(description="Whether it changes state.")
    operation: str = Field(description="create | read | list | search | update | delete | action.")
    backend: Literal["implemented", "action", "simulated"] = Field(
        description="CRUD on typed state, a state transition on typed state, or the world model."
    )
    entity: str | None = Field(default=None, description="Entity it operates on.")
    domain: str = Field(default="general", description="The service's domain label.")
    inputs: list[InputPort] = Field(default_factory=list, description="Typed arguments.")
    outputs: list[OutputPort] = Field(default_factory=list, description="Typed result fields.")


class GraphEdge(BaseModel):
    """A value ``source`` produces can fill a parameter of ``target``."""

    source: str = Field(description="Producing tool id.")
    target: str = Field(description="Consuming tool id.")
    field: str = Field(description="Output field path of the source.")
    arg: str = Field(description="Argument of the target it fills.")
    semantic: str = Field(description="Semantic type of the produced value.")
    link: Literal["id", "value"] = Field(
        description="id: the same entity's key; value: the same semantic type."
    )
    cross_service: bool = Field(description="Whether source and target belong to different services.")


class GraphSummary(BaseModel):
    """Headline numbers of a graph."""

    services: int = Field(description="Services in the library.")
    nodes: int = Field(description="Tools.")
    edges: int = Field(description="Field-to-argument links.")
    tool_pairs: int = Field(description="Distinct (source, target) tool pairs linked.")
    cross_service_edges: int = Field(description="Links between tools of different services.")
    cross_service_pairs: int = Field(description="Distinct tool pairs across services.")
    components: int = Field(description="Weakly connected components over tools.")
    largest_component: int = Field(description="Tools in the largest weakly connected component.")
    services_reached: int = Field(description="Services with at least one cross-service link in or out.")
    services_in_largest_component: int = Field(description="Services with a tool in the largest component.")
    isolated_tools: int = Field(description="Tools with no link at all.")
    by_semantic: dict[str, int] = Field(
        default_factory=dict, description="Cross-service links per semantic type."
    )


class FanOut(BaseModel):
    """How many consumers one output may reach: same service, same vertical, other verticals."""

    same_service: int = Field(default=12, ge=0, description="Tools of the producer's own service.")
    same_vertical: int = Field(default=6, ge=0, description="Tools of other services of its domain.")
    other_vertical: int = Field(default=2, ge=0, description="Tools of services of other domains.")

    @property
    def total(self) -> int:
        return self.same_service + self.same_vertical + self.other_vertical


class ToolGraph(BaseModel):
    """The whole library's dependency graph: tools, and the role index their edges are drawn from.

    Edges are not stored (``orchestrator.graph.index``): ``out_edges`` draws a tool's bounded
    out-edges from the index, so memory grows linearly with tools. ``graph.json`` holds the
    nodes and the fan-out; loading it rebuilds the same edges.
    """

    library_version: str = Field(default="", description="Hash of the manifests the graph was built from.")
    nodes: list[ToolNode] = Field(description="Tools, sorted by id.")
    fanout: FanOut = Field(default_factory=FanOut, description="Bound on the edges out of each output.")
    _by_id: dict[str, ToolNode] = PrivateAttr(default_factory=dict)
    _index: Any = PrivateAttr(default=None)

    def model_post_init(self, __context: object) -> None:
        from orchestrator.graph.index import RoleIndex

        self._by_id = {n.id: n for n in self.nodes}
        self._index = RoleIndex(self.nodes, self.fanout)

    def node(self, node_id: str) -> ToolNode:
        return self._by_id[node_id]

    def out_edges(self, node_id: str) -> list[GraphEdge]:
        """Edges out of one tool, sorted by (target, field, argument); drawn on demand."""
        node = self._by_id.get(node_id)
        return self._index.out_edges(node) if node is not None else []

    def iter_edges(self) -> Iterator[GraphEdge]:
        """Every edge, by source id, without keeping them."""
        return iter(self._index.iter_edges())

    @property
    def edges(self) -> list[GraphEdge]:
        """Every edge, sorted by (source, target, field, arg): materialised, so for small graphs."""
        return list(self.iter_edges())

    @property
    def services(self) -> list[str]:
        return sorted({n.service for n in self.nodes})

    def to_networkx(self) -> nx.MultiDiGraph:
        """A MultiDiGraph: node attributes from ToolNode, one keyed edge per field->argument link."""
        graph = nx.MultiDiGraph(library_version=self.library_version)
        for node in self.nodes:
            graph.add_node(
                node.id,
                service=node.service,
                tool=node.tool,
                kind=node.kind,
                operation=node.operation,
                backend=node.backend,
                entity=node.entity,
            )
        for e in self.iter_edges():
            graph.add_edge(
                e.source,
                e.target,
                key=f"{e.field}->{e.arg}",
                field=e.field,
                arg=e.arg,
                semantic=e.semantic,
                link=e.link,
                cross_service=e.cross_service,
            )
        return graph

    def summary(self) -> GraphSummary:
        """Headline numbers, from one pass over the links (components by union-find over tools).

        The pass reads the index's plain links, never a ``GraphEdge`` per edge: building those
        was most of its time.
        """
        nodes = self.nodes
        size = len(nodes)
        parent = list(range(size))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        service = [n.service for n in nodes]
        linked = [False] * size
        pairs: set[int] = set()  # source * size + target
        cross_pairs: set[int] = set()
        reached: set[str] = set()
        by_sem: dict[str, int] = {}
        edges = cross = 0
        for s, t, _field, _arg, semantic in self._index.iter_links():
            edges += 1
            pair = s * size + t
            pairs.add(pair)
            linked[s] = linked[t] = True
            a, b = root(s), root(t)
            if a != b:
                parent[max(a, b)] = min(a, b)
            if service[s] != service[t]:
                cross += 1
                cross_pairs.add(pair)
                reached.add(service[s])
                reached.add(service[t])
                by_sem[semantic] = by_sem.get(semantic, 0) + 1
        groups: dict[int, list[int]] = {}
        for i in range(len(self.nodes)):
            groups.setdefault(root(i), []).append(i)
        comps = sorted(groups.values(), key=lambda c: (-len(c), self.nodes[min(c)].id))
        largest = comps[0] if comps else []
        return GraphSummary(
            services=len(self.services),
            nodes=len(self.nodes),
            edges=edges,
            tool_pairs=len(pairs),
            cross_service_edges=cross,
            cross_service_pairs=len(cross_pairs),
            components=len(comps),
            largest_component=len(largest),
            services_reached=len(reached),
            services_in_largest_component=len({self.nodes[i].service for i in largest}),
            isolated_tools=linked.count(False),
            by_semantic=dict(sorted(by_sem.items(), key=lambda kv: (-kv[1], kv[0]))),
        )
