"""The oracle, noop and random agents through the runner (in-process orchestrator), in direct and gateway mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compoworld.registry import RegistryError
from compoworld.settings import Settings
from orchestrator.agents import Action, create_agent, register
from orchestrator.api import OpenResponse
from orchestrator.episodes import Orchestrator
from orchestrator.models import Task
from orchestrator.runner import RunConfig, run_episode, run_tasks
from tests.orchestrator_fixture import runtimes, task_create, task_update


@pytest.fixture
def orch(tmp_path: Path) -> Orchestrator:
    return Orchestrator.embedded(runtimes(tmp_path), Settings())


@pytest.mark.parametrize("mode", ["direct", "gateway", "mcp"])
async def test_the_oracle_completes_every_task_and_noop_completes_none(
    orch: Orchestrator, tmp_path: Path, mode: str
) -> None:
    tasks = [task_create(), task_update()]
    cfg = RunConfig(mode=mode, rollouts=2, concurrency=4)  # type: ignore[arg-type]
    oracle = await run_tasks(
        orch, create_agent("oracle"), tasks, cfg, tmp_path / "oracle.jsonl", progress=False
    )
    assert oracle.episodes == 4 and oracle.complete == 4 and oracle.errors == []
    noop = await run_tasks(orch, create_agent("noop"), tasks, cfg, tmp_path / "noop.jsonl", progress=False)
    assert noop.episodes == 4 and noop.complete == 0
    rows = [json.loads(line) for line in (tmp_path / "oracle.jsonl").read_text().splitlines()]
    assert [(r["meta"]["task_id"], r["meta"]["rollout_idx"]) for r in rows] == [
        ("t-create", 0),
        ("t-create", 1),
        ("t-update", 0),
        ("t-update", 1),
    ]
    assert rows[0]["source"] == "compoworld/oracle" and rows[0]["messages"][-1]["content"].endswith(
        "con_000031"
    )
    assert not (tmp_path / "oracle.jsonl.partial").exists()
    assert await orch.store.count_live() == 0 and await orch.store.ids() == []  # every episode released


async def test_the_random_agent_is_reproducible_from_its_seed(orch: Orchestrator) -> None:
    agent = create_agent("random", max_turns=6)
    for mode in ("direct", "gateway"):
        cfg = RunConfig(mode=mode, seed=11)  # type: ignore[arg-type]
        first = await run_episode(orch, agent, task_update(), 0, cfg)
        second = await run_episode(orch, agent, task_update(), 0, cfg)
        assert first.messages == second.messages
        assert first.meta.n_tool_calls >= 1
        other = await run_episode(orch, agent, task_update(), 0, RunConfig(mode=mode, seed=12))  # type: ignore[arg-type]
        assert other.messages != first.messages
    reached = [
        (
            await run_episode(orch, agent, task_update(), 0, RunConfig(mode="gateway", seed=s))
        ).meta.n_real_tool_calls
        for s in range(6)
    ]
    assert max(reached) >= 1, "random gateway exploration never reached a service tool"


class _Chatterbox:
    """An agent that never stops calling tools."""

    name = "chatterbox"
    label = "test/chatterbox"

    class _Policy:
        stats: dict[str, Any] = {"turns": 0}

        async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Action:
            self.stats["turns"] += 1
            return Action(tool_calls=[{"name": tools[0]["function"]["name"], "arguments": {}}])

    def start(self, task: Task, episode: OpenResponse, seed: int) -> _Chatterbox._Policy:
        return self._Policy()

    async def aclose(self) -> None:
        return None


async def test_an_agent_that_never_stops_ends_at_max_steps(orch: Orchestrator) -> None:
    register("chatterbox", "tests.test_agents_baselines:_Chatterbox")  # again: the same entry, harmless
    register("chatterbox", "tests.test_agents_baselines:_Chatterbox")
    agent = create_agent("chatterbox")
    traj = await run_episode(orch, agent, task_create(), 0, RunConfig(max_steps=4))
    assert traj.meta.finish_reason == "max_steps" and traj.meta.n_steps == 4
    assert traj.meta.model_extra is not None and traj.meta.model_extra["turns"] == 4
    assert traj.source == "test/chatterbox"


def test_unknown_agents_and_targets_are_refused() -> None:
    with pytest.raises(RegistryError, match="unknown agent 'nope'"):
        create_agent("nope")
    with pytest.raises(RegistryError, match=r"package\.module:attr"):
        register("bad", "no_colon_here")
    with pytest.raises(RegistryError, match="already registered"):
        register("oracle", "orchestrator.agents.noop:NoopAgent")
    with pytest.raises(ValueError, match=r"agent 'oracle' does not take option\(s\) model"):
        create_agent("oracle", model="m", seed=None)
    with pytest.raises(ValueError, match="--base-url"):
        create_agent("openai")
