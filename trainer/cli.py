"""``compoworld export sft|verl``: the trainer's datasets from trajectories and tasks.

``export_app`` builds a fresh typer app (a ``@command_group``); ``compoworld/cli.py`` mounts it as ``compoworld export``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from compoworld.commands import command_group
from compoworld.errors import CompoWorldError
from orchestrator.models import Task
from orchestrator.prompts import PromptMode
from orchestrator.tasksource import read_tasks
from trainer.export_sft import (
    DROP_REASONS,
    SftExportStats,
    load_chat_tokenizer,
    read_sft_records,
    write_sft_jsonl,
)
from trainer.export_verl import SplitFilter, write_verl_parquet
from trainer.prompt_budget import PromptBudget, library_schemas
from trainer.sft_parquet import write_sft_parquet
from trainer.tokenizer import build_qwen_tokenizer

__all__ = ["export_app"]


def _stats_table(stats: SftExportStats) -> Table:
    table = Table(title="SFT export")
    table.add_column("outcome")
    table.add_column("records", justify="right")
    table.add_column("why")
    table.add_row("kept", str(stats.kept), "verified, well-formed, distinct")
    for reason, count in stats.dropped.items():
        table.add_row(f"dropped: {reason}", str(count), DROP_REASONS.get(reason, ""))
    table.add_row("read", str(stats.read), "")
    return table


def sft(
    trajectories: Annotated[
        Path,
        typer.Argument(
            exists=True, dir_okay=False, help="Trajectories JSONL, or records in the published SFT format."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output file.")],
    library_version: Annotated[
        str | None,
        typer.Option(help="Keep only episodes run on this library version (meta.library_version)."),
    ] = None,
    tokenizer: Annotated[
        Path | None,
        typer.Option(
            help="Local tokenizer folder: also render each record with its chat template into 'text' (jsonl)."
        ),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl: the published CompoWorld SFT format | verl-parquet: verl's multi-turn SFT dataset.",
        ),
    ] = "jsonl",
) -> None:
    """Keep verified trajectories only, as SFT records in the published format (or verl's parquet)."""
    console = Console(soft_wrap=True)
    if fmt not in ("jsonl", "verl-parquet"):
        console.print(f"[red]error:[/red] --format must be jsonl or verl-parquet, not {fmt!r}")
        raise typer.Exit(code=2)
    if fmt == "verl-parquet":
        if tokenizer is not None:
            console.print("[red]error:[/red] --tokenizer renders 'text' into jsonl records only")
            raise typer.Exit(code=2)
        records, stats = read_sft_records(trajectories, library_version=library_version)
        console.print(_stats_table(stats))
        try:
            n = write_sft_parquet(records, out)
        except ValueError as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(code=1) from exc
        console.print(f"wrote {n} verl SFT rows to {out}")
        return
    try:
        tok = load_chat_tokenizer(tokenizer) if tokenizer is not None else None
    except (RuntimeError, ValueError, OSError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from exc
    stats = write_sft_jsonl(trajectories, out, library_version=library_version, tokenizer=tok)
    console.print(_stats_table(stats))
    console.print(f"wrote {stats.kept} records to {out}")


def verl(
    tasks: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Tasks JSONL.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output parquet file.")],
    mode: Annotated[
        str,
        typer.Option(
            help="How tools are exposed: gateway (4 meta-tools; fits any context) | direct (every schema) | mcp."
        ),
    ] = "gateway",
    split: Annotated[str, typer.Option(help="Which tasks to export: all | train | test.")] = "all",
    validation: Annotated[
        bool,
        typer.Option(
            "--validation",
            help="Rows for data.val_files: agent compo_agent_val, which waits for val_kwargs.n siblings.",
        ),
    ] = False,
    max_prompt_length: Annotated[
        int,
        typer.Option(
            min=0,
            help="direct/mcp: refuse the export if an episode's prompt (tool schemas included) exceeds "
            "this many tokens, as data.max_prompt_length; 0 skips the check.",
        ),
    ] = 8192,
    library: Annotated[
        Path | None,
        typer.Option(help="direct/mcp: the library serving the tasks' tools (default: Settings().library)."),
    ] = None,
    tokenizer: Annotated[
        Path | None,
        typer.Option(
            help="direct/mcp: local tokenizer folder that counts prompt tokens (default: Qwen's vocabulary, "
            "the smoke extra)."
        ),
    ] = None,
) -> None:
    """Write verl RL dataset rows (agent_name compo_agent, or compo_agent_val) for the tasks."""
    console = Console(soft_wrap=True)
    if mode not in ("direct", "gateway", "mcp"):
        console.print(f"[red]error:[/red] --mode must be direct, gateway or mcp, not {mode!r}")
        raise typer.Exit(code=2)
    if split not in ("all", "train", "test"):
        console.print(f"[red]error:[/red] --split must be all, train or test, not {split!r}")
        raise typer.Exit(code=2)
    prompt_mode: PromptMode = mode  # type: ignore[assignment]
    split_filter: SplitFilter = split  # type: ignore[assignment]
    try:
        task_list = read_tasks(tasks)
        budget = None
        if mode != "gateway" and max_prompt_length > 0:
            budget = _prompt_budget(task_list, max_prompt_length, library, tokenizer)
        n = write_verl_parquet(
            task_list, out, mode=prompt_mode, split=split_filter, validation=validation, budget=budget
        )
    except (CompoWorldError, ValueError, RuntimeError, OSError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=1) from exc
    console.print(f"wrote {n} verl rows to {out}")
    if budget is not None:
        console.print(
            f"every {mode}-mode prompt fits {max_prompt_length} tokens (tool schemas included); pass the "
            "same value as data.max_prompt_length"
        )


def _prompt_budget(
    tasks: list[Task], limit: int, library: Path | None, tokenizer: Path | None
) -> PromptBudget:
    """What measures direct/mcp prompts: the tasks' tool schemas and a tokenizer with a chat template."""
    from compoworld.settings import Settings

    root = library if library is not None else Settings().library
    services = [s for t in tasks for s in (*t.services, *t.distractors)]
    tok = load_chat_tokenizer(tokenizer) if tokenizer is not None else build_qwen_tokenizer()
    return PromptBudget(limit=limit, tokenizer=tok, schemas=library_schemas(root, services))


@command_group
def export_app() -> typer.Typer:
    """A fresh ``export_app`` Typer app (built per ``cli_app()``, never shared)."""
    app = typer.Typer(
        name="export", help="Export SFT chat records and verl RL datasets.", no_args_is_help=True
    )
    app.command("sft")(sft)
    app.command("verl")(verl)
    return app
