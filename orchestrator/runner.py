"""Run tasks x rollouts with an agent at a given concurrency; write trajectories as JSONL.

The runner owns each episode's loop — open, ask the agent, step, … finish — so agents stay
small and any backend (in-process or a remote orchestrator) works the same. An agent that
fails (a model endpoint down after retries) aborts its episode with the reason; the run goes on.
Lines are appended as episodes end, then the file is rewritten sorted by (task, rollout).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from compoworld.errors import CompoWorldError
from compoworld.sanitize import dumps
from compoworld.seeding import derive_seed
from orchestrator.agents.base import Agent, Policy
from orchestrator.api import OpenRequest, StepRequest, ToolCall
from orchestrator.backends import EpisodeBackend
from orchestrator.client import OrchestratorError
from orchestrator.errors import EpisodeConflict, InvalidRequest
from orchestrator.models import DiscoverMode, Task, Trajectory

__all__ = ["RunConfig", "RunSummary", "episode_seed", "read_trajectories", "run_episode", "run_tasks"]

log = logging.getLogger(__name__)


@dataclass
class RunConfig:
    """How to run: exposure mode, rollouts per task, concurrency, limits, base seed."""

    mode: DiscoverMode = "direct"
    rollouts: int = 1
    concurrency: int = 8
    seed: int = 0
    max_steps: int | None = None
    max_wall_s: float | None = None


@dataclass
class RunSummary:
    """What a run produced."""

    out: Path
    episodes: int = 0
    complete: int = 0
    score_sum: float = 0.0
    errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def pass_rate(self) -> float:
        return self.complete / self.episodes if self.episodes else 0.0

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.episodes if self.episodes else 0.0


def episode_seed(base: int, task_id: str, rollout_idx: int) -> int:
    return derive_seed("rollout", base, task_id, rollout_idx) % (2**31)


async def run_episode(
    backend: EpisodeBackend, agent: Agent, task: Task, rollout_idx: int, cfg: RunConfig
) -> Trajectory:
    """One episode from open to release; returns its trajectory (agent stats merged into meta)."""
    seed = episode_seed(cfg.seed, task.id, rollout_idx)
    opened = await backend.open(
        OpenRequest(
            task=task,
            mode=cfg.mode,
            seed=seed,
            group_id=task.id,
            rollout_idx=rollout_idx,
            max_steps=cfg.max_steps,
            max_wall_s=cfg.max_wall_s,
            source=agent.label,
        )
    )
    eid = opened.episode_id
    policy = agent.start(task, opened, seed)
    messages = list(opened.messages)
    try:
        try:
            await _drive(backend, policy, eid, opened.max_steps, opened.tools, messages)
        except (
            EpisodeConflict
        ) as exc:  # the episode was closed under us (expired, timed out): keep what it has
            log.warning("episode %s: %s", task.id, exc)
        trajectory = await backend.trajectory(eid)
    finally:
        try:
            await backend.delete(eid)
        except CompoWorldError as exc:
            log.warning("episode %s: release failed: %s", task.id, exc)
    extra = trajectory.meta.model_extra
    if extra is not None:
        extra.update({k: v for k, v in getattr(policy, "stats", {}).items()})
    trajectory.source = agent.label
    return trajectory


async def _drive(
    backend: EpisodeBackend,
    policy: Policy,
    eid: str,
    max_steps: int,
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
) -> None:
    """The loop of one episode: ask the policy, step, until it answers or the episode ends."""
    for _ in range(max_steps + 1):
        try:
            action = await policy.act(messages, tools)
        except Exception as exc:  # the agent itself failed (model endpoint, bug): abort, keep going
            log.warning("episode %s: agent failed: %s", eid[:8], exc)
            await backend.abort(eid, f"error: {type(exc).__name__}: {exc}"[:500])
            return
        if action.final:
            await backend.finish(eid, action.content)
            return
        calls = [
            ToolCall(
                id=c.get("id") or f"call_{len(messages)}_{i}",
                name=str(c["name"]),
                arguments=c.get("arguments"),
            )
            for i, c in enumerate(action.tool_calls)
        ]
        assistant = {"content": action.content, **action.extra}
        try:
            step = await backend.step(eid, StepRequest(tool_calls=calls, assistant=assistant))
        except (InvalidRequest, OrchestratorError) as exc:  # a turn refused at the edge (bad text)
            if isinstance(exc, OrchestratorError) and exc.status not in (400, 413, 422):
                raise
            log.warning("episode %s: turn refused: %s", eid[:8], exc)
            await backend.abort(eid, f"error: turn refused: {exc}"[:500])
            return
        messages.append(
            {
                "role": "assistant",
                "content": action.content,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ],
            }
        )
        messages.extend({"role": "tool", **r.model_dump()} for r in step.results)
        if step.done:
            return


async def run_tasks(
    backend: EpisodeBackend,
    agent: Agent,
    tasks: list[Task],
    cfg: RunConfig,
    out: Path,
    *,
    progress: bool = True,
    on_done: Callable[[Trajectory], None] | None = None,
) -> RunSummary:
    """Every task x rollout, at most ``cfg.concurrency`` at once; trajectories to ``out`` (JSONL)."""
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    summary = RunSummary(out=out)
    order = {t.id: i for i, t in enumerate(tasks)}
    jobs = [(t, r) for t in tasks for r in range(cfg.rollouts)]
    gate = asyncio.Semaphore(max(1, cfg.concurrency))
    rows: list[tuple[int, int, str]] = []
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("pass {task.fields[rate]}"),
        disable=not progress,
    )
    with partial.open("w", encoding="utf-8") as sink, bar:
        handle = bar.add_task(f"{agent.name} ({cfg.mode})", total=len(jobs), rate="-")

        async def one(task: Task, rollout: int) -> None:
            async with gate:
                try:
                    traj = await run_episode(backend, agent, task, rollout, cfg)
                except Exception as exc:  # one broken episode is reported, the run goes on
                    log.debug("episode %s#%d failed", task.id, rollout, exc_info=True)
                    summary.errors.append(f"{task.id}#{rollout}: {type(exc).__name__}: {exc}")
                    bar.advance(handle)
                    return
            line = dumps(traj.model_dump(mode="json"))  # always writable: one bad line never ends the run
            sink.write(line + "\n")
            sink.flush()
            rows.append((order[task.id], rollout, line))
            summary.episodes += 1
            summary.complete += int(traj.meta.score >= 1.0)
            summary.score_sum += traj.meta.rubric_score
            bar.update(handle, advance=1, rate=f"{summary.pass_rate:.0%}")
            if on_done is not None:
                on_done(traj)

        await asyncio.gather(*(one(t, r) for t, r in jobs))
    out.write_text("".join(line + "\n" for _, _, line in sorted(rows)), encoding="utf-8")
    partial.unlink(missing_ok=True)
    summary.elapsed_s = time.perf_counter() - started
    return summary


def read_trajectories(path: Path) -> list[dict[str, Any]]:
    """Trajectory lines of a JSONL file (as dicts: reports read extra meta fields too)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
