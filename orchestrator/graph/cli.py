"""``compoworld graph``: build the dependency graph of a library, write it as JSON, print a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from compoworld.errors import LibraryError
from compoworld.settings import Settings
from orchestrator.graph.build import stream_graph
from orchestrator.graph.model import GraphSummary

__all__ = ["graph", "summary_table"]


def summary_table(summary: GraphSummary) -> Table:
    table = Table(title="dependency graph", show_header=False)
    for name, field in GraphSummary.model_fields.items():
        if name == "by_semantic":
            continue
        table.add_row((field.description or name).rstrip("."), str(getattr(summary, name)))
    top = ", ".join(f"{k} {v}" for k, v in list(summary.by_semantic.items())[:8])
    table.add_row("cross-service links by type", top or "-")
    return table


def graph(
    library: Annotated[
        Path | None, typer.Option("--library", "-l", help="Library folder (default: the starter set).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the graph JSON here.")] = None,
) -> None:
    """Link every tool whose output can fill another tool's argument; print nodes, edges, components."""
    console = Console()
    root = library or Settings().library
    try:  # one manifest held at a time: a folder that does not load costs its own service, never the graph
        built, _skipped, services = stream_graph(
            root, on_skip=lambda miss: console.print(f"[yellow]skipped {miss.folder}: {miss.reason}[/yellow]")
        )
    except LibraryError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if not services:
        console.print(f"[red]no services under {root} (expected <library>/<service>/manifest.json)[/red]")
        raise typer.Exit(2)
    summary = built.summary()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(built.model_dump_json() + "\n")
        console.print(f"wrote {out}")
    console.print(summary_table(summary))
    if summary.cross_service_edges == 0:
        console.print(
            "[yellow]no cross-service edges: no service produces a typed value another consumes; "
            "cross-service tasks cannot be generated from this library[/yellow]"
        )
