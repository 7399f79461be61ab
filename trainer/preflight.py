"""Checks grpo.sh runs before starting verl, so a run that would fail late fails at once, saying why.

    python -m trainer.preflight --train out/verl/train.parquet --val out/verl/val.parquet \
        --orchestrator http://127.0.0.1:8000

- both files exist and are different files;
- training rows name agent ``compo_agent`` and validation rows ``compo_agent_val`` (the group size
  a rollout waits for depends on it; see trainer/config/agent_loops.yaml);
- no task is in both splits (validation must be held out);
- the orchestrator answers and serves every task of both files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import pyarrow.parquet as pq
import typer

from compoworld.errors import CompoWorldError
from orchestrator.client import OrchestratorClient, OrchestratorError
from trainer.export_verl import AGENT_NAME, VALIDATION_AGENT_NAME

__all__ = ["PreflightError", "check_orchestrator", "check_splits"]


class PreflightError(CompoWorldError, ValueError):
    """A launch that cannot work as configured."""


def _rows(path: Path) -> tuple[set[str], list[str]]:
    if not path.is_file():
        raise PreflightError(f"{path} does not exist (write it with `compoworld export verl`)")
    table = pq.read_table(path, columns=["agent_name", "extra_info"])
    agents = set(table.column("agent_name").to_pylist())
    ids = [str(info["task_id"]) for info in table.column("extra_info").to_pylist()]
    return agents, ids


def check_splits(train: Path, val: Path) -> tuple[list[str], list[str]]:
    """The task ids of both files, once they pass the split checks (else PreflightError)."""
    if train.resolve() == val.resolve():
        raise PreflightError(
            f"the validation file is the training file ({train}): validate on held-out tasks "
            "(`compoworld tasks generate --split-services` then `export verl --split test --validation`)"
        )
    train_agents, train_ids = _rows(train)
    val_agents, val_ids = _rows(val)
    if train_agents != {AGENT_NAME}:
        raise PreflightError(
            f"{train}: training rows must name agent {AGENT_NAME!r}, found {sorted(train_agents)}"
        )
    if val_agents != {VALIDATION_AGENT_NAME}:
        raise PreflightError(
            f"{val}: validation rows must name agent {VALIDATION_AGENT_NAME!r} (found {sorted(val_agents)}), "
            "or every validation rollout waits for rollout.n siblings instead of val_kwargs.n; "
            "re-export with `compoworld export verl --validation`"
        )
    shared = sorted(set(train_ids) & set(val_ids))
    if shared:
        raise PreflightError(
            f"{len(shared)} tasks are in both splits (e.g. {shared[:3]}): validation is not held out"
        )
    return train_ids, val_ids


def check_orchestrator(url: str, task_ids: Sequence[str], timeout_s: float = 10.0) -> None:
    """The orchestrator at ``url`` answers ``GET /tasks`` and knows every id (else PreflightError)."""

    async def served_ids() -> list[str]:
        async with OrchestratorClient(url, timeout_s=timeout_s, connect_timeout_s=timeout_s) as client:
            return await client.task_ids()

    try:
        served = set(asyncio.run(served_ids()))
    except OrchestratorError as exc:
        raise PreflightError(
            f"the orchestrator at {url} does not answer GET /tasks ({exc}); start it with "
            "`compoworld up --tasks TASKS.jsonl` and set COMPOWORLD_ORCHESTRATOR_URL"
        ) from exc
    missing = sorted(set(task_ids) - served)
    if missing:
        raise PreflightError(
            f"the orchestrator at {url} does not serve {len(missing)} tasks of the data (e.g. {missing[:3]}); "
            "load the task file the parquet was exported from"
        )


def main(
    train: Annotated[Path, typer.Option(help="Training parquet (data.train_files).")],
    val: Annotated[Path, typer.Option(help="Validation parquet (data.val_files).")],
    orchestrator: Annotated[str, typer.Option(help="The orchestrator the agent loop will call.")],
) -> None:
    """Refuse a GRPO launch that would fail late (see the module docstring)."""
    try:
        train_ids, val_ids = check_splits(train, val)
        check_orchestrator(orchestrator, [*train_ids, *val_ids])
    except PreflightError as exc:
        typer.echo(f"preflight: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    typer.echo(
        f"preflight: {len(train_ids)} training and {len(val_ids)} held-out tasks, served by {orchestrator}"
    )


if __name__ == "__main__":
    typer.run(main)
