"""Request and response bodies of the episode API (typed contracts at the HTTP boundary)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.models import DiscoverMode, Task, Verdict

__all__ = [
    "ENVIRONMENT_ERROR_CODES",
    "AbortRequest",
    "ErrorBody",
    "FinishRequest",
    "FinishResponse",
    "OpenRequest",
    "OpenResponse",
    "StepRequest",
    "StepResponse",
    "ToolCall",
    "ToolMessage",
    "error_responses",
]

log = logging.getLogger(__name__)


# Tool-result error codes that are the environment's failure, never the policy's: a service that
# did not answer, or the episode's state gone from a service. A trainer masks such a rollout out
# of the loss instead of punishing it (DESIGN.md, Completion-Focused Rubric Reward).
ENVIRONMENT_ERROR_CODES = frozenset({"service_unavailable", "episode_gone"})


class ErrorBody(BaseModel):
    """Every error the orchestrator answers: a message, or FastAPI's list of validation errors."""

    detail: str | list[dict[str, Any]] = Field(
        description="What was wrong: a message, or (a body that does not fit its schema) one entry "
        "per problem with its location (loc), message (msg) and type."
    )
    code: str | None = Field(
        default=None, description="A refused body's reason (invalid_json, payload_too_large...)."
    )


_REASONS = {
    400: "Refused body (not clean JSON: invalid_json, too deep, not finite) or a request that cannot be served",
    401: "Admin token required",
    404: "Unknown episode, task or service",
    409: "The episode's state (or a loaded task) forbids the request",
    413: "Body too large, or a turn past the episode's trajectory budget",
    422: "Body does not fit its schema, or names something the orchestrator cannot act on",
    503: "At capacity, or a service did not answer",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route that can answer these error statuses, each with ``ErrorBody``
    (what ``_answer``, ``BodyGuard`` and FastAPI's validation answer), for its OpenAPI."""
    return {s: {"model": ErrorBody, "description": _REASONS[s]} for s in statuses}


class OpenRequest(BaseModel):
    """Body of ``POST /episodes``: a task inline or by id, and how to expose its tools."""

    # "exactly one of task, task_id, services" (``_one_task``) said in the schema too, so a client
    # or a fuzzer reading /openapi.json knows it: one branch per field, present and not null
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
                for name in ("task", "task_id", "services")
            ]
        },
    )

    task: Task | None = Field(default=None, description="The task inline.")
    task_id: str | None = Field(default=None, description="Id of a task from the loaded task files.")
    services: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="No task: an episode over these services only (state forked in each, nothing graded), "
        "e.g. to call their routes by hand with the episode id as X-Episode-Id.",
    )
    mode: DiscoverMode = Field(default="direct", description="direct | gateway | mcp.")
    seed: int = Field(
        default=0, description="Orders services and tools; agents derive their randomness from it."
    )
    group_id: str | None = Field(
        default=None,
        max_length=256,
        description="RL group (all rollouts of one prompt, e.g. verl's uid); the group board counts the "
        "group's opened rollouts, and the episode reports to this group only.",
    )
    rollout_idx: int = Field(default=0, ge=0, description="Index of the rollout within its group.")
    max_steps: int | None = Field(
        default=None, ge=1, le=1000, description="Tool-calling turns before termination."
    )
    max_wall_s: float | None = Field(
        default=None,
        gt=0,
        le=86400.0,
        description="Wall-clock limit of the episode in seconds (at most a day).",
    )
    source: str | None = Field(
        default=None, description="Who drives the episode, e.g. 'compoworld/openai/qwen3'."
    )

    @model_validator(mode="after")
    def _one_task(self) -> OpenRequest:
        if sum(x is not None for x in (self.task, self.task_id, self.services)) != 1:
            raise ValueError("give exactly one of 'task' (inline), 'task_id' or 'services'")
        return self


class OpenResponse(BaseModel):
    """What an agent starts from: its messages and tools (nothing of the grader's view)."""

    episode_id: str = Field(description="Unguessable capability: whoever holds it drives the episode.")
    task_id: str = Field(description="Task id.")
    mode: DiscoverMode = Field(description="How tools are exposed.")
    messages: list[dict[str, Any]] = Field(description="system + user messages.")
    tools: list[dict[str, Any]] = Field(description="OpenAI function schemas the agent may call.")
    max_steps: int = Field(description="Tool-calling turns allowed.")
    mcp_path: str = Field(description="Path of this episode's MCP endpoint (streamable HTTP).")


class ToolCall(BaseModel):
    """One tool call of an assistant turn (OpenAI shape, flattened)."""

    model_config = ConfigDict(extra="ignore")

    id: str | None = Field(default=None, description="Call id; generated if missing.")
    name: str = Field(description="Exposed tool name.")
    arguments: Any = Field(default=None, description="A JSON object, or a string holding one.")

    @model_validator(mode="before")
    @classmethod
    def _openai_shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and "function" in data and "name" not in data:
            fn = data.get("function") or {}
            return {"id": data.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")}
        return data


class StepRequest(BaseModel):
    """Body of ``POST /episodes/{id}/step``: one assistant turn's tool calls."""

    tool_calls: list[ToolCall] = Field(min_length=1, max_length=64, description="Calls, run in order.")
    assistant: dict[str, Any] | None = Field(
        default=None, description="The assistant turn's other fields (content)."
    )
    step_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="Idempotency key of this turn: a retry with the latest turn's id gets that turn's "
        "answer again instead of running its calls twice (e.g. after a replica died mid-request).",
    )


class ToolMessage(BaseModel):
    """One tool message: a tool result's envelope as a JSON string (what the agent reads)."""

    tool_call_id: str = Field(description="Id of the call it answers.")
    name: str = Field(description="Exposed tool name.")
    content: str = Field(description="JSON text of the result.")


class StepResponse(BaseModel):
    """Results of one turn and whether the episode is over."""

    results: list[ToolMessage] = Field(description="One per call, in order.")
    done: bool = Field(description="True once the episode no longer accepts calls.")
    state: str = Field(description="open | running | finished | aborted | expired.")
    finish_reason: str = Field(default="", description="Why it ended, when done.")
    steps_left: int = Field(description="Tool-calling turns left.")
    environment_error: str = Field(
        default="",
        description="Why the environment (not the agent) failed this episode, once it has: a call "
        "answered with one of ENVIRONMENT_ERROR_CODES, or grading that could not read a service.",
    )


class FinishRequest(BaseModel):
    """Body of ``POST /episodes/{id}/finish``."""

    answer: str = Field(default="", max_length=100_000, description="The agent's final answer.")


class AbortRequest(BaseModel):
    """Body of ``POST /episodes/{id}/abort``: the driver gives up (all criteria count as failed)."""

    reason: str = Field(
        default="aborted", max_length=500, description="Why, e.g. 'error: model endpoint failed'."
    )


class FinishResponse(BaseModel):
    """The grade of a finished episode."""

    episode_id: str = Field(description="Episode id.")
    criteria: list[Verdict] = Field(description="Per-criterion verdicts.")
    score: float = Field(description="Rubric score: importance-weighted fraction of criteria passed.")
    complete: bool = Field(description="Every criterion passed.")
    state: str = Field(description="finished | aborted.")
    finish_reason: str = Field(description="answered | max_steps | timeout | aborted ...")
    environment_error: str = Field(
        default="", description="Why the environment failed this episode (see StepResponse)."
    )

    def importance(self, fallback: list[float] | None = None) -> list[float]:
        """s_c per criterion: as each verdict reports it, else ``fallback`` (one per criterion), else 1 each.

        An orchestrator older than the verdicts' ``importance`` field sends none; the trainer then
        falls back to the task's rubric importance from its data row.
        """
        if all("importance" in v.model_fields_set for v in self.criteria):
            return [float(v.importance) for v in self.criteria]
        if fallback is not None and len(fallback) == len(self.criteria):
            return [float(x) for x in fallback]
        if fallback is not None:
            log.warning(
                "importance has %d entries for %d criteria; using 1 each", len(fallback), len(self.criteria)
            )
        return [1.0] * len(self.criteria)
