"""``compoworld build``: spec files in, verified service folders out (registered by ``compoworld/cli.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from compoworld.synth.build import BuildReport, build_library, check_rendered

__all__ = ["build", "expand_specs", "service_folders"]

_SPEC_SUFFIXES = (".json", ".yaml", ".yml")


def expand_specs(paths: list[Path]) -> list[Path]:
    """Spec files named directly, plus every JSON/YAML file under named folders (sorted)."""
    out: set[Path] = set()
    for path in paths:
        if path.is_dir():
            out.update(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _SPEC_SUFFIXES)
        else:
            out.add(path)
    return sorted(out, key=str)


def service_folders(paths: list[Path]) -> list[Path]:
    """Service folders named directly, or found one level under a library folder."""
    out: set[Path] = set()
    for path in paths:
        if (path / "spec.json").exists():
            out.add(path)
        elif path.is_dir():
            out.update(p.parent for p in path.glob("*/spec.json"))
    return sorted(out, key=str)


def _table(report: BuildReport) -> Table:
    table = Table(title="compoworld build")
    for column in (
        "service",
        "kind",
        "tools",
        "implemented",
        "share",
        "entities",
        "rows",
        "verified",
        "notes",
    ):
        table.add_column(
            column, justify="right" if column in ("tools", "implemented", "share", "rows") else "left"
        )
    for r in report.services:
        notes = "; ".join(
            [
                *r.errors,
                *([f"{len(r.defects)} defective operations left out"] if r.defects else []),
                *([f"{len(r.failed_checks)} tools fail their checks (simulated)"] if r.failed_checks else []),
                *(f"{k}: simulated after verify" for k in r.switched_to_simulated),
            ]
        )
        verified = "-" if r.verified is None else ("yes" if r.verified else "no")
        table.add_row(
            r.name,
            r.source_kind,
            str(r.tools),
            str(r.implemented),
            f"{r.implemented_share:.0%}",
            str(r.entities),
            str(r.rows),
            verified,
            notes[:120],
        )
    return table


def _check(paths: list[Path], console: Console) -> None:
    folders = service_folders(paths)
    if not folders:
        console.print("[red]no service folders (with spec.json) found[/red]")
        raise typer.Exit(2)
    dirty = 0
    for folder in folders:
        differences = check_rendered(folder)
        if differences:
            dirty += 1
            console.print(f"[red]{folder.name}[/red]: differs from a fresh render: {', '.join(differences)}")
    console.print(f"{len(folders) - dirty} of {len(folders)} service folders match a fresh render")
    if dirty:
        raise typer.Exit(1)


def build(
    specs: Annotated[
        list[Path], typer.Argument(help="Spec files (OpenAPI, Swagger, MCP, functions) or folders.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Library folder to write services into.")] = Path(
        "generated_services"
    ),
    name: Annotated[str | None, typer.Option(help="Service name (only with a single spec).")] = None,
    verify: Annotated[bool, typer.Option("--verify/--no-verify", help="Run the conformance checks.")] = True,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Re-render the given service folders from spec.json; report differences."
        ),
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Write the build report as JSON here.")] = None,
    strict: Annotated[bool, typer.Option(help="Exit with 1 when any spec failed.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Build verified service folders from specification files."""
    console = Console()
    if check:
        _check(specs, console)
        return
    paths = expand_specs(specs)
    if not paths:
        console.print("[red]no spec files given[/red]")
        raise typer.Exit(2)
    if name is not None and len(paths) != 1:
        console.print("[red]--name needs exactly one spec[/red]")
        raise typer.Exit(2)
    names = {str(paths[0]): name} if name else None
    result = build_library(paths, out, progress=not quiet, verify=verify, names=names)
    console.print(_table(result))
    for failure in result.failures:
        console.print(f"[red]failed[/red] {failure.spec_path}: {failure.error}")
    for service in result.services:
        for defect in service.defects:
            console.print(f"[yellow]left out[/yellow] {defect}")
        for tool, why in service.failed_checks.items():
            console.print(f"[yellow]unverified[/yellow] {service.name}.{tool} (simulated): {why[:160]}")
    console.print(
        f"{len(result.services)} services, {result.tools} tools, "
        f"{result.implemented} implemented ({result.implemented_share:.1%}), {len(result.failures)} failed specs"
    )
    if report is not None:
        report.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if strict and result.failures:
        raise typer.Exit(1)
