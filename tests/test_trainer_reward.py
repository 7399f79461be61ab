"""Completion-Focused Rubric Reward: the properties DESIGN.md promises, and its edge cases."""

from __future__ import annotations

import logging
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from orchestrator.reward import completion_focused_rewards, group_reward_report, log_group_report

TOL = 1e-9


@st.composite
def groups(draw: st.DrawFn, min_n: int = 1, min_k: int = 1) -> tuple[list[list[bool]], list[float], float]:
    n = draw(st.integers(min_n, 8))
    k = draw(st.integers(min_k, 6))
    verdicts = draw(st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=n, max_size=n))
    importance = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 0.25]), min_size=k, max_size=k))
    lam = draw(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]))
    return verdicts, importance, lam


def _same_order(a: list[float], b: list[float]) -> bool:
    for i in range(len(a)):
        for j in range(len(a)):
            if a[i] > a[j] + TOL and not b[i] > b[j] + TOL / 10:
                return False
            if abs(a[i] - a[j]) <= TOL and abs(b[i] - b[j]) > TOL:
                return False
    return True


@settings(max_examples=300, deadline=None)
@given(groups())
def test_rewards_lie_in_unit_interval(group: tuple[list[list[bool]], list[float], float]) -> None:
    verdicts, importance, lam = group
    for r in completion_focused_rewards(verdicts, importance, lam):
        assert 0.0 <= r <= 1.0


@settings(max_examples=300, deadline=None)
@given(groups(), st.booleans(), st.integers(0, 6), st.sampled_from([0.5, 1.0, 4.0]))
def test_criterion_all_pass_or_all_fail_does_not_change_ranking(
    group: tuple[list[list[bool]], list[float], float], value: bool, pos: int, s: float
) -> None:
    verdicts, importance, lam = group
    # with lam = 1 the reward is completion alone, and a criterion nobody passes zeroes it for all
    assume(value or lam < 1.0)
    before = completion_focused_rewards(verdicts, importance, lam)
    pos = min(pos, len(importance))
    widened = [[*row[:pos], value, *row[pos:]] for row in verdicts]
    after = completion_focused_rewards(widened, [*importance[:pos], s, *importance[pos:]], lam)
    assert _same_order(before, after)


@settings(max_examples=300, deadline=None)
@given(groups())
def test_completing_every_criterion_scores_highest(
    group: tuple[list[list[bool]], list[float], float],
) -> None:
    verdicts, importance, lam = group
    rewards = completion_focused_rewards(verdicts, importance, lam)
    complete = [all(row) for row in verdicts]
    for i, ci in enumerate(complete):
        if not ci:
            continue
        assert rewards[i] == 1.0
        for j, cj in enumerate(complete):
            if not cj:
                assert rewards[i] > rewards[j]


@settings(max_examples=200, deadline=None)
@given(groups(min_n=2), st.randoms(use_true_random=False))
def test_rewards_are_permutation_equivariant(
    group: tuple[list[list[bool]], list[float], float], rnd: object
) -> None:
    verdicts, importance, lam = group
    order = list(range(len(verdicts)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    rewards = completion_focused_rewards(verdicts, importance, lam)
    permuted = completion_focused_rewards([verdicts[i] for i in order], importance, lam)
    assert permuted == [rewards[i] for i in order]
    cols = list(range(len(importance)))
    rnd.shuffle(cols)  # type: ignore[attr-defined]
    by_cols = completion_focused_rewards(
        [[row[c] for c in cols] for row in verdicts], [importance[c] for c in cols], lam
    )
    assert by_cols == rewards


def test_rarely_passed_criterion_earns_more_credit() -> None:
    # c0 passed by 3 of 4, c1 by 1 of 4: passing only c1 beats passing only c0
    verdicts = [[True, False], [True, False], [True, False], [False, True]]
    report = group_reward_report(verdicts)
    assert report.weights[1] > report.weights[0]
    assert report.rewards[3] > report.rewards[0]
    eps = 1 / 8
    w0, w1 = 1 - 0.75 + eps, 1 - 0.25 + eps
    assert report.weights == pytest.approx([w0 / (w0 + w1), w1 / (w0 + w1)])
    assert report.rewards[3] == pytest.approx(0.5 * w1 / (w0 + w1))


def test_single_rollout_uses_static_weights() -> None:
    report = group_reward_report([[True, False, True]], importance=[1.0, 2.0, 1.0], lam=0.5)
    assert report.static_weights
    assert report.weights == pytest.approx([0.25, 0.5, 0.25])
    assert report.rewards == pytest.approx([0.5 * 0.5])
    assert completion_focused_rewards([[True, True]]) == [1.0]


def test_everyone_passes_or_everyone_fails_gives_flat_rewards() -> None:
    assert completion_focused_rewards([[True, True]] * 3) == [1.0, 1.0, 1.0]
    report = group_reward_report([[False, False]] * 3)
    assert report.rewards == [0.0, 0.0, 0.0] and report.no_signal and report.all_pass_rate == 0.0


def test_aborted_rollout_counts_as_all_false_in_pass_rates() -> None:
    report = group_reward_report([[True, True], None, [True, False]])
    assert report.aborted == [False, True, False]
    assert report.rewards[1] == 0.0
    assert report.pass_rates == pytest.approx([2 / 3, 1 / 3])
    assert report.rewards[0] == 1.0


def test_no_criteria_means_complete_unless_aborted(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="orchestrator.reward"):
        assert completion_focused_rewards([[], [], None]) == [1.0, 1.0, 0.0]
    assert "no criteria" in caplog.text
    assert completion_focused_rewards([None, None]) == [0.0, 0.0]


def test_pure_completion_reward_is_flat_when_a_criterion_nobody_passes_is_added() -> None:
    assert completion_focused_rewards([[False], [True]], lam=1.0) == [0.0, 1.0]
    assert completion_focused_rewards([[False, False], [True, False]], lam=1.0) == [0.0, 0.0]


def test_lambda_blends_rubric_score_and_completion() -> None:
    verdicts = [[True, False], [False, False]]
    r0 = completion_focused_rewards(verdicts, lam=0.0)
    r1 = completion_focused_rewards(verdicts, lam=1.0)
    assert r1 == [0.0, 0.0]
    assert r0[0] > 0.0 and r0[1] == 0.0
    half = completion_focused_rewards(verdicts, lam=0.5)
    assert half[0] == pytest.approx(0.5 * r0[0])


@pytest.mark.parametrize(
    ("verdicts", "importance", "lam", "message"),
    [
        ([[True, False], [True]], None, 0.5, "ragged verdicts: rollout 1 has 1 criteria"),
        ([], None, 0.5, "at least one rollout"),
        ([[True, "yes"]], None, 0.5, "must be a boolean"),
        ([[True, 0.5]], None, 0.5, "must be a boolean"),
        ([[True, False]], [1.0], 0.5, "importance has 1 entries"),
        ([[True, False]], [1.0, 0.0], 0.5, "importance[1] must be a finite number > 0"),
        ([[True, False]], [1.0, math.nan], 0.5, "finite"),
        ([[True]], None, 1.5, "lam must be"),
        ("TF", None, 0.5, "sequence of verdict rows"),
        ([True, False], None, 0.5, "verdict row 0 must be a sequence"),
    ],
)
def test_bad_input_raises_clear_value_error(
    verdicts: object, importance: object, lam: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        completion_focused_rewards(verdicts, importance, lam)  # type: ignore[arg-type]


def test_group_report_is_logged_with_pass_rates(caplog: pytest.LogCaptureFixture) -> None:
    report = group_reward_report([[True, False], [True, True]])
    with caplog.at_level(logging.INFO, logger="orchestrator.reward"):
        log_group_report(report, "uid-7")
    assert "group uid-7: n=2 k=2 all_pass=0.500 p=[1.00, 0.50]" in caplog.text
