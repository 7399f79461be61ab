"""The main job on the bundled starter library: the demo's files, oracle completes every task, noop none."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq

from compoworld.cli import trainer_exports
from compoworld.settings import Settings
from orchestrator.demo import run_demo


def test_demo_on_the_starter_library_writes_every_artifact(tmp_path: Path) -> None:
    rows = {
        step: (result, where)
        for step, result, where in run_demo(tmp_path, Settings(), n_tasks=12, seed=3, exports=trainer_exports)
    }
    oracle = [json.loads(line) for line in (tmp_path / "traj_oracle.jsonl").read_text().splitlines()]
    noop = [json.loads(line) for line in (tmp_path / "traj_noop.jsonl").read_text().splitlines()]
    assert len(oracle) == len(noop) == 12
    assert all(t["meta"]["score"] == 1.0 for t in oracle), "the oracle must complete every generated task"
    assert not any(t["meta"]["score"] == 1.0 for t in noop), "doing nothing must complete no task"
    assert {t["meta"]["discover_mode"] for t in oracle} == {"gateway"}
    assert sum(len(t["meta"]["services"]) >= 2 for t in oracle) >= 8
    assert (tmp_path / "report.png").stat().st_size > 10_000
    sft = datasets.load_dataset("json", data_files=str(tmp_path / "sft.jsonl"), split="train")
    assert len(sft) == 12 and "messages" in sft.column_names
    table = pq.read_table(tmp_path / "verl.parquet")
    assert table.num_rows == 12 and {"prompt", "agent_name", "reward_model", "extra_info"} <= set(
        table.column_names
    )
    assert "SFT export" in rows and "verl export" in rows
