"""``compoworld report TRAJ.jsonl``: pass rate, rubric score and per-criterion-kind pass rates,
broken down by agent, capability, domain, number of services and walk length — rich tables and a PNG.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["Breakdown", "ReportData", "plot_report", "report", "summarize", "tables"]

console = Console()
BREAKDOWNS = ("agent", "capability", "domain", "services", "walk_length")


@dataclass
class Cell:
    """Aggregates of one group of episodes."""

    episodes: int = 0
    complete: int = 0
    score_sum: float = 0.0

    def add(self, complete: bool, score: float) -> None:
        self.episodes += 1
        self.complete += int(complete)
        self.score_sum += score

    @property
    def pass_rate(self) -> float:
        return self.complete / self.episodes if self.episodes else 0.0

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.episodes if self.episodes else 0.0


@dataclass
class Breakdown:
    """One grouping: label -> aggregates."""

    name: str
    cells: dict[str, Cell] = field(default_factory=dict)

    def cell(self, label: str) -> Cell:
        return self.cells.setdefault(label, Cell())


@dataclass
class ReportData:
    """Everything a report shows."""

    total: Cell
    breakdowns: dict[str, Breakdown]
    criteria: dict[str, tuple[int, int]]  # kind -> (passed, total)


def _labels(name: str, row: dict[str, Any]) -> list[str]:
    meta = row.get("meta") or {}
    if name == "agent":
        return [str(row.get("source") or "unknown")]
    if name == "capability":
        return [str(c) for c in meta.get("capabilities") or []] or ["(none)"]
    if name == "domain":
        return [str(meta.get("domain") or "general")]
    if name == "services":
        return [str(len(meta.get("services") or []))]
    return [str(meta.get("walk_length", 0))]


def summarize(rows: list[dict[str, Any]]) -> ReportData:
    """Aggregate trajectory rows (dicts in the published format)."""
    total = Cell()
    breakdowns = {name: Breakdown(name) for name in BREAKDOWNS}
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        meta = row.get("meta") or {}
        complete = float(meta.get("score", 0.0)) >= 1.0
        score = float(meta.get("rubric_score", 0.0))
        total.add(complete, score)
        for name, bd in breakdowns.items():
            for label in _labels(name, row):
                bd.cell(label).add(complete, score)
        for verdict in meta.get("criteria") or []:
            counts = kinds[str(verdict.get("kind") or "?")]
            counts[0] += int(bool(verdict.get("passed")))
            counts[1] += 1
    criteria = {k: (v[0], v[1]) for k, v in sorted(kinds.items())}
    return ReportData(total, breakdowns, criteria)


def _sort_key(label: str) -> tuple[int, Any]:
    return (0, int(label)) if label.isdigit() else (1, label)


def tables(data: ReportData) -> list[Table]:
    """Rich tables: overall, per criterion kind, and one per breakdown."""
    overall = Table(title="Overall")
    for col in ("episodes", "pass rate", "mean rubric score"):
        overall.add_column(col)
    overall.add_row(str(data.total.episodes), f"{data.total.pass_rate:.1%}", f"{data.total.mean_score:.3f}")
    kinds = Table(title="Criteria by kind")
    for col in ("kind", "passed", "total", "pass rate"):
        kinds.add_column(col)
    for kind, (passed, n) in data.criteria.items():
        kinds.add_row(kind, str(passed), str(n), f"{passed / n:.1%}" if n else "-")
    out = [overall, kinds]
    for name, bd in data.breakdowns.items():
        table = Table(title=f"By {name.replace('_', ' ')}")
        for col in (name, "episodes", "pass rate", "mean rubric score"):
            table.add_column(col)
        for label in sorted(bd.cells, key=_sort_key):
            cell = bd.cells[label]
            table.add_row(label, str(cell.episodes), f"{cell.pass_rate:.1%}", f"{cell.mean_score:.3f}")
        out.append(table)
    return out


def plot_report(data: ReportData, path: Path, title: str = "") -> Path:
    """Six panels (criterion kinds + each breakdown): pass rate and mean rubric score as bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    panels: list[tuple[str, list[str], list[float], list[float]]] = []
    kinds = list(data.criteria)
    panels.append(("criterion kind", kinds, [p / n if n else 0.0 for p, n in data.criteria.values()], []))
    for name, bd in data.breakdowns.items():
        labels = sorted(bd.cells, key=_sort_key)
        panels.append(
            (
                name.replace("_", " "),
                labels,
                [bd.cells[x].pass_rate for x in labels],
                [bd.cells[x].mean_score for x in labels],
            )
        )
    for ax, (name, labels, rates, scores) in zip(axes.flat, panels, strict=False):
        xs = range(len(labels))
        width = 0.4 if scores else 0.7
        ax.bar([x - (width / 2 if scores else 0) for x in xs], rates, width=width, label="pass rate")
        if scores:
            ax.bar([x + width / 2 for x in xs], scores, width=width, label="mean rubric score")
        ax.set_title(f"by {name}")
        ax.set_ylim(0, 1.05)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([label[:18] for label in labels], rotation=30, ha="right", fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(
        title
        or f"{data.total.episodes} episodes: pass {data.total.pass_rate:.1%}, score {data.total.mean_score:.3f}"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def report(
    traj_file: Annotated[Path, typer.Argument(help="Trajectories (JSONL) from `compoworld run`.")],
    out_png: Annotated[Path | None, typer.Option("--out-png", help="Write the charts here (PNG).")] = None,
    quiet: Annotated[bool, typer.Option(help="Do not print the tables.")] = False,
) -> ReportData:
    """Pass rate, rubric score and per-criterion-kind pass rates, by agent, capability, domain, services, walk."""
    if not traj_file.is_file():
        console.print(f"[red]{traj_file} does not exist[/red]")
        raise typer.Exit(2)
    rows = []
    for lineno, line in enumerate(traj_file.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                console.print(f"[red]{traj_file}:{lineno}: not JSON ({exc.msg})[/red]")
                raise typer.Exit(2) from exc
    data = summarize(rows)
    if not quiet:
        for table in tables(data):
            console.print(table)
    if out_png is not None:
        plot_report(data, out_png, title=f"{traj_file.name}: {data.total.episodes} episodes")
        if not quiet:
            console.print(f"charts written to {out_png}")
    return data
