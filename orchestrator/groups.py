"""Group reward board: the barrier that turns one rollout's verdicts into a group-relative reward.

verl scores one trajectory at a time, but the Completion-Focused Rubric Reward needs the pass
rates of all n rollouts of a prompt. Every rollout of a group (verl's prompt ``uid``) posts its
verdict vector here and waits; once ``expected_n`` rollouts have reported, each gets its reward
from the same group computation. A sibling that crashes never reports, so a waiter gives up after
its own ``timeout_s`` and is scored alone with static weights (the n = 1 formula), flagged
``fallback``. Groups are forgotten ``ttl_s`` after their last report, once nobody waits on them.

``GroupBoard`` lives in one process (one event loop): the embedded default. With several
orchestrator replicas the board lives in the shared store instead (``groups_redis``), so the
rollouts of one group may report to different replicas; both boards score a complete group the
same way (``group_responses``: rollouts in episode-id order, ``math.fsum`` sums) and a lone
rollout the same way (``fallback_response``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from compoworld.errors import CompoWorldError
from orchestrator.errors import EpisodeBusy
from orchestrator.reward import DEFAULT_LAMBDA, GroupRewardReport, group_reward_report, log_group_report

__all__ = [
    "GroupBoard",
    "GroupConflictError",
    "GroupRewardRequest",
    "GroupRewardResponse",
    "RewardBoard",
    "check_report",
    "fallback_response",
    "group_responses",
    "groups_router",
]

logger = logging.getLogger(__name__)


class GroupConflictError(CompoWorldError, ValueError):
    """A report disagrees with what the group already holds (rubric size, expected_n, importance)."""


class GroupRewardRequest(BaseModel):
    """One rollout's report to its group."""

    episode_id: str = Field(
        min_length=1, description="Episode that produced the verdicts (unique in the group)."
    )
    verdicts: list[bool] = Field(default_factory=list, description="Per-criterion verdicts, in rubric order.")
    importance: list[float] | None = Field(
        default=None, description="Static importance s_c per criterion; default 1 each."
    )
    expected_n: int = Field(ge=1, le=4096, description="Rollouts in the group (verl's rollout.n).")
    timeout_s: float = Field(ge=0.0, le=3600.0, description="How long to wait for the siblings.")
    aborted: bool = Field(
        default=False,
        description="The episode was aborted: every verdict counts as False (verdicts may be empty).",
    )


class GroupRewardResponse(BaseModel):
    """The reward of one rollout and the state of its group."""

    reward: float = Field(description="r_i in [0, 1].")
    group_complete: bool = Field(description="All expected rollouts reported before the timeout.")
    n_reported: int = Field(description="Rollouts that had reported when the reward was computed.")
    pass_rates: list[float] = Field(description="p_c over the rollouts counted (just this one on fallback).")
    fallback: bool = Field(description="Timed out: scored alone with static weights (n = 1).")
    rubric_score: float = Field(description="R_i, the weighted fraction of criteria passed.")
    completion: float = Field(description="C_i: 1.0 if every criterion passed, else 0.0.")


@dataclass
class _Report:
    verdicts: list[bool] | None  # None: aborted before its rubric size was known
    importance: list[float] | None


@dataclass
class _Group:
    expected_n: int
    created: float
    updated: float
    reports: dict[str, _Report] = field(default_factory=dict)
    k: int | None = None
    importance: list[float] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    result: dict[str, GroupRewardResponse] | None = None
    report: GroupRewardReport | None = None
    waiters: int = 0


class GroupBoard:
    """Collects verdict vectors per group id and hands out completion-focused rewards."""

    def __init__(
        self,
        *,
        ttl_s: float = 900.0,
        lam: float = DEFAULT_LAMBDA,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_s <= 0:
            raise ValueError("ttl_s must be > 0")
        if not 0.0 <= lam <= 1.0:
            raise ValueError("lam must be in [0, 1]")
        self._groups: dict[str, _Group] = {}
        self._ttl_s = ttl_s
        self._lam = lam
        self._clock = clock

    def __len__(self) -> int:
        return len(self._groups)

    def __contains__(self, group_id: object) -> bool:
        return group_id in self._groups

    def report(self, group_id: str) -> GroupRewardReport | None:
        """The full group computation, once the group is complete."""
        group = self._groups.get(group_id)
        return group.report if group else None

    def reap(self) -> list[str]:
        """Forget groups idle for longer than the TTL that nobody waits on; return their ids."""
        now = self._clock()
        stale = sorted(
            gid for gid, g in self._groups.items() if g.waiters == 0 and now - g.updated > self._ttl_s
        )
        for gid in stale:
            del self._groups[gid]
        if stale:
            logger.info("reaped %d idle reward groups", len(stale))
        return stale

    async def reward(
        self,
        group_id: str,
        episode_id: str,
        verdicts: list[bool] | None,
        expected_n: int,
        timeout_s: float,
        importance: list[float] | None = None,
        aborted: bool = False,
    ) -> GroupRewardResponse:
        """Post one rollout's verdicts and wait for its reward (see the module docstring).

        ``verdicts=None`` or ``aborted=True`` reports an aborted rollout (all False). Raises
        GroupConflictError when the report contradicts the group, ValueError on bad arguments.
        """
        check_report(expected_n, timeout_s, importance)
        self.reap()
        row = None if (aborted or verdicts is None) else [bool(v) for v in verdicts]
        group = self._post(group_id, episode_id, row, expected_n, importance)
        if group.result is None:
            group.waiters += 1
            try:
                await asyncio.wait_for(group.done.wait(), timeout=timeout_s)
            except TimeoutError:
                return self._fallback(group_id, group, episode_id)
            finally:
                group.waiters -= 1
                group.updated = self._clock()
        assert group.result is not None
        return group.result[episode_id]

    def _post(
        self,
        group_id: str,
        episode_id: str,
        row: list[bool] | None,
        expected_n: int,
        importance: list[float] | None,
    ) -> _Group:
        now = self._clock()
        group = self._groups.get(group_id)
        if group is None:
            group = self._groups[group_id] = _Group(expected_n=expected_n, created=now, updated=now)
        if expected_n != group.expected_n:
            raise GroupConflictError(
                f"group {group_id!r} expects {group.expected_n} rollouts; this report says {expected_n}"
            )
        if row is not None:
            if group.k is not None and len(row) != group.k:
                raise GroupConflictError(
                    f"group {group_id!r} is graded on {group.k} criteria; episode {episode_id!r} reported {len(row)}"
                )
            if importance is not None and len(importance) != len(row):
                raise ValueError(f"importance has {len(importance)} entries for {len(row)} verdicts")
            if importance is not None and group.importance is not None and importance != group.importance:
                raise GroupConflictError(f"group {group_id!r} already has different criterion importance")
            group.k = len(row)
            if importance is not None:
                group.importance = list(importance)
        previous = group.reports.get(episode_id)
        if previous is not None:
            if previous.verdicts != row:
                raise GroupConflictError(f"episode {episode_id!r} already reported different verdicts")
            return group  # a retry of the same report: wait (or answer) again
        if group.result is not None:
            raise GroupConflictError(
                f"group {group_id!r} already has its {group.expected_n} reports; {episode_id!r} is one too many"
            )
        group.reports[episode_id] = _Report(verdicts=row, importance=importance)
        group.updated = now
        if len(group.reports) >= group.expected_n:
            self._complete(group_id, group)
        return group

    def _complete(self, group_id: str, group: _Group) -> None:
        rows = {e: r.verdicts for e, r in group.reports.items()}
        group.report, group.result = group_responses(group_id, rows, group.importance, self._lam)
        group.done.set()

    def _fallback(self, group_id: str, group: _Group, episode_id: str) -> GroupRewardResponse:
        row = group.reports[episode_id].verdicts
        return fallback_response(
            group_id,
            episode_id,
            row,
            group.k,
            group.importance,
            self._lam,
            len(group.reports),
            group.expected_n,
        )

    async def aclose(self) -> None:
        return None


class RewardBoard(Protocol):
    """What the reward route needs of a board: the in-process ``GroupBoard`` or the shared one."""

    async def reward(
        self,
        group_id: str,
        episode_id: str,
        verdicts: list[bool] | None,
        expected_n: int,
        timeout_s: float,
        importance: list[float] | None = None,
        aborted: bool = False,
    ) -> GroupRewardResponse: ...

    async def aclose(self) -> None: ...


def check_report(expected_n: int, timeout_s: float, importance: list[float] | None) -> None:
    """The argument checks every board makes before posting (ValueError: a 422)."""
    if expected_n < 1:
        raise ValueError("expected_n must be >= 1")
    if timeout_s < 0:
        raise ValueError("timeout_s must be >= 0")
    if importance is not None and not all(math.isfinite(x) and x > 0 for x in importance):
        raise ValueError("importance must hold finite numbers > 0")


def group_responses(
    group_id: str,
    rows: dict[str, list[bool] | None],
    importance: list[float] | None,
    lam: float,
) -> tuple[GroupRewardReport, dict[str, GroupRewardResponse]]:
    """The complete group's computation and each rollout's answer (rollouts in episode-id order)."""
    episodes = sorted(rows)
    report = group_reward_report([rows[e] for e in episodes], importance, lam)
    log_group_report(report, group_id, logger)
    result = {
        e: GroupRewardResponse(
            reward=report.rewards[i],
            group_complete=True,
            n_reported=report.n,
            pass_rates=report.pass_rates,
            fallback=False,
            rubric_score=report.rubric_scores[i],
            completion=report.completions[i],
        )
        for i, e in enumerate(episodes)
    }
    return report, result


def fallback_response(
    group_id: str,
    episode_id: str,
    row: list[bool] | None,
    k: int | None,
    importance: list[float] | None,
    lam: float,
    n_reported: int,
    expected_n: int,
) -> GroupRewardResponse:
    """A rollout whose siblings did not all report in time, scored alone with static weights."""
    if row is None and k is not None:
        row = [False] * k
    report = group_reward_report([row] if row is not None else [None], importance, lam)
    logger.warning(
        "group %s: %d of %d rollouts reported before episode %s timed out; static-weight reward %.3f",
        group_id,
        n_reported,
        expected_n,
        episode_id,
        report.rewards[0],
    )
    return GroupRewardResponse(
        reward=report.rewards[0],
        group_complete=False,
        n_reported=n_reported,
        pass_rates=report.pass_rates,
        fallback=True,
        rubric_score=report.rubric_scores[0],
        completion=report.completions[0],
    )


def groups_router(board: RewardBoard) -> APIRouter:
    """Routes of the group reward board, for the orchestrator app to ``include_router``."""
    router = APIRouter(tags=["groups"])

    @router.post("/groups/{group_id}/reward", response_model=GroupRewardResponse)
    async def post_group_reward(group_id: str, body: GroupRewardRequest) -> GroupRewardResponse:
        """Report this rollout's verdicts; answers once the group is complete or the timeout passes."""
        try:
            return await board.reward(
                group_id,
                body.episode_id,
                body.verdicts,
                body.expected_n,
                body.timeout_s,
                importance=body.importance,
                aborted=body.aborted,
            )
        except GroupConflictError as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from exc
        except ValueError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except EpisodeBusy as exc:  # the shared store did not answer: the report can be sent again
            raise HTTPException(status_code=503, detail=str(exc)) from exc

    return router
