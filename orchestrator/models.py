"""Typed contracts of the task pipeline: tasks, gold calls, rubric criteria, verdicts, trajectories.

These are persisted as JSONL (tasks.jsonl, traj.jsonl) and cross every boundary between
task generation, the orchestrator, the agents and the trainer.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CriterionSpec",
    "GoldCall",
    "StepCondition",
    "Task",
    "TaskMeta",
    "Trajectory",
    "TrajectoryMeta",
    "Verdict",
    "WalkStep",
]

CriterionLabel = Literal["no_op_fail", "no_op_pass"]
DiscoverMode = Literal["direct", "gateway", "mcp"]


class GoldCall(BaseModel):
    """One call of the executed walk: replaying these on a fresh fork solves the task."""

    service: str = Field(description="Service the tool belongs to.")
    tool: str = Field(description="Tool name within the service.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments exactly as executed.")
    result: Any = Field(default=None, description="Envelope 'data' returned when the walk was executed.")


class StepCondition(BaseModel):
    """A branch of the walk: its step runs only if a value found upstream satisfies a comparison."""

    source: str = Field(description="'step:<i>:<field path>' of the value the condition tests.")
    op: Literal["eq", "ne", "gt", "lt"] = Field(
        description="Comparison of the upstream value with ``value``."
    )
    value: Any = Field(description="The value it is compared with (stated in the instruction).")
    taken: bool = Field(description="Whether the condition held when the walk was executed.")


class WalkStep(BaseModel):
    """One step of the random walk and where its arguments came from."""

    service: str = Field(description="Service of the step's tool.")
    tool: str = Field(description="Tool name.")
    bindings: dict[str, str] = Field(
        default_factory=dict,
        description="Argument -> provenance: 'step:<i>:<field path>' (from an earlier step) or 'seed' or 'literal'.",
    )
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="Arguments the step is called with; equal to its gold call's when executed.",
    )
    kind: Literal["read", "write"] = Field(
        default="read", description="Whether the step's tool changes state."
    )
    operation: str = Field(default="", description="The tool's operation (create, read, list, action...).")
    condition: StepCondition | None = Field(
        default=None, description="The branch condition guarding the step, if any."
    )
    executed: bool = Field(
        default=True,
        description="False for a conditional step whose condition did not hold (it has no gold call).",
    )


class CriterionSpec(BaseModel):
    """A serialised rubric criterion; ``kind`` names a registered criterion class."""

    id: str = Field(description="Stable id within the task (c0, c1...).")
    kind: str = Field(description="Registered criterion kind (row_exists, field_equals, row_absent, ...).")
    label: CriterionLabel = Field(
        description="no_op_fail: must fail if the agent does nothing; no_op_pass: a collateral guard."
    )
    service: str | None = Field(
        default=None, description="Service whose state it reads; None for answer checks."
    )
    params: dict[str, Any] = Field(default_factory=dict, description="Kind-specific parameters.")
    description: str = Field(default="", description="What it checks, in words.")
    importance: float = Field(default=1.0, description="Static importance s_c for the reward.")


class TaskMeta(BaseModel):
    """Provenance and labels of a task."""

    model_config = ConfigDict(extra="allow")

    walk: list[WalkStep] = Field(default_factory=list, description="The executed walk.")
    capabilities: list[str] = Field(default_factory=list, description="Capability labels.")
    domain: str = Field(default="general", description="Domain label.")
    scenario: list[str] = Field(
        default_factory=list, description="Workflow archetypes the task chains (notify, escalate...)."
    )
    vertical: str = Field(default="", description="Business vertical that frames it (finance ops...).")
    seed: int = Field(default=0, description="Generation seed.")
    split: str = Field(default="train", description="train | test (held-out services).")
    library_version: str = Field(
        default="", description="Hash of the library manifests the task was built on."
    )


class Task(BaseModel):
    """A cross-service task with its ground truth and rubric."""

    id: str = Field(description="Stable task id (derived from seed and index).")
    instruction: str = Field(description="What the user asks, without the values the agent must look up.")
    services: list[str] = Field(description="Services the task needs.")
    distractors: list[str] = Field(default_factory=list, description="Services mounted but not needed.")
    today: str = Field(description="Frozen date (YYYY-MM-DD) of the episode.")
    gold_calls: list[GoldCall] = Field(description="The executed walk's calls.")
    rubric: list[CriterionSpec] = Field(description="Criteria graded on the final state and the answer.")
    answer_keys: list[str] = Field(default_factory=list, description="Values the final answer must contain.")
    expected_state_hash: dict[str, str] = Field(
        default_factory=dict, description="Service -> state hash after replaying the gold calls."
    )
    meta: TaskMeta = Field(default_factory=TaskMeta, description="Walk, labels, seed.")


class Verdict(BaseModel):
    """One criterion's outcome for one episode."""

    id: str = Field(description="Criterion id.")
    kind: str = Field(default="", description="Criterion kind.")
    label: CriterionLabel = Field(default="no_op_fail", description="Criterion label.")
    passed: bool = Field(description="Whether the criterion held.")
    detail: str = Field(default="", description="Why, in words.")
    importance: float = Field(
        default=1.0, description="The criterion's static importance s_c (for the reward)."
    )


class TrajectoryMeta(BaseModel):
    """The published CompoWorld sample's meta block, plus per-criterion verdicts."""

    model_config = ConfigDict(extra="allow")

    task_id: str = Field(description="Task id.")
    rollout_idx: int = Field(default=0, description="Index of the rollout within its group.")
    rubric_score: float = Field(default=0.0, description="Importance-weighted fraction of criteria passed.")
    score: float = Field(default=0.0, description="1.0 if every criterion passed, else 0.0.")
    n_tool_calls: int = Field(default=0, description="All tool calls, meta-tools included.")
    n_real_tool_calls: int = Field(default=0, description="Calls that reached a service tool.")
    n_steps: int = Field(default=0, description="Assistant turns.")
    discover_mode: DiscoverMode = Field(default="direct", description="How tools were exposed.")
    finish_reason: str = Field(default="", description="answered | max_steps | timeout | error | aborted ...")
    services: list[str] = Field(default_factory=list, description="Services the task needed.")
    domain: str = Field(default="general", description="Domain label.")
    capabilities: list[str] = Field(default_factory=list, description="Capability labels.")
    criteria: list[Verdict] = Field(default_factory=list, description="Per-criterion verdicts.")
    walk_length: int = Field(default=0, description="Number of gold calls.")
    library_version: str = Field(default="", description="Library the episode ran on.")


class Trajectory(BaseModel):
    """One episode in the published sample format: tools, messages, meta, source."""

    tools: list[dict[str, Any]] = Field(description="OpenAI tool schemas the agent saw.")
    messages: list[dict[str, Any]] = Field(
        description="system, user, assistant (with tool_calls), tool messages."
    )
    meta: TrajectoryMeta = Field(description="Scores, counts and labels.")
    source: str = Field(default="", description="Who produced it: 'compoworld/<agent>[/<model>]'.")
