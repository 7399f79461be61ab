"""``compoworld library stats [--json]``: what a library holds, read from its catalog (nothing loaded)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from compoworld.catalog import Catalog, SkippedFolder, read_catalog
from compoworld.commands import command_group
from compoworld.errors import LibraryError
from compoworld.settings import Settings

__all__ = ["LibraryStats", "library_app", "library_stats"]


class LibraryStats(BaseModel):
    """What ``library stats`` reports (``--json`` prints this model)."""

    path: str = Field(description="The library folder.")
    services: int = Field(description="Services the catalog lists.")
    skipped: list[SkippedFolder] = Field(description="Folders that are not served, and why.")
    tools: int = Field(description="Tools over all services.")
    tools_by_backend: dict[str, int] = Field(description="Tools per backend: implemented, action, simulated.")
    stateful_share: float = Field(description="Share of tools on typed state (implemented + action).")
    categories: dict[str, int] = Field(description="Services per category, most first.")
    domains: dict[str, int] = Field(description="Services per domain, most first.")
    verification: dict[str, int] = Field(description="Services verified, failed and not run.")
    from_index: bool = Field(description="Whether the catalog was read from index.json.")


def _most_first(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def library_stats(catalog: Catalog) -> LibraryStats:
    """Services, tools by backend, categories, domains and verification of a catalog."""
    rows = catalog.services
    tools = sum(r.tools for r in rows)
    backends = {
        "implemented": sum(r.implemented for r in rows),
        "action": sum(r.actions for r in rows),
        "simulated": sum(r.simulated for r in rows),
    }
    verified = Counter(
        "verified" if r.verified else "not run" if r.verified is None else "failed" for r in rows
    )
    stateful = backends["implemented"] + backends["action"]
    return LibraryStats(
        path=catalog.path,
        services=len(rows),
        skipped=list(catalog.skipped),
        tools=tools,
        tools_by_backend=backends,
        stateful_share=round(stateful / tools, 4) if tools else 0.0,
        categories=_most_first(Counter(c for r in rows for c in (r.categories or ["(none)"]))),
        domains=_most_first(Counter(r.domain for r in rows)),
        verification={k: verified.get(k, 0) for k in ("verified", "failed", "not run")},
        from_index=catalog.from_index,
    )


def _table(stats: LibraryStats) -> Table:
    table = Table(title=f"library {stats.path}", show_header=False)
    table.add_row("services", str(stats.services))
    table.add_row("folders skipped", str(len(stats.skipped)))
    table.add_row("tools", str(stats.tools))
    for backend, n in stats.tools_by_backend.items():
        share = n / stats.tools if stats.tools else 0.0
        table.add_row(f"  {backend}", f"{n} ({share:.1%})")
    table.add_row("stateful (implemented + action)", f"{stats.stateful_share:.1%}")
    table.add_row("verification", ", ".join(f"{k} {v}" for k, v in stats.verification.items()))
    top = list(stats.categories.items())[:12]
    table.add_row("categories (services)", ", ".join(f"{k} {v}" for k, v in top) or "-")
    table.add_row("domains (services)", ", ".join(f"{k} {v}" for k, v in list(stats.domains.items())[:12]))
    table.add_row("read from", "index.json" if stats.from_index else "the manifests")
    return table


def stats(
    library: Annotated[
        Path | None, typer.Option("--library", "-l", help="Library folder (default: the starter set).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Services, tools by backend, categories, verification, with the library's path."""
    root = library or Settings().library
    console = Console()
    try:
        catalog = read_catalog(root)
    except LibraryError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    numbers = library_stats(catalog)
    if as_json:
        typer.echo(json.dumps(numbers.model_dump(mode="json"), indent=1, sort_keys=True))
        return
    console.print(_table(numbers))
    for miss in catalog.skipped:
        console.print(f"[yellow]skipped {miss.folder}: {miss.reason}[/yellow]")


@command_group
def library_app() -> typer.Typer:
    """A fresh ``library_app`` Typer app (built per ``cli_app()``, never shared)."""
    app = typer.Typer(no_args_is_help=True, help="Inspect a service library.")
    app.command("stats")(stats)
    return app
