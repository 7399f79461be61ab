"""A per-rollout log, summarised per training step: rewards, completion, tool calls, environment aborts.

verl 0.9.1's training-step metrics are computed from a fixed set of batch fields (scores, lengths,
turns); nothing an agent loop attaches reaches them. So ``compo_agent`` appends one JSON line per
rollout to ``<dir>/rollouts-<host>-<pid>.jsonl`` (one file per worker process: no interleaving),
with the step verl passes to the loop (``global_steps``, v1 trainer), and

    python -m trainer.rollout_log DIR          # a table per step (--json for JSON lines)

folds them into the per-step view: rollouts, reward mean, completion rate, tool calls, and the
rollouts the environment aborted (masked out of the loss). The torch recipe writes the same
fields in its own per-step log.
"""

from __future__ import annotations

import os
import socket
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, Field, ValidationError
from rich.console import Console
from rich.table import Table

__all__ = ["RolloutRecord", "StepSummary", "append_rollout", "read_rollouts", "summarize"]


class RolloutRecord(BaseModel):
    """One rollout's outcome."""

    step: int | None = Field(default=None, description="verl's global step (None: not passed to the loop).")
    validation: bool = Field(default=False, description="A validation rollout.")
    group_id: str = Field(default="", description="verl's uid: the GRPO group.")
    task_id: str = Field(default="", description="Task played.")
    rollout_idx: int = Field(default=0, description="Rollout within the group.")
    episode_id: str = Field(default="", description="Orchestrator episode.")
    reward: float = Field(default=0.0, description="Group reward r_i.")
    completion: float = Field(default=0.0, description="C_i: 1.0 when every criterion passed.")
    tool_calls: int = Field(default=0, description="Tool calls sent to the orchestrator.")
    dropped_calls: int = Field(default=0, description="Calls beyond max_parallel_calls, never run.")
    response_tokens: int = Field(default=0, description="Response tokens (generated + observations).")
    trained_tokens: int = Field(default=0, description="Tokens left in the loss (0 when aborted).")
    aborted: bool = Field(default=False, description="The environment ended the rollout (masked).")
    abort_reason: str = Field(default="", description="Why, when aborted.")
    time: float = Field(default_factory=time.time, description="Unix time of the record.")


class StepSummary(BaseModel):
    """The rollouts of one step (and split), folded."""

    step: int | None
    validation: bool
    rollouts: int
    reward_mean: float
    completion_rate: float
    tool_calls_mean: float
    env_aborted: int
    dropped_calls: int


def append_rollout(directory: Path, record: RolloutRecord) -> None:
    """Append ``record`` to this process's file under ``directory`` (created when missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"rollouts-{socket.gethostname()}-{os.getpid()}.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")


def read_rollouts(directory: Path) -> list[RolloutRecord]:
    """Every record under ``directory``; a line that is not a record is an error naming it."""
    records: list[RolloutRecord] = []
    for path in sorted(directory.glob("rollouts-*.jsonl")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(RolloutRecord.model_validate_json(line))
            except ValidationError as exc:
                raise ValueError(f"{path}:{lineno}: not a rollout record: {exc}") from exc
    return records


def summarize(records: Iterable[RolloutRecord]) -> list[StepSummary]:
    """One summary per (step, validation), in step order."""
    groups: dict[tuple[int, bool], list[RolloutRecord]] = defaultdict(list)
    for rec in records:
        groups[(rec.step if rec.step is not None else -1, rec.validation)].append(rec)
    out = []
    for (step, validation), recs in sorted(groups.items()):
        n = len(recs)
        out.append(
            StepSummary(
                step=None if step < 0 else step,
                validation=validation,
                rollouts=n,
                reward_mean=sum(r.reward for r in recs) / n,
                completion_rate=sum(r.completion for r in recs) / n,
                tool_calls_mean=sum(r.tool_calls for r in recs) / n,
                env_aborted=sum(r.aborted for r in recs),
                dropped_calls=sum(r.dropped_calls for r in recs),
            )
        )
    return out


def main(
    directory: Annotated[Path, typer.Argument(exists=True, file_okay=False, help="The rollout log folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table.")] = False,
) -> None:
    """Print the per-step summary of a rollout log folder."""
    try:
        steps = summarize(read_rollouts(directory))
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    if as_json:
        for s in steps:
            typer.echo(s.model_dump_json())
        return
    table = Table(title=f"rollouts per step ({directory})")
    for col in ("step", "split", "rollouts", "reward", "complete", "tool calls", "env aborted", "dropped"):
        table.add_column(col, justify="right")
    for s in steps:
        table.add_row(
            "-" if s.step is None else str(s.step),
            "val" if s.validation else "train",
            str(s.rollouts),
            f"{s.reward_mean:.3f}",
            f"{s.completion_rate:.2f}",
            f"{s.tool_calls_mean:.1f}",
            str(s.env_aborted),
            str(s.dropped_calls),
        )
    Console().print(table)


if __name__ == "__main__":
    typer.run(main)
