"""The group reward board (orchestrator/groups.py) over real HTTP (httpx ASGITransport).

The route scores only episodes the orchestrator graded: each test first records the outcomes
(``record_outcome``, as the orchestrator does when an episode ends) of the episodes it reports.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from orchestrator.groups import GroupBoard, GroupConflictError
from orchestrator.groups_api import groups_router
from orchestrator.reward import completion_focused_rewards


def make_client(board: GroupBoard) -> httpx.AsyncClient:
    app = FastAPI()
    app.include_router(groups_router(board))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000")


async def graded(board: GroupBoard, rows: dict[str, list[bool] | None]) -> None:
    """What the orchestrator records when these episodes end (None: aborted)."""
    for episode_id, row in rows.items():
        await board.record_outcome(episode_id, row)


def body(
    episode_id: str, verdicts: list[bool], expected_n: int, timeout_s: float = 5.0, **kw: Any
) -> dict[str, Any]:
    return {
        "episode_id": episode_id,
        "verdicts": verdicts,
        "expected_n": expected_n,
        "timeout_s": timeout_s,
        **kw,
    }


async def test_complete_group_gets_completion_focused_rewards() -> None:
    board = GroupBoard()
    verdicts = [[True, True, False], [True, False, False], [True, True, True]]
    importance = [1.0, 2.0, 1.0]
    await graded(board, {f"e{i}": v for i, v in enumerate(verdicts)})
    async with make_client(board) as client:
        answers = await asyncio.gather(
            *(
                client.post("/groups/g1/reward", json=body(f"e{i}", v, 3, importance=importance))
                for i, v in enumerate(verdicts)
            )
        )
    expected = completion_focused_rewards(verdicts, importance)
    for i, resp in enumerate(answers):
        assert resp.status_code == 200, resp.text
        data = resp.json()
        assert data["reward"] == pytest.approx(expected[i])
        assert data["group_complete"] is True and data["fallback"] is False
        assert data["n_reported"] == 3
        assert data["pass_rates"] == pytest.approx([1.0, 2 / 3, 1 / 3])
    assert answers[2].json()["reward"] == 1.0 and answers[2].json()["completion"] == 1.0
    report = board.report("g1")
    assert report is not None and report.all_pass_rate == pytest.approx(1 / 3)


async def test_sibling_that_never_reports_times_out_to_static_weights() -> None:
    board = GroupBoard()
    await graded(board, {"e0": [True, False], "e1": [True, True]})
    async with make_client(board) as client:
        a, b = await asyncio.gather(
            client.post("/groups/g2/reward", json=body("e0", [True, False], 3, timeout_s=0.3)),
            client.post("/groups/g2/reward", json=body("e1", [True, True], 3, timeout_s=0.3)),
        )
    for resp, verdicts in ((a, [True, False]), (b, [True, True])):
        data = resp.json()
        assert data["fallback"] is True and data["group_complete"] is False
        assert data["n_reported"] == 2
        assert data["reward"] == pytest.approx(completion_focused_rewards([verdicts])[0])
    assert a.json()["reward"] == pytest.approx(0.25)


async def test_many_groups_posting_concurrently_all_complete() -> None:
    board = GroupBoard()
    rows = {f"g{g}": [[(g + i + c) % 3 != 0 for c in range(4)] for i in range(4)] for g in range(12)}
    await graded(board, {f"{gid}-e{i}": group[i] for gid, group in rows.items() for i in range(4)})
    async with make_client(board) as client:
        posts = [
            client.post(f"/groups/{gid}/reward", json=body(f"{gid}-e{i}", row, 4))
            for i in range(4)
            for gid, group in rows.items()
            for row in [group[i]]
        ]
        answers = await asyncio.gather(*posts)
    got: dict[str, dict[str, float]] = {}
    for resp in answers:
        assert resp.status_code == 200
    k = 0
    for i in range(4):
        for gid in rows:
            got.setdefault(gid, {})[f"e{i}"] = answers[k].json()["reward"]
            k += 1
    for gid, group in rows.items():
        expected = completion_focused_rewards(group)
        assert [got[gid][f"e{i}"] for i in range(4)] == pytest.approx(expected)
    assert len(board) == 12


async def test_aborted_rollout_counts_as_all_false() -> None:
    board = GroupBoard()
    await graded(board, {"dead": None, "e0": [True, True], "e1": [True, False]})
    async with make_client(board) as client:
        aborted = await client.post(
            "/groups/g3/reward", json=body("dead", [], 3, timeout_s=0.0, aborted=True)
        )
        assert aborted.json()["fallback"] is True and aborted.json()["reward"] == 0.0
        a, b = await asyncio.gather(
            client.post("/groups/g3/reward", json=body("e0", [True, True], 3)),
            client.post("/groups/g3/reward", json=body("e1", [True, False], 3)),
        )
    assert a.json()["group_complete"] is True
    assert a.json()["pass_rates"] == pytest.approx([2 / 3, 1 / 3])
    assert [a.json()["reward"], b.json()["reward"]] == pytest.approx(
        completion_focused_rewards([[True, True], [True, False], None])[:2]
    )


async def test_bad_reports_are_refused_with_clear_errors() -> None:
    board = GroupBoard()
    await graded(board, {"e0": [True, False], "e1": [True], "x": [True], "e2": [False, False]})
    async with make_client(board) as client:
        first = await client.post("/groups/g4/reward", json=body("e0", [True, False], 2, timeout_s=0.0))
        assert first.status_code == 200
        ragged = await client.post("/groups/g4/reward", json=body("e1", [True], 2, timeout_s=0.0))
        assert ragged.status_code == 409 and "graded on 2 criteria" in ragged.json()["detail"]
        await graded(board, {"e1": [True, True]})
        other_n = await client.post("/groups/g4/reward", json=body("e1", [True, True], 3, timeout_s=0.0))
        assert other_n.status_code == 409 and "expects 2 rollouts" in other_n.json()["detail"]
        changed = await client.post("/groups/g4/reward", json=body("e0", [True, True], 2, timeout_s=0.0))
        assert changed.status_code == 409 and "not the orchestrator's grading" in changed.json()["detail"]
        await graded(board, {"e0": [True, True]})  # a second grading of e0 differs from its report
        regraded = await client.post("/groups/g4/reward", json=body("e0", [True, True], 2, timeout_s=0.0))
        assert regraded.status_code == 409 and "different verdicts" in regraded.json()["detail"]
        bad_s = await client.post("/groups/g5/reward", json=body("x", [True], 1, importance=[0.0]))
        assert bad_s.status_code == 422 and "importance" in bad_s.json()["detail"]
        bad_n = await client.post("/groups/g5/reward", json=body("x", [True], 0))
        assert bad_n.status_code == 422
        # a retry of an identical report after completion answers again; a third episode is refused
        await graded(board, {"e0": [True, False], "e1": [False, False]})
        done = await client.post("/groups/g4/reward", json=body("e1", [False, False], 2))
        again = await client.post("/groups/g4/reward", json=body("e1", [False, False], 2))
        assert done.json() == again.json() and done.json()["group_complete"] is True
        extra = await client.post("/groups/g4/reward", json=body("e2", [False, False], 2))
        assert extra.status_code == 409 and "one too many" in extra.json()["detail"]


async def test_idle_groups_are_reaped_after_ttl_but_not_while_waited_on() -> None:
    now = [1000.0]
    board = GroupBoard(ttl_s=60.0, clock=lambda: now[0])
    waiting = asyncio.create_task(board.reward("slow", "e0", [True], expected_n=2, timeout_s=5.0))
    await asyncio.sleep(0.01)
    await board.reward("old", "e0", [True], expected_n=2, timeout_s=0.0)
    now[0] += 61.0
    assert board.reap() == ["old"]
    assert "slow" in board and "old" not in board
    await board.reward("slow", "e1", [False], expected_n=2, timeout_s=1.0)
    assert (await waiting).group_complete is True
    now[0] += 61.0
    assert board.reap() == ["slow"]
    assert len(board) == 0


async def test_reports_and_opens_reap_at_most_once_a_second() -> None:
    now = [0.0]
    board = GroupBoard(ttl_s=10.0, clock=lambda: now[0])
    passes = 0
    real_reap = board.reap

    def counted() -> list[str]:
        nonlocal passes
        passes += 1
        return real_reap()

    board.reap = counted  # type: ignore[method-assign]
    for i in range(500):  # within one second: no pass at all (a pass is O(groups))
        await board.record_open(f"g{i}", f"e{i}")
        await board.reward(f"g{i}", f"e{i}", [True], 1, 0.0)
    assert passes == 0
    now[0] += 11.0
    await board.record_open("late", "e")
    assert passes == 1 and "g0" not in board and "late" in board


async def test_board_python_api_rejects_conflicts() -> None:
    board = GroupBoard()
    await board.reward("g", "e0", [True], expected_n=2, timeout_s=0.0, importance=[1.0])
    with pytest.raises(GroupConflictError, match="different criterion importance"):
        await board.reward("g", "e1", [True], expected_n=2, timeout_s=0.0, importance=[2.0])
    with pytest.raises(ValueError, match="expected_n"):
        await board.reward("g", "e1", [True], expected_n=0, timeout_s=0.0)
