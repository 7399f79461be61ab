"""Build the dependency graph of a library: an edge wherever one tool's output can fill another's argument."""

from __future__ import annotations

from collections.abc import Sequence

from compoworld.manifest import ServiceManifest, load_manifests
from compoworld.runtime.state import canonical_hash
from orchestrator.graph.model import GraphEdge, InputPort, ToolGraph, ToolNode
from orchestrator.graph.ports import ACCEPTS, input_ports, output_ports

__all__ = ["build_graph", "library_version", "load_manifests", "tool_nodes"]


def library_version(manifests: Sequence[ServiceManifest]) -> str:
    """A short hash of the manifests: tasks and graphs say which library they were built on."""
    return canonical_hash([m.model_dump(mode="json") for m in sorted(manifests, key=lambda m: m.name)])[:16]


def tool_nodes(manifest: ServiceManifest) -> list[ToolNode]:
    """One node per tool of a service, with its typed inputs and outputs."""
    return [
        ToolNode(
            id=f"{manifest.name}.{tool.name}",
            service=manifest.name,
            tool=tool.name,
            kind=tool.kind,
            operation=tool.operation,
            backend=tool.backend,
            entity=tool.entity,
            domain=manifest.domain,
            inputs=input_ports(manifest, tool),
            outputs=output_ports(manifest, tool),
        )
        for tool in manifest.tools
    ]


def build_graph(manifests: Sequence[ServiceManifest]) -> ToolGraph:
    """Nodes for every tool and an edge for every (output field, argument) pair of compatible type."""
    nodes = sorted((n for m in manifests for n in tool_nodes(m)), key=lambda n: n.id)
    consumers: dict[str, list[tuple[ToolNode, InputPort]]] = {}
    for node in nodes:
        for port in node.inputs:
            for sem in sorted({port.semantic} | ACCEPTS.get(port.semantic, frozenset())):
                consumers.setdefault(sem, []).append((node, port))
    edges: list[GraphEdge] = []
    for source in nodes:
        for out in source.outputs:
            for target, port in consumers.get(out.semantic, []):
                if target.id == source.id:
                    continue
                edges.append(
                    GraphEdge.model_construct(  # tens of thousands of edges: skip re-validating known-good fields
                        source=source.id,
                        target=target.id,
                        field=out.path,
                        arg=port.name,
                        semantic=out.semantic,
                        link="id" if out.semantic.startswith("id:") else "value",
                        cross_service=source.service != target.service,
                    )
                )
    edges.sort(key=lambda e: (e.source, e.target, e.field, e.arg))
    return ToolGraph(library_version=library_version(manifests), nodes=nodes, edges=edges)
