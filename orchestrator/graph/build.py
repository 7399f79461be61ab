"""Build the dependency graph of a library: its tools, typed ports, and the role index that links them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from compoworld.manifest import ServiceManifest, load_manifests
from orchestrator.graph.model import FanOut, ToolGraph, ToolNode
from orchestrator.graph.ports import input_ports, output_ports

__all__ = ["build_graph", "library_version", "load_manifests", "tool_nodes"]


def library_version(manifests: Sequence[ServiceManifest]) -> str:
    """A short hash of the manifests: tasks and graphs say which library they were built on.

    Each manifest's JSON (pydantic's serializer) feeds one sha256, in name order: a large library
    is hashed in a fraction of the time a canonical re-encoding of every manifest took.
    """
    digest = hashlib.sha256()
    for manifest in sorted(manifests, key=lambda m: m.name):
        digest.update(manifest.model_dump_json().encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


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


def build_graph(manifests: Sequence[ServiceManifest], fanout: FanOut | None = None) -> ToolGraph:
    """Nodes for every tool, linked where an output's role is an argument's (bounded fan-out per output)."""
    nodes = sorted((n for m in manifests for n in tool_nodes(m)), key=lambda n: n.id)
    return ToolGraph(library_version=library_version(manifests), nodes=nodes, fanout=fanout or FanOut())
