"""Build the dependency graph of a library: its tools, typed ports, and the role index that links them.

A large library is built by streaming (:func:`stream_graph`): one manifest is read at a time, its
tools become ``ToolNode``s (the compact per-tool port view linking needs: names, kinds, entity,
typed inputs and outputs) and its JSON feeds the library hash, then the manifest is dropped. Only
the nodes stay, so memory follows the ports, not the manifests (whole manifests of the full corpus
held ~5 GB). The graph is the one :func:`build_graph` makes from the same manifests in memory.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from compoworld.catalog import SkippedFolder, read_manifest
from compoworld.errors import LibraryError
from compoworld.manifest import ServiceManifest, library_folders, load_manifests
from orchestrator.graph.model import FanOut, ToolGraph, ToolNode
from orchestrator.graph.ports import input_ports, output_ports

__all__ = [
    "LibraryHash",
    "Streamed",
    "build_graph",
    "library_version",
    "load_manifests",
    "stream_graph",
    "tool_nodes",
]


class Streamed(NamedTuple):
    """What :func:`stream_graph` read: the graph, the folders skipped, the services linked."""

    graph: ToolGraph
    skipped: list[SkippedFolder]
    services: int


class LibraryHash:
    """The running library hash: manifests fed in name order give :func:`library_version`'s value."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def add(self, manifest: ServiceManifest) -> None:
        self.digest.update(manifest.model_dump_json().encode())
        self.digest.update(b"\n")

    def value(self) -> str:
        return self.digest.hexdigest()[:16]


def library_version(manifests: Sequence[ServiceManifest]) -> str:
    """A short hash of the manifests: tasks and graphs say which library they were built on.

    Each manifest's JSON (pydantic's serializer) feeds one sha256, in name order: a large library
    is hashed in a fraction of the time a canonical re-encoding of every manifest took.
    """
    version = LibraryHash()
    for manifest in sorted(manifests, key=lambda m: m.name):
        version.add(manifest)
    return version.value()


def _compact(nodes: list[ToolNode]) -> list[ToolNode]:
    """The same nodes with their repeated strings interned (services, semantics, argument names recur
    across thousands of tools: one copy each)."""
    intern = sys.intern
    for node in nodes:
        node.service = intern(node.service)
        node.domain = intern(node.domain)
        node.operation = intern(node.operation)
        for port in node.inputs:
            port.name = intern(port.name)
            port.semantic = intern(port.semantic)
        for out in node.outputs:
            out.path = intern(out.path)
            out.semantic = intern(out.semantic)
    return nodes


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


def _graph(nodes: Iterable[ToolNode], version: str, fanout: FanOut | None) -> ToolGraph:
    ordered = sorted(nodes, key=lambda n: n.id)
    return ToolGraph(library_version=version, nodes=ordered, fanout=fanout or FanOut())


def build_graph(manifests: Sequence[ServiceManifest], fanout: FanOut | None = None) -> ToolGraph:
    """Nodes for every tool, linked where an output's role is an argument's (bounded fan-out per output)."""
    return _graph((n for m in manifests for n in tool_nodes(m)), library_version(manifests), fanout)


def stream_graph(
    library: Path,
    fanout: FanOut | None = None,
    on_skip: Callable[[SkippedFolder], None] | None = None,
) -> Streamed:
    """The graph of every manifest of ``library`` that reads, holding one manifest at a time, the
    folders that do not read (each with the reason) and how many did: the same graph as
    ``build_graph`` of ``load_manifests_skipping(library)``."""
    version = LibraryHash()
    nodes: list[ToolNode] = []
    skipped: list[SkippedFolder] = []
    services = 0
    for folder in library_folders(library):  # folder name == service name: this is name order
        try:
            manifest = read_manifest(folder)
        except LibraryError as exc:
            miss = SkippedFolder(folder=str(folder), reason=str(exc))
            skipped.append(miss)
            if on_skip is not None:
                on_skip(miss)
            continue
        version.add(manifest)
        nodes += _compact(tool_nodes(manifest))
        services += 1
        del manifest
    return Streamed(_graph(nodes, version.value(), fanout), skipped, services)
