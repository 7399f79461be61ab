"""The recipe's data: a fixed task set split by archetype, and SFT records from oracle episodes.

Tasks come from the task generator (``orchestrator.tasks``) over the library, short walks only
(``min_len``..``max_len`` calls), so a tiny model can finish them. They are split into training
and held-out tasks of the *same archetypes* (the sorted capability labels of a task): a held-out
task is taken only for an archetype that already has a training task, and never more held-out
than training tasks per archetype. The SFT data is the real pipeline's: the oracle agent plays
the training tasks through the orchestrator over HTTP (``orchestrator.runner`` with a
``RemoteBackend``), and ``compoworld export sft``'s code turns the trajectories into records in
the published format, written to and read back from ``sft.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from compoworld.runtime import ServiceRuntime
from orchestrator.agents.base import Agent
from orchestrator.agents.oracle import OracleAgent
from orchestrator.backends import RemoteBackend
from orchestrator.models import DiscoverMode, Task
from orchestrator.runner import RunConfig, run_tasks
from trainer.export_sft import SftExportStats, read_sft_records, write_sft_jsonl
from trainer.sft_format import SftRecord
from trainer.smoke_env import SmokeSetupError

__all__ = ["TaskSplit", "archetype", "generate_recipe_tasks", "oracle_sft_records", "split_by_archetype"]


@dataclass(frozen=True)
class TaskSplit:
    """Training tasks (SFT data and GRPO) and held-out tasks of the same archetypes (reported only)."""

    train: list[Task]
    heldout: list[Task]


def archetype(task: Task) -> str:
    """A task's archetype: its capability labels, sorted and joined."""
    return "+".join(sorted(task.meta.capabilities)) or "plain"


def split_by_archetype(tasks: Sequence[Task], n_train: int, n_heldout: int) -> TaskSplit:
    """Walk ``tasks`` in order: a task is held out when its archetype has more training than held-out tasks."""
    train: list[Task] = []
    heldout: list[Task] = []
    n_tr: Counter[str] = Counter()
    n_ho: Counter[str] = Counter()
    for task in tasks:
        kind = archetype(task)
        if len(heldout) < n_heldout and n_tr[kind] > n_ho[kind]:
            heldout.append(task)
            n_ho[kind] += 1
        elif len(train) < n_train:
            train.append(task)
            n_tr[kind] += 1
    if len(train) < n_train or len(heldout) < n_heldout:
        raise SmokeSetupError(
            f"{len(tasks)} generated tasks give {len(train)} training and {len(heldout)} held-out tasks "
            f"of shared archetypes, fewer than the {n_train} + {n_heldout} asked for: generate more "
            "(--pool) or ask for fewer"
        )
    return TaskSplit(train=train, heldout=heldout)


def generate_recipe_tasks(
    runtimes: dict[str, ServiceRuntime], *, pool: int, seed: int, min_len: int, max_len: int
) -> list[Task]:
    """``pool`` verified short tasks from the task generator (offline: no paraphrasing)."""
    from orchestrator.tasks.generate import GenerateOptions, generate_tasks

    # one archetype per task (no chained workflows): scenarios short enough for a tiny policy
    options = GenerateOptions(
        n=pool, seed=seed, min_len=min_len, max_len=max_len, distractors=(0, 1), chain_rate=0.0
    )
    tasks, report = generate_tasks(runtimes, options)
    if not tasks:
        raise SmokeSetupError(
            f"the task generator made no task from {len(runtimes)} services (discarded: {report.failures})"
        )
    return list(tasks)


async def oracle_sft_records(
    url: str, tasks: Sequence[Task], out_dir: Path, *, mode: DiscoverMode = "gateway", progress: bool = False
) -> tuple[list[SftRecord], SftExportStats]:
    """Oracle trajectories of ``tasks`` over HTTP -> ``out_dir/sft.jsonl`` (published format) -> records."""
    trajectories = out_dir / "oracle_trajectories.jsonl"
    sft = out_dir / "sft.jsonl"
    backend = RemoteBackend(url)
    try:
        summary = await run_tasks(
            backend,
            cast(Agent, OracleAgent()),  # Agent declares label settable; the oracle's is read-only
            list(tasks),
            RunConfig(mode=mode, rollouts=1),
            trajectories,
            progress=progress,
        )
    finally:
        await backend.aclose()
    if summary.errors:
        raise SmokeSetupError(f"oracle episodes failed: {summary.errors[:3]}")
    write_sft_jsonl(trajectories, sft)
    records, stats = read_sft_records(sft)
    if not records:
        raise SmokeSetupError(f"the SFT export kept no oracle trajectory (dropped: {stats.dropped})")
    return records, stats
