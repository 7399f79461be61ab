"""An episode record as a trajectory in the published sample format (tools, messages, meta, source)."""

from __future__ import annotations

from typing import Any

from orchestrator.lifecycle import EpisodeRecord
from orchestrator.models import Trajectory, TrajectoryMeta

__all__ = ["to_trajectory"]


def to_trajectory(rec: EpisodeRecord, tools: list[dict[str, Any]]) -> Trajectory:
    """The trajectory so far (``tools``: the schemas the agent saw); verdicts once it has ended."""
    task = rec.task
    answered = rec.finish_reason == "answered"
    meta = TrajectoryMeta.model_validate(
        dict(
            task_id=task.id,
            rollout_idx=rec.rollout_idx,
            rubric_score=rec.score,
            score=1.0 if rec.complete else 0.0,
            n_tool_calls=rec.n_tool_calls,
            n_real_tool_calls=rec.n_real_tool_calls,
            n_steps=rec.n_steps + (1 if answered else 0),
            discover_mode=rec.mode,
            finish_reason=rec.finish_reason if rec.terminal else "",
            services=list(task.services),
            domain=task.meta.domain,
            capabilities=list(task.meta.capabilities),
            criteria=list(rec.verdicts),
            walk_length=len(task.gold_calls),
            library_version=task.meta.library_version or rec.library_version,
            # beyond the published fields (TrajectoryMeta allows extras):
            state=rec.state.value,
            seed=rec.seed,
            group_id=rec.group_id,
            distractors=list(task.distractors),
            environment_error=rec.environment_error,
        )
    )
    return Trajectory(tools=list(tools), messages=list(rec.messages), meta=meta, source=rec.source)
