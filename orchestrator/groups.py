"""Group reward board: the barrier that turns one rollout's verdicts into a group-relative reward.

verl scores one trajectory at a time, but the Completion-Focused Rubric Reward needs the pass
rates of all n rollouts of a prompt. Every rollout of a group (verl's prompt ``uid``) posts its
verdict vector here and waits; once ``expected_n`` rollouts have reported, each gets its reward
from the same group computation. A sibling that crashes never reports, so a waiter gives up after
its own ``timeout_s`` and is scored alone with static weights (the n = 1 formula), flagged
``fallback``. Groups are forgotten ``ttl_s`` after their last report, once nobody waits on them.

The board trusts no caller with a grade: the orchestrator records each episode's outcome here
when the episode ends (``record_outcome``: its own verdict row, or aborted, and the group it was
opened in), and the HTTP route accepts a report only for an episode it holds an outcome of, taking
the verdicts from that record; an episode opened with a ``group_id`` reports to that group only
(409 elsewhere), so one real episode cannot fill a slot of another group. A caller may still forfeit its rollout (``aborted``: all False), never raise it. Outcomes
are kept ``ttl_s``, so a driver may release the episode (free its forks) before it reports.
``timeout_s`` is bounded by the orchestrator's ``group_timeout_max_s``; on shutdown every waiter
ends at once with 503 (``close_waiters``), so no report holds a SIGTERM.

A sibling that never opened its episode (its open failed, its worker died) will never report, so
the board does not wait for it to the timeout: the orchestrator tells it of every episode opened
with a ``group_id`` (``record_open``), and when fewer than ``expected_n`` rollouts of a group have
opened and none has opened for ``open_deadline_s`` (``group_open_deadline_s``), every waiter of the
group is scored alone at once, ``reason`` ``siblings_not_opened``. A group none of whose episodes
opened with its id (a driver that does not send ``group_id``) waits for its timeout as before;
``open_deadline_s=0`` turns the check off.

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

from orchestrator.errors import BoardClosing, GroupConflictError
from orchestrator.groups_api import GroupRewardResponse
from orchestrator.reward import DEFAULT_LAMBDA, GroupRewardReport, group_reward_report, log_group_report

__all__ = [
    "NOT_OPENED",
    "TIMEOUT",
    "BoardClosing",
    "GroupBoard",
    "GroupConflictError",
    "GroupRewardResponse",
    "RewardBoard",
    "check_report",
    "fallback_response",
    "group_responses",
    "open_deadline_left",
    "set_soon",
]

logger = logging.getLogger(__name__)


@dataclass
class _Report:
    verdicts: list[bool] | None  # None: aborted before its rubric size was known
    importance: list[float] | None


TIMEOUT = "timeout"
NOT_OPENED = "siblings_not_opened"


def open_deadline_left(
    opened: int, last_open: float | None, expected_n: int, deadline_s: float, now: float
) -> float | None:
    """Seconds until a group with ``opened`` of ``expected_n`` rollouts opened is given up on (<= 0:
    now); None when the check does not apply (off, every rollout opened, or none opened with the id)."""
    if deadline_s <= 0 or opened == 0 or last_open is None or opened >= expected_n:
        return None
    return last_open + deadline_s - now


@dataclass
class _Group:
    expected_n: int | None  # None: rollouts opened, none reported yet
    created: float
    updated: float
    opened: int = 0
    last_open: float | None = None
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
        open_deadline_s: float = 60.0,
    ) -> None:
        if ttl_s <= 0:
            raise ValueError("ttl_s must be > 0")
        if not 0.0 <= lam <= 1.0:
            raise ValueError("lam must be in [0, 1]")
        if open_deadline_s < 0:
            raise ValueError("open_deadline_s must be >= 0 (0: off)")
        self._groups: dict[str, _Group] = {}
        self._outcomes: dict[str, tuple[list[bool] | None, float, str | None]] = {}  # (row, at, group)
        self._closing = asyncio.Event()
        self._ttl_s = ttl_s
        self._lam = lam
        self._clock = clock
        self._open_deadline_s = open_deadline_s
        self._reaped = clock()

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
        now = self._reaped = self._clock()
        stale = sorted(
            gid for gid, g in self._groups.items() if g.waiters == 0 and now - g.updated > self._ttl_s
        )
        for gid in stale:
            del self._groups[gid]
        if stale:
            logger.info("reaped %d idle reward groups", len(stale))
        old = [e for e, (_, at, _) in self._outcomes.items() if now - at > self._ttl_s]
        for eid in old:
            del self._outcomes[eid]
        return stale

    def _reap_soon(self, now: float) -> None:
        """Reap at most once a second: a pass is O(groups), and reports and opens come by thousands."""
        if now - self._reaped >= 1.0:
            self.reap()

    async def record_outcome(
        self, episode_id: str, row: list[bool] | None, group_id: str | None = None
    ) -> None:
        """The orchestrator's grading of an ended episode (``None``: aborted) and the group it was
        opened in (``None``: none), kept ``ttl_s``.

        Outcomes sit in the order they were recorded, so the expired ones are dropped here from the
        front: memory stays bounded even when nobody ever reports (an evaluation run)."""
        now = self._clock()
        self._outcomes.pop(episode_id, None)
        self._outcomes[episode_id] = (None if row is None else [bool(v) for v in row], now, group_id)
        while self._outcomes:
            oldest = next(iter(self._outcomes))
            if now - self._outcomes[oldest][1] <= self._ttl_s:
                break
            del self._outcomes[oldest]

    async def outcome(self, episode_id: str) -> tuple[list[bool] | None, str | None] | None:
        """``(row, group opened in)`` as recorded when the episode ended, or None for an episode
        never ended here."""
        held = self._outcomes.get(episode_id)
        return None if held is None else (held[0], held[2])

    async def record_open(self, group_id: str, episode_id: str) -> None:
        """An episode of ``group_id`` opened: the board counts the group's rollouts that started.

        Only a count and the latest open's time are kept; idle groups are reaped from here too (at
        most once a second), so opens nobody reports (an evaluation run) stay bounded."""
        now = self._clock()
        self._reap_soon(now)
        group = self._groups.get(group_id)
        if group is None:
            group = self._groups[group_id] = _Group(expected_n=None, created=now, updated=now)
        group.opened += 1
        group.last_open = group.updated = now

    def close_waiters(self) -> None:
        """End every wait now with ``BoardClosing`` (shutdown); safe to call from a signal handler."""
        set_soon(self._closing)

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
        self._reap_soon(self._clock())
        row = None if (aborted or verdicts is None) else [bool(v) for v in verdicts]
        group = self._post(group_id, episode_id, row, expected_n, importance)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        group.waiters += 1
        try:
            while group.result is None and not self._closing.is_set():
                left = deadline - loop.time()
                unopened = open_deadline_left(
                    group.opened, group.last_open, expected_n, self._open_deadline_s, self._clock()
                )
                if unopened is not None and unopened <= 0:
                    return self._fallback(group_id, group, episode_id, NOT_OPENED)
                if left <= 0:
                    return self._fallback(group_id, group, episode_id, TIMEOUT)
                await _first_of(group.done, self._closing, left if unopened is None else min(left, unopened))
        finally:
            group.waiters -= 1
            group.updated = self._clock()
        if group.result is None:
            raise BoardClosing("the orchestrator is shutting down; send the report again")
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
        if group.expected_n is None:  # opened, first report now
            group.expected_n = expected_n
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
        if len(group.reports) >= expected_n:
            self._complete(group_id, group)
        return group

    def _complete(self, group_id: str, group: _Group) -> None:
        rows = {e: r.verdicts for e, r in group.reports.items()}
        group.report, group.result = group_responses(group_id, rows, group.importance, self._lam)
        group.done.set()

    def _fallback(self, group_id: str, group: _Group, episode_id: str, reason: str) -> GroupRewardResponse:
        row = group.reports[episode_id].verdicts
        return fallback_response(
            group_id,
            episode_id,
            row,
            group.k,
            group.importance,
            self._lam,
            len(group.reports),
            group.expected_n or 0,
            reason,
            group.opened,
        )

    async def aclose(self) -> None:
        self.close_waiters()


def set_soon(event: asyncio.Event) -> None:
    """Set ``event`` from its loop's thread or from a signal handler (wakes a loop blocked in select)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        event.set()
        return
    loop.call_soon_threadsafe(event.set)


async def _first_of(done: asyncio.Event, closing: asyncio.Event, timeout_s: float) -> bool:
    """Wait for ``done`` or ``closing``; False when neither came within ``timeout_s``."""
    if done.is_set() or closing.is_set():
        return True
    waits = [asyncio.ensure_future(done.wait()), asyncio.ensure_future(closing.wait())]
    try:
        finished, _ = await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
    return bool(finished)


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

    async def record_outcome(
        self, episode_id: str, row: list[bool] | None, group_id: str | None = None
    ) -> None: ...

    async def outcome(self, episode_id: str) -> tuple[list[bool] | None, str | None] | None: ...

    async def record_open(self, group_id: str, episode_id: str) -> None: ...

    def close_waiters(self) -> None: ...

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
    reason: str = TIMEOUT,
    n_opened: int = 0,
) -> GroupRewardResponse:
    """A rollout whose siblings did not all report in time (``timeout``) or will never report because
    they never opened (``siblings_not_opened``), scored alone with static weights."""
    if row is None and k is not None:
        row = [False] * k
    report = group_reward_report([row] if row is not None else [None], importance, lam)
    why = (
        f"only {n_opened} of {expected_n} rollouts opened"
        if reason == NOT_OPENED
        else f"{n_reported} of {expected_n} rollouts reported before its timeout"
    )
    logger.warning(
        "group %s, episode %s: %s; static-weight reward %.3f", group_id, episode_id, why, report.rewards[0]
    )
    return GroupRewardResponse(
        reward=report.rewards[0],
        group_complete=False,
        n_reported=n_reported,
        pass_rates=report.pass_rates,
        fallback=True,
        reason=reason,
        rubric_score=report.rubric_scores[0],
        completion=report.completions[0],
    )
