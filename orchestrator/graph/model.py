"""Typed contract of the tool dependency graph (STYLE #6): nodes, edges, summary.

Persisted as ``graph.json``. The walker reads it back through ``ToolGraph``, which keeps
a per-node out-edge index and converts to networkx for component analysis.
"""

from __future__ import annotations

from typing import Literal

import networkx as nx
from pydantic import BaseModel, Field, PrivateAttr

__all__ = ["GraphEdge", "GraphSummary", "InputPort", "OutputPort", "PortRole", "ToolGraph", "ToolNode"]

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


class ToolGraph(BaseModel):
    """The whole library's dependency graph."""

    library_version: str = Field(default="", description="Hash of the manifests the graph was built from.")
    nodes: list[ToolNode] = Field(description="Tools, sorted by id.")
    edges: list[GraphEdge] = Field(description="Links, sorted by (source, target, field, arg).")
    _by_id: dict[str, ToolNode] = PrivateAttr(default_factory=dict)
    _out: dict[str, list[GraphEdge]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: object) -> None:
        self._by_id = {n.id: n for n in self.nodes}
        out: dict[str, list[GraphEdge]] = {n.id: [] for n in self.nodes}
        for edge in self.edges:
            out.setdefault(edge.source, []).append(edge)
        self._out = out

    def node(self, node_id: str) -> ToolNode:
        return self._by_id[node_id]

    def out_edges(self, node_id: str) -> list[GraphEdge]:
        return self._out.get(node_id, [])

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
        for e in self.edges:
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
        graph = nx.DiGraph()
        graph.add_nodes_from(n.id for n in self.nodes)
        graph.add_edges_from((e.source, e.target) for e in self.edges)
        comps = (
            sorted(nx.weakly_connected_components(graph), key=lambda c: (-len(c), sorted(c)[0]))
            if self.nodes
            else []
        )
        largest = comps[0] if comps else set()
        cross = [e for e in self.edges if e.cross_service]
        reached = {self._by_id[e.source].service for e in cross} | {
            self._by_id[e.target].service for e in cross
        }
        by_sem: dict[str, int] = {}
        for e in cross:
            by_sem[e.semantic] = by_sem.get(e.semantic, 0) + 1
        return GraphSummary(
            services=len(self.services),
            nodes=len(self.nodes),
            edges=len(self.edges),
            tool_pairs=graph.number_of_edges(),
            cross_service_edges=len(cross),
            cross_service_pairs=len({(e.source, e.target) for e in cross}),
            components=len(comps),
            largest_component=len(largest),
            services_reached=len(reached),
            services_in_largest_component=len({self._by_id[n].service for n in largest}),
            isolated_tools=sum(1 for n in graph.nodes if graph.degree(n) == 0),
            by_semantic=dict(sorted(by_sem.items(), key=lambda kv: (-kv[1], kv[0]))),
        )
