"""Tasks JSONL -> verl RL dataset rows (parquet), as verl 0.9.1's ``RLHFDataset`` reads them.

Each row names the registered agent loop (``compo_agent``) that plays the episode against the
orchestrator; the reward comes from the orchestrator's rubric, so ``reward_model.ground_truth``
is only the task id. The prompt is the orchestrator's own (``orchestrator.prompts.build_prompt``)
so the dataset and the served episode agree token for token.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from orchestrator.models import Task
from orchestrator.prompts import PromptMode, build_prompt
from trainer.prompt_budget import PromptBudget

__all__ = [
    "AGENT_NAME",
    "DATA_SOURCE",
    "VALIDATION_AGENT_NAME",
    "VERL_SCHEMA",
    "task_row",
    "write_verl_parquet",
]

DATA_SOURCE = "compoworld"
AGENT_NAME = "compo_agent"
VALIDATION_AGENT_NAME = "compo_agent_val"  # waits for val_kwargs.n siblings (trainer/config/agent_loops.yaml)
SplitFilter = Literal["all", "train", "test"]

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
VERL_SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", pa.list_(_MESSAGE)),
        ("agent_name", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        (
            "extra_info",
            pa.struct(
                [
                    ("index", pa.int64()),
                    ("task_id", pa.string()),
                    ("split", pa.string()),
                    ("need_tools_kwargs", pa.bool_()),
                    ("mode", pa.string()),
                    ("today", pa.string()),
                    ("services", pa.list_(pa.string())),
                    ("domain", pa.string()),
                    ("n_criteria", pa.int64()),
                    ("importance", pa.list_(pa.float64())),
                    ("library_version", pa.string()),
                ]
            ),
        ),
    ]
)


def task_row(
    task: Task, index: int, mode: PromptMode = "gateway", *, validation: bool = False
) -> dict[str, Any]:
    """One verl dataset row for ``task`` (a validation row names the agent that waits for val_kwargs.n)."""
    return {
        "data_source": DATA_SOURCE,
        "prompt": build_prompt(task, mode),
        "agent_name": VALIDATION_AGENT_NAME if validation else AGENT_NAME,
        "reward_model": {"style": "rule", "ground_truth": task.id},
        "extra_info": {
            "index": index,
            "task_id": task.id,
            "split": task.meta.split,
            "need_tools_kwargs": False,
            "mode": mode,
            "today": task.today,
            "services": list(task.services),
            "domain": task.meta.domain,
            "n_criteria": len(task.rubric),
            # s_c per criterion, in rubric order: the agent loop's reward weights (the finish
            # answer carries verdicts only; the row never reaches the model)
            "importance": [c.importance for c in task.rubric],
            "library_version": task.meta.library_version,
        },
    }


def write_verl_parquet(
    tasks: Iterable[Task],
    out: Path,
    *,
    mode: PromptMode = "gateway",
    split: SplitFilter = "all",
    validation: bool = False,
    budget: PromptBudget | None = None,
) -> int:
    """Write the rows of ``tasks`` (filtered by split) to ``out``; return the number of rows.

    Duplicate task ids are an error: the id is the reward's ground truth. With ``budget``, a task
    whose opening prompt (tool schemas included) exceeds it is refused before anything is written
    (``PromptTooLongError``): verl would truncate it silently.
    """
    rows: list[dict[str, Any]] = []
    kept: list[Task] = []
    seen: set[str] = set()
    for task in tasks:
        if split != "all" and task.meta.split != split:
            continue
        if task.id in seen:
            raise ValueError(f"duplicate task id {task.id!r}: ids must be unique in a verl dataset")
        seen.add(task.id)
        kept.append(task)
        rows.append(task_row(task, len(rows), mode, validation=validation))
    if not rows:
        raise ValueError(f"no tasks to export (split filter: {split})")
    if budget is not None:
        budget.check(kept, mode)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=VERL_SCHEMA), out)
    return len(rows)
