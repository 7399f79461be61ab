"""Completion-Focused Rubric Reward (DESIGN.md) for a group of rollouts of one task.

For criteria c = 1..K with importance s_c and n rollouts with verdicts v_ic in {0, 1}:

    p_c = mean_i v_ic                       pass rate of criterion c in the group
    w_c = s_c (1 - p_c + eps) / norm,       eps = 1 / (2n)   (n = 1: w_c = s_c / sum s)
    R_i = sum_c w_c v_ic                    rubric score
    C_i = prod_c v_ic                       completion
    r_i = (1 - lam) R_i + lam C_i

A criterion that every rollout passes (or fails) moves every reward the same way, so it never
changes the ranking inside the group; credit goes to the criteria that discriminate, the rarely
passed ones first, and completing everything always ranks first. (One exception: with lam = 1 the
reward is completion alone, and a criterion nobody passes makes every reward 0.)

Edge cases, decided here:

- An aborted rollout is given as ``None`` (its verdict row is unknown): every v_ic = 0, and it
  still counts in p_c and n.
- K = 0 (a task without criteria): there is nothing to verify, so a rollout that ran to the end is
  vacuously complete (C = 1, R := C, r = 1) and an aborted one scores 0. Valid tasks always carry
  at least one criterion, so this only happens for hand-made tasks; it is logged as a warning.
- Every rollout passes everything: r = 1 for all; nobody passes anything: r = 0 for all. Both
  leave no learning signal, which the report flags as ``no_signal``.

Sums use ``math.fsum`` (correctly rounded, so the result does not depend on the order of
rollouts or criteria) and R_i is a single division of a sub-sum by the full sum, so a complete
rollout scores exactly 1.0 and every reward lies in [0, 1].
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

from pydantic import BaseModel, Field

__all__ = [
    "DEFAULT_LAMBDA",
    "GroupRewardReport",
    "completion_focused_rewards",
    "group_reward_report",
    "log_group_report",
]

DEFAULT_LAMBDA = 0.5

logger = logging.getLogger(__name__)

VerdictRow = Sequence[bool] | None


class GroupRewardReport(BaseModel):
    """Everything the reward of one group was computed from, for logging and for the trainer."""

    n: int = Field(description="Rollouts in the group (aborted ones included).")
    k: int = Field(description="Criteria per rollout.")
    lam: float = Field(description="Weight of the completion bonus.")
    pass_rates: list[float] = Field(description="p_c per criterion.")
    weights: list[float] = Field(description="Normalised criterion weights w_c.")
    rubric_scores: list[float] = Field(description="R_i per rollout.")
    completions: list[float] = Field(description="C_i per rollout (1.0 complete, else 0.0).")
    rewards: list[float] = Field(description="r_i per rollout, in the order given.")
    aborted: list[bool] = Field(description="Whether each rollout was aborted (all verdicts 0).")
    all_pass_rate: float = Field(description="Fraction of rollouts that completed every criterion.")
    no_signal: bool = Field(description="All rewards are equal: GRPO advantages are all zero.")
    static_weights: bool = Field(description="True when n = 1 and the weights are s_c / sum s.")


def _validate_rows(verdicts: Sequence[VerdictRow]) -> tuple[list[list[int] | None], int]:
    """Return rows as 0/1 ints (None for aborted) and K; reject ragged or non-boolean input."""
    if isinstance(verdicts, str | bytes) or not isinstance(verdicts, Sequence):
        raise ValueError(f"verdicts must be a sequence of verdict rows, got {type(verdicts).__name__}")
    if len(verdicts) == 0:
        raise ValueError("verdicts must hold at least one rollout")
    rows: list[list[int] | None] = []
    k: int | None = None
    for i, row in enumerate(verdicts):
        if row is None:
            rows.append(None)
            continue
        if isinstance(row, str | bytes) or not isinstance(row, Sequence):
            raise ValueError(
                f"verdict row {i} must be a sequence of booleans or None, got {type(row).__name__}"
            )
        values: list[int] = []
        for c, v in enumerate(row):
            if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
                values.append(int(v))
            else:
                raise ValueError(f"verdict [{i}][{c}] must be a boolean (or 0/1), got {v!r}")
        if k is None:
            k = len(values)
        elif len(values) != k:
            raise ValueError(
                f"ragged verdicts: rollout {i} has {len(values)} criteria but earlier rollouts have {k}; "
                "every rollout of a group must be graded on the same rubric"
            )
        rows.append(values)
    return rows, (k or 0)


def _validate_importance(importance: Sequence[float] | None, k: int) -> list[float]:
    if importance is None:
        return [1.0] * k
    s = [float(x) for x in importance]
    if len(s) != k:
        raise ValueError(f"importance has {len(s)} entries but the rubric has {k} criteria")
    for c, x in enumerate(s):
        if not math.isfinite(x) or x <= 0.0:
            raise ValueError(f"importance[{c}] must be a finite number > 0, got {x!r}")
    return s


def group_reward_report(
    verdicts: Sequence[VerdictRow],
    importance: Sequence[float] | None = None,
    lam: float = DEFAULT_LAMBDA,
) -> GroupRewardReport:
    """Compute the Completion-Focused Rubric Reward of one group and everything behind it.

    ``verdicts[i][c]`` is rollout i's verdict on criterion c; a row of ``None`` is an aborted
    rollout. ``importance`` gives s_c (default 1 each). Raises ValueError on ragged rows,
    non-boolean verdicts, bad importance or lam outside [0, 1].
    """
    if not (isinstance(lam, int | float) and 0.0 <= float(lam) <= 1.0):
        raise ValueError(f"lam must be a number in [0, 1], got {lam!r}")
    lam = float(lam)
    rows, k = _validate_rows(verdicts)
    s = _validate_importance(importance, k)
    n = len(rows)
    aborted = [row is None for row in rows]
    filled = [row if row is not None else [0] * k for row in rows]

    if k == 0:
        logger.warning("reward for a group with no criteria: complete unless aborted (r = C)")
        finished = [0.0 if a else 1.0 for a in aborted]
        return GroupRewardReport(
            n=n,
            k=0,
            lam=lam,
            pass_rates=[],
            weights=[],
            rubric_scores=list(finished),
            completions=finished,
            rewards=list(finished),
            aborted=aborted,
            all_pass_rate=math.fsum(finished) / n,
            no_signal=len(set(finished)) <= 1,
            static_weights=n == 1,
        )

    pass_rates = [math.fsum(row[c] for row in filled) / n for c in range(k)]
    if n == 1:
        raw = list(s)
    else:
        eps = 1.0 / (2 * n)
        raw = [s[c] * (1.0 - pass_rates[c] + eps) for c in range(k)]
    total = math.fsum(raw)
    weights = [x / total for x in raw]

    rubric_scores: list[float] = []
    completions: list[float] = []
    rewards: list[float] = []
    for row in filled:
        r_score = math.fsum(raw[c] for c in range(k) if row[c]) / total
        comp = 1.0 if all(row) else 0.0
        rubric_scores.append(r_score)
        completions.append(comp)
        # R + lam (C - R): exactly 1.0 when complete, and never outside [0, R] otherwise.
        rewards.append(r_score + lam * (comp - r_score))

    return GroupRewardReport(
        n=n,
        k=k,
        lam=lam,
        pass_rates=pass_rates,
        weights=weights,
        rubric_scores=rubric_scores,
        completions=completions,
        rewards=rewards,
        aborted=aborted,
        all_pass_rate=math.fsum(completions) / n,
        no_signal=len(set(rewards)) <= 1,
        static_weights=n == 1,
    )


def completion_focused_rewards(
    verdicts: Sequence[VerdictRow],
    importance: Sequence[float] | None = None,
    lam: float = DEFAULT_LAMBDA,
) -> list[float]:
    """Rewards r_i of one group, in the order given (see the module docstring for the formula)."""
    return group_reward_report(verdicts, importance, lam).rewards


def log_group_report(
    report: GroupRewardReport, group_id: str = "", log: logging.Logger | None = None
) -> None:
    """Log a group's p_c, R, C and all-pass rate at INFO (a warning when it carries no signal)."""
    target = log or logger
    fmt = ", ".join
    target.info(
        "group %s: n=%d k=%d all_pass=%.3f p=[%s] R=[%s] C=[%s] r=[%s]%s",
        group_id or "-",
        report.n,
        report.k,
        report.all_pass_rate,
        fmt(f"{p:.2f}" for p in report.pass_rates),
        fmt(f"{x:.3f}" for x in report.rubric_scores),
        fmt(f"{x:.0f}" for x in report.completions),
        fmt(f"{x:.3f}" for x in report.rewards),
        " (static weights)" if report.static_weights else "",
    )
    if report.no_signal and report.n > 1:
        target.warning(
            "group %s: every rollout got reward %.3f - no learning signal", group_id or "-", report.rewards[0]
        )
