"""The typed dependency graph over a library's tools (networkx underneath)."""

from orchestrator.graph.build import build_graph, library_version, load_manifests
from orchestrator.graph.model import GraphEdge, GraphSummary, InputPort, OutputPort, ToolGraph, ToolNode

__all__ = [
    "GraphEdge",
    "GraphSummary",
    "InputPort",
    "OutputPort",
    "ToolGraph",
    "ToolNode",
    "build_graph",
    "library_version",
    "load_manifests",
]
