"""The trainer's client models read the orchestrator's own response models (orchestrator/api.py)."""

from __future__ import annotations

import logging

import pytest

from orchestrator.api import FinishResponse, OpenResponse, StepResponse, ToolMessage
from orchestrator.models import Verdict
from trainer.orchestrator_client import FinishResult, OpenedEpisode, StepResult


def _finish(passed: list[bool], importance: list[float] | None = None) -> FinishResult:
    weights = importance or [1.0] * len(passed)
    verdicts = [
        Verdict(id=f"c{i}", kind="row_exists", passed=p, importance=w)
        for i, (p, w) in enumerate(zip(passed, weights, strict=True))
    ]
    real = FinishResponse(
        episode_id="e",
        criteria=verdicts,
        score=0.75,
        complete=all(passed),
        state="finished",
        finish_reason="answered",
    )
    return FinishResult.model_validate_json(real.model_dump_json())


def test_finish_answer_of_the_orchestrator_parses_with_its_rubric_score() -> None:
    fin = _finish([True, False, True])
    assert [c.passed for c in fin.criteria] == [True, False, True]
    assert fin.score == 0.75 and fin.complete is False  # score: importance-weighted fraction, not 0/1
    assert fin.state == "finished" and fin.finish_reason == "answered"
    assert [c.importance for c in fin.criteria] == [1.0, 1.0, 1.0]  # each Verdict carries its s_c


def test_importance_comes_from_the_orchestrator_then_the_row_then_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert _finish([True, False, True], [2.0, 1.0, 1.0]).importance([5.0, 5.0, 5.0]) == [2.0, 1.0, 1.0]
    legacy = FinishResult.model_validate(  # an orchestrator that reports no s_c: the row's, else ones
        {
            "criteria": [{"id": f"c{i}", "passed": p} for i, p in enumerate([True, False, True])],
            "score": 0.75,
            "complete": False,
        }
    )
    assert legacy.importance([2.0, 1.0, 1.0]) == [2.0, 1.0, 1.0]
    assert legacy.importance(None) == [1.0, 1.0, 1.0]
    with caplog.at_level(logging.WARNING, logger="trainer.orchestrator_client"):
        assert legacy.importance([2.0]) == [1.0, 1.0, 1.0]
    assert "importance has 1 entries for 3 criteria" in caplog.text
    sent = FinishResult.model_validate(
        {
            "criteria": [{"id": "c0", "passed": True, "importance": 3.0}],
            "score": 1.0,
            "complete": True,
        }
    )
    assert sent.importance([5.0]) == [3.0]  # an orchestrator that reports s_c wins over the row


def test_open_and_step_answers_of_the_orchestrator_parse() -> None:
    opened = OpenResponse(
        episode_id="e",
        task_id="t",
        mode="gateway",
        messages=[{"role": "system", "content": "s"}],
        tools=[],
        max_steps=30,
        mcp_path="/episodes/e/mcp",
    )
    got = OpenedEpisode.model_validate_json(opened.model_dump_json())
    assert (got.episode_id, got.task_id, got.mode, got.max_steps) == ("e", "t", "gateway", 30)
    step = StepResponse(
        results=[ToolMessage(tool_call_id="call_0", name="list_services", content="{}")],
        done=True,
        state="finished",
        finish_reason="max_steps",
        steps_left=0,
    )
    parsed = StepResult.model_validate_json(step.model_dump_json())
    assert parsed.done and parsed.finish_reason == "max_steps" and parsed.steps_left == 0
    assert parsed.results[0].tool_call_id == "call_0"
