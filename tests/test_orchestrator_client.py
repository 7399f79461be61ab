"""The one orchestrator client (runner and trainer) against the real orchestrator app, in process."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator.api import FinishResponse
from orchestrator.backends import RemoteBackend
from orchestrator.client import OrchestratorClient, OrchestratorError
from orchestrator.errors import EpisodeConflict, EpisodeNotFound
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, task_update, write_library


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[OrchestratorClient]:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create(), task_update()])
    app, _ = build_embedded_app(tmp_path / "lib", Settings(), tmp_path / "tasks.jsonl")
    async with OrchestratorClient("http://cw", transport=httpx.ASGITransport(app=app)) as c:
        yield c


async def test_an_episode_runs_from_open_to_release_with_the_orchestrators_own_models(
    client: OrchestratorClient,
) -> None:
    opened = await client.open_episode("t-update", mode="direct", group_id="g1", rollout_idx=0)
    assert opened.task_id == "t-update" and opened.mcp_path.endswith("/mcp") and opened.max_steps > 0
    call = {
        "id": "c1",
        "name": "desk__updateContact",
        "arguments": '{"id": "con_000005", "status": "customer"}',
    }
    step = await client.step(opened.episode_id, [call], assistant_content="updating")
    assert step.results[0].tool_call_id == "c1" and json.loads(step.results[0].content)["success"] is True
    fin = await client.finish(opened.episode_id, "done")
    assert fin.complete and fin.importance() == [c.importance for c in fin.criteria]
    got = await client.group_reward(
        "g1", opened.episode_id, [c.passed for c in fin.criteria], expected_n=1, timeout_s=1.0
    )
    assert got.reward == 1.0 and got.group_complete
    traj = await client.trajectory(opened.episode_id)
    assert traj.messages[2]["content"] == "updating"
    assert (await client.release(opened.episode_id))["state"] == "finished"


async def test_failures_carry_the_http_status_and_the_backend_maps_them(client: OrchestratorClient) -> None:
    with pytest.raises(OrchestratorError) as err:
        await client.step("nope", [{"id": "c", "name": "x", "arguments": "{}"}])
    assert err.value.status == 404 and "unknown episode" in err.value.detail
    with pytest.raises(OrchestratorError, match="invalid request"):
        await client.open_episode("t-update", mode="telepathy")
    backend = RemoteBackend("http://cw")
    backend.client = client
    with pytest.raises(EpisodeNotFound):
        await backend.trajectory("nope")
    opened = await client.open_episode("t-create")
    await client.finish(opened.episode_id, "")
    with pytest.raises(EpisodeConflict):
        await backend.abort(opened.episode_id, "late")


async def test_an_unreachable_orchestrator_is_an_orchestrator_error() -> None:
    async with OrchestratorClient("http://127.0.0.1:9", timeout_s=2) as client:
        with pytest.raises(OrchestratorError) as err:
            await client.open_episode("t")
    assert err.value.status is None


def test_importance_comes_from_the_verdicts_then_the_row_then_ones(caplog: pytest.LogCaptureFixture) -> None:
    base = {"episode_id": "e", "score": 0.5, "complete": False, "state": "finished", "finish_reason": "x"}
    sent = FinishResponse.model_validate(
        {**base, "criteria": [{"id": "c0", "passed": True, "importance": 3.0}, {"id": "c1", "passed": False}]}
    )
    assert sent.importance([5.0, 5.0]) == [5.0, 5.0]  # not every verdict reports s_c: the row's
    full = FinishResponse.model_validate(
        {**base, "criteria": [{"id": "c0", "passed": True, "importance": 3.0}]}
    )
    assert full.importance([5.0]) == [3.0]  # the orchestrator's own wins
    legacy = FinishResponse.model_validate({**base, "criteria": [{"id": "c0", "passed": True}] * 3})
    assert legacy.importance(None) == [1.0, 1.0, 1.0]
    with caplog.at_level(logging.WARNING, logger="orchestrator.api"):
        assert legacy.importance([2.0]) == [1.0, 1.0, 1.0]
    assert "importance has 1 entries for 3 criteria" in caplog.text
