"""Async HTTP client for the orchestrator endpoints a trainer rollout uses.

One rollout = open an episode, step each assistant turn's tool calls, finish it for the rubric
verdicts, release it, then ask the group board for the reward. Every request has a timeout; any
transport error, timeout or non-2xx answer becomes an ``OrchestratorError`` (an infrastructure
failure, never a tool result), so a dead orchestrator ends a rollout instead of hanging it.

The models mirror ``orchestrator/api.py`` (``OpenResponse``, ``StepResponse``, ``FinishResponse``)
and ``orchestrator/groups.py``; they accept extra fields so the orchestrator can add some.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

import httpx
from pydantic import BaseModel, Field, ValidationError

from compoworld.errors import CompoWorldError

__all__ = [
    "CriterionResult",
    "FinishResult",
    "GroupReward",
    "OpenedEpisode",
    "OrchestratorClient",
    "OrchestratorError",
    "StepResult",
    "ToolResult",
]

logger = logging.getLogger(__name__)


class OrchestratorError(CompoWorldError):
    """The orchestrator could not be reached, timed out, or refused a request."""


class OpenedEpisode(BaseModel):
    """``POST /episodes`` answer: what the policy starts from."""

    episode_id: str = Field(description="Id of the new episode (a capability).")
    task_id: str = Field(default="", description="Task the episode plays.")
    mode: str = Field(default="direct", description="How tools are exposed: direct | gateway | mcp.")
    messages: list[dict[str, Any]] = Field(description="Opening chat messages (system + user).")
    tools: list[dict[str, Any]] = Field(description="OpenAI tool schemas of the episode.")
    max_steps: int = Field(default=0, description="Tool-calling turns allowed (0: not reported).")


class ToolResult(BaseModel):
    """One tool message of a step."""

    tool_call_id: str = Field(description="Id of the call this answers.")
    name: str = Field(default="", description="Tool name.")
    content: str = Field(description="The tool message content (the JSON envelope as text).")


class StepResult(BaseModel):
    """``POST /episodes/{id}/step`` answer."""

    results: list[ToolResult] = Field(description="One result per tool call, in order.")
    done: bool = Field(default=False, description="The episode accepts no more steps.")
    state: str = Field(default="", description="open | running | finished | aborted | expired.")
    finish_reason: str = Field(
        default="", description="Why the episode ended (max_steps, timeout), when done."
    )
    steps_left: int | None = Field(default=None, description="Tool-calling turns left.")
    environment_error: str = Field(
        default="", description="Why the environment (not the agent) failed the episode, if it has."
    )


class CriterionResult(BaseModel):
    """One criterion's verdict (the orchestrator's ``Verdict``)."""

    id: str = Field(description="Criterion id.")
    passed: bool = Field(description="Verdict.")
    kind: str = Field(default="", description="Criterion kind.")
    label: str = Field(default="", description="no_op_fail | no_op_pass.")
    detail: str = Field(default="", description="Why.")
    importance: float | None = Field(
        default=None,
        description="Static importance s_c, if the orchestrator reports it (its Verdict does not yet).",
    )


class FinishResult(BaseModel):
    """``POST /episodes/{id}/finish`` answer: the grade."""

    criteria: list[CriterionResult] = Field(description="Per-criterion verdicts in rubric order.")
    score: float = Field(
        description="The orchestrator's rubric score: importance-weighted fraction of criteria passed."
    )
    complete: bool = Field(description="Every criterion passed.")
    state: str = Field(default="", description="finished | aborted.")
    finish_reason: str = Field(default="", description="answered | max_steps | timeout | ...")
    environment_error: str = Field(
        default="", description="Why the environment (not the agent) failed the episode, if it has."
    )

    def importance(self, fallback: list[float] | None = None) -> list[float]:
        """s_c per criterion: the orchestrator's if it sent them all, else ``fallback``, else 1 each.

        ``fallback`` (the task's rubric importance, e.g. from the verl row's ``extra_info``) is
        used only when it has one entry per criterion; otherwise it is ignored with a warning.
        """
        sent = [c.importance for c in self.criteria]
        if sent and all(s is not None for s in sent):
            return [float(s) for s in sent if s is not None]
        if fallback is not None and len(fallback) == len(self.criteria):
            return [float(x) for x in fallback]
        if fallback is not None:
            logger.warning(
                "importance has %d entries for %d criteria; using 1 each", len(fallback), len(self.criteria)
            )
        return [1.0] * len(self.criteria)


class GroupReward(BaseModel):
    """``POST /groups/{id}/reward`` answer (``orchestrator.groups.GroupRewardResponse``)."""

    reward: float = Field(description="r_i.")
    group_complete: bool = Field(description="All siblings reported in time.")
    n_reported: int = Field(description="Rollouts counted.")
    pass_rates: list[float] = Field(description="p_c.")
    fallback: bool = Field(description="Scored alone with static weights.")
    rubric_score: float = Field(default=0.0, description="R_i.")
    completion: float = Field(default=0.0, description="C_i.")


class OrchestratorClient:
    """Typed calls to ``/episodes`` and ``/groups``; use as an async context manager."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self._timeout_s = timeout_s
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), timeout=self._timeout, transport=transport
        )

    async def __aenter__(self) -> OrchestratorClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _request(
        self, method: str, path: str, body: dict[str, Any] | None = None, timeout_s: float | None = None
    ) -> Any:
        timeout = (
            self._timeout if timeout_s is None else httpx.Timeout(timeout_s, connect=self._timeout.connect)
        )
        try:
            resp = await self._http.request(method, path, json=body, timeout=timeout)
        except httpx.HTTPError as exc:
            raise OrchestratorError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 300:
            raise OrchestratorError(f"{method} {path}: HTTP {resp.status_code}: {resp.text[:500]}")
        try:
            return resp.json()
        except ValueError as exc:
            raise OrchestratorError(f"{method} {path}: answer is not JSON") from exc

    async def _call(
        self, model: type[BaseModel], path: str, body: dict[str, Any], timeout_s: float | None = None
    ) -> Any:
        data = await self._request("POST", path, body, timeout_s)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise OrchestratorError(f"POST {path}: unexpected answer: {exc}") from exc

    async def open_episode(
        self, task_id: str, *, mode: str = "direct", group_id: str | None = None, rollout_idx: int = 0
    ) -> OpenedEpisode:
        body = {"task_id": task_id, "mode": mode, "group_id": group_id, "rollout_idx": rollout_idx}
        result: OpenedEpisode = await self._call(OpenedEpisode, "/episodes", body)
        return result

    async def step(
        self, episode_id: str, tool_calls: list[dict[str, Any]], assistant_content: str | None = None
    ) -> StepResult:
        """Run one assistant turn's calls ``[{id, name, arguments}]`` in order.

        ``arguments`` is the JSON string the model wrote (the orchestrator records it byte for
        byte and answers a malformed one with an ``invalid_arguments`` tool result).
        ``assistant_content`` is the turn's text besides the calls, kept in the trajectory.
        """
        body: dict[str, Any] = {"tool_calls": tool_calls}
        if assistant_content:
            body["assistant"] = {"content": assistant_content}
        result: StepResult = await self._call(StepResult, f"/episodes/{episode_id}/step", body)
        return result

    async def finish(self, episode_id: str, answer: str) -> FinishResult:
        result: FinishResult = await self._call(
            FinishResult, f"/episodes/{episode_id}/finish", {"answer": answer}
        )
        return result

    async def abort(self, episode_id: str, reason: str) -> None:
        """Give the episode up on the orchestrator (every criterion counts as failed)."""
        await self._request("POST", f"/episodes/{episode_id}/abort", {"reason": reason[:500]})

    async def release(self, episode_id: str) -> None:
        """``DELETE /episodes/{id}``: free the episode's forks (a live episode is aborted first)."""
        await self._request("DELETE", f"/episodes/{episode_id}")

    async def group_reward(
        self,
        group_id: str,
        episode_id: str,
        verdicts: list[bool],
        *,
        expected_n: int,
        timeout_s: float,
        importance: list[float] | None = None,
        aborted: bool = False,
    ) -> GroupReward:
        """Report to the group board and wait (up to ``timeout_s`` plus the request timeout)."""
        body = {
            "episode_id": episode_id,
            "verdicts": verdicts,
            "importance": importance,
            "expected_n": expected_n,
            "timeout_s": timeout_s,
            "aborted": aborted,
        }
        result: GroupReward = await self._call(
            GroupReward, f"/groups/{group_id}/reward", body, timeout_s=timeout_s + self._timeout_s
        )
        return result
