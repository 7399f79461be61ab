"""The group reward board in a real Redis: a group's rollouts report to different replicas.

Each "replica" is a ``RedisGroupBoard`` with its own Redis client (``tests/redis_fixture.py``
starts a real ``redis-server`` on 127.0.0.1); the in-process ``GroupBoard`` is the reference
every result is compared with.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from orchestrator.groups import BoardClosing, GroupBoard, GroupConflictError, GroupRewardResponse
from orchestrator.groups_redis import RedisGroupBoard, board_for_store
from orchestrator.reward import completion_focused_rewards
from orchestrator.store import InMemoryEpisodeStore
from orchestrator.store_redis import RedisEpisodeStore
from tests.redis_fixture import redis_server

__all__ = ["redis_server"]


@pytest.fixture
async def replicas(redis_server: str) -> AsyncIterator[list[RedisGroupBoard]]:
    prefix = uuid.uuid4().hex
    boards = [
        RedisGroupBoard(aioredis.Redis.from_url(redis_server), prefix=prefix, ttl_s=60, poll_s=0.2)
        for _ in range(3)
    ]
    yield boards
    for board in boards:
        await board.aclose()
        await board.redis.aclose()


def without_timing(resp: GroupRewardResponse) -> dict[str, object]:
    return resp.model_dump()


async def test_a_group_reporting_to_three_replicas_gets_the_single_board_rewards(
    replicas: list[RedisGroupBoard],
) -> None:
    rows = [[True, True, False], [True, False, False], [True, True, True], [False, False, False]]
    importance = [1.0, 2.0, 1.0]
    shared = await asyncio.gather(
        *(
            replicas[i % 3].reward("g1", f"e{i}", row, 4, 10.0, importance=importance)
            for i, row in enumerate(rows)
        )
    )
    solo = GroupBoard()
    alone = await asyncio.gather(
        *(solo.reward("g1", f"e{i}", row, 4, 10.0, importance=importance) for i, row in enumerate(rows))
    )
    assert [without_timing(r) for r in shared] == [without_timing(r) for r in alone]
    assert [r.reward for r in shared] == pytest.approx(completion_focused_rewards(rows, importance))
    assert all(r.group_complete and not r.fallback and r.n_reported == 4 for r in shared)
    report = await replicas[1].report("g1")
    assert report is not None and report == solo.report("g1")


async def test_many_groups_spread_over_replicas_all_complete(replicas: list[RedisGroupBoard]) -> None:
    groups = {f"g{g}": [[(g + i + c) % 3 != 0 for c in range(4)] for i in range(5)] for g in range(20)}
    posts = [
        (gid, i, replicas[(g * 7 + i) % 3].reward(gid, f"{gid}-e{i}", row, 5, 20.0))
        for g, (gid, group) in enumerate(groups.items())
        for i, row in enumerate(group)
    ]
    answers = await asyncio.gather(*(p for _, _, p in posts))
    got: dict[str, list[float]] = {gid: [0.0] * 5 for gid in groups}
    for (gid, i, _), resp in zip(posts, answers, strict=True):
        assert resp.group_complete, (gid, i, resp)
        got[gid][i] = resp.reward
    for gid, group in groups.items():
        assert got[gid] == pytest.approx(completion_focused_rewards(group)), gid


async def test_a_sibling_that_never_reports_falls_back_to_static_weights(
    replicas: list[RedisGroupBoard],
) -> None:
    a, b = replicas[0], replicas[1]
    start = time.monotonic()
    x, y = await asyncio.gather(
        a.reward("g2", "e0", [True, False], 3, 0.5), b.reward("g2", "e1", [True, True], 3, 0.5)
    )
    assert time.monotonic() - start < 3.0
    for resp, row in ((x, [True, False]), (y, [True, True])):
        assert resp.fallback and not resp.group_complete and resp.n_reported == 2
        assert resp.reward == pytest.approx(completion_focused_rewards([row])[0])
    late = await replicas[2].reward("g2", "e2", [False, False], 3, 1.0)  # the group completes late
    assert late.group_complete and late.n_reported == 3
    again = await a.reward("g2", "e0", [True, False], 3, 1.0)  # a retry now gets the group reward
    expected = completion_focused_rewards([[True, False], [True, True], [False, False]])
    assert [again.reward, late.reward] == pytest.approx([expected[0], expected[2]])


async def test_an_aborted_rollout_counts_as_all_false(replicas: list[RedisGroupBoard]) -> None:
    aborted = await replicas[0].reward("g3", "dead", [], 3, 0.0, aborted=True)
    assert aborted.fallback and aborted.reward == 0.0
    a, b = await asyncio.gather(
        replicas[1].reward("g3", "e0", [True, True], 3, 10.0),
        replicas[2].reward("g3", "e1", [True, False], 3, 10.0),
    )
    assert a.group_complete and a.pass_rates == pytest.approx([2 / 3, 1 / 3])
    assert [a.reward, b.reward] == pytest.approx(
        completion_focused_rewards([[True, True], [True, False], None])[:2]
    )


async def _conflicts(board: GroupBoard | RedisGroupBoard) -> list[str]:
    """The same bad reports against any board; returns what each one raised."""
    out: list[str] = []
    await board.reward("g4", "e0", [True, False], 2, 0.0, importance=[1.0, 2.0])
    attempts: list[tuple[str, list[bool], int, list[float] | None]] = [
        ("e1", [True], 2, None),  # ragged
        ("e1", [True, True], 3, None),  # another expected_n
        ("e0", [True, True], 2, None),  # the same episode, other verdicts
        ("e1", [True, True], 2, [2.0, 2.0]),  # other importance
        ("e1", [True, True], 2, [1.0]),  # importance of the wrong length
    ]
    for episode, row, n, importance in attempts:
        try:
            await board.reward("g4", episode, row, n, 0.0, importance=importance)
        except (GroupConflictError, ValueError) as exc:
            out.append(f"{type(exc).__name__}: {exc}")
    done = await board.reward("g4", "e1", [False, False], 2, 1.0)
    again = await board.reward("g4", "e1", [False, False], 2, 1.0)
    assert done == again and done.group_complete
    try:
        await board.reward("g4", "e2", [False, False], 2, 1.0)
    except GroupConflictError as exc:
        out.append(f"{type(exc).__name__}: {exc}")
    return out


async def test_bad_reports_are_refused_exactly_as_on_the_single_board(
    replicas: list[RedisGroupBoard],
) -> None:
    shared = await _conflicts(replicas[0])
    assert shared == await _conflicts(GroupBoard())
    assert len(shared) == 6 and "one too many" in shared[-1] and shared[-2].startswith("ValueError")


async def test_groups_are_forgotten_after_their_ttl_unless_someone_waits(redis_server: str) -> None:
    prefix = uuid.uuid4().hex
    client = aioredis.Redis.from_url(redis_server)
    board = RedisGroupBoard(client, prefix=prefix, ttl_s=0.4, poll_s=0.1)
    await board.reward("old", "e0", [True], 2, 0.0)
    waiting = asyncio.create_task(board.reward("slow", "e0", [True], 2, 5.0))
    await asyncio.sleep(1.0)
    assert await client.exists(f"{prefix}:grp:old", f"{prefix}:grpr:old") == 0
    assert await client.exists(f"{prefix}:grp:slow", f"{prefix}:grpr:slow") == 2  # renewed by its waiter
    late = await board.reward("slow", "e1", [False], 2, 1.0)
    assert late.group_complete and (await waiting).group_complete
    await asyncio.sleep(0.8)
    assert await client.keys(f"{prefix}:*") == []
    await board.aclose()
    await client.aclose()


async def test_a_waiter_that_misses_the_publication_still_completes(replicas: list[RedisGroupBoard]) -> None:
    a, b = replicas[0], replicas[1]
    waiting = asyncio.create_task(a.reward("g5", "e0", [True], 2, 10.0))
    await asyncio.sleep(0.1)
    assert a._listener is not None
    a._listener.cancel()  # the subscription is gone: only the periodic read can see completion
    start = time.monotonic()
    await b.reward("g5", "e1", [False], 2, 10.0)
    out = await waiting
    assert out.group_complete and time.monotonic() - start < 2.0


async def test_while_subscribed_a_waiter_reads_rarely_yet_sees_a_completion_it_was_not_told_of(
    redis_server: str,
) -> None:
    client = aioredis.Redis.from_url(redis_server)
    prefix = uuid.uuid4().hex
    board = RedisGroupBoard(client, prefix=prefix, poll_s=0.1)  # safety reads every 1 s when subscribed
    reads = 0
    real_read = board._read

    async def counted(group_id: str) -> Any:
        nonlocal reads
        reads += 1
        return await real_read(group_id)

    board._read = counted  # type: ignore[method-assign]
    waiting = asyncio.create_task(board.reward("g", "e0", [True], 2, 30.0))
    await asyncio.sleep(1.5)
    assert 1 <= reads <= 4  # every poll_s (0.1 s) it would have been 15
    await client.hset(
        f"{prefix}:grpr:g", "e1", "[false]"
    )  # completed behind the board's back: no publication
    start = time.monotonic()
    out = await asyncio.wait_for(waiting, 10)
    assert out.group_complete and time.monotonic() - start < 2.5
    await board.aclose()
    await client.aclose()


async def test_the_board_follows_the_episode_store(redis_server: str) -> None:
    store = RedisEpisodeStore.from_url(redis_server, prefix="p1")
    shared = board_for_store(store)
    assert isinstance(shared, RedisGroupBoard) and shared.prefix == "p1" and shared.redis is store.redis
    assert isinstance(board_for_store(InMemoryEpisodeStore()), GroupBoard)
    await store.aclose()


async def test_outcomes_recorded_on_one_replica_are_read_on_another_and_expire(redis_server: str) -> None:
    prefix = uuid.uuid4().hex
    client = aioredis.Redis.from_url(redis_server)
    one, two = (RedisGroupBoard(client, prefix=prefix, ttl_s=0.5, poll_s=0.1) for _ in range(2))
    await one.record_outcome("e0", [True, False])
    await one.record_outcome("e1", None)
    assert await two.outcome("e0") == ([True, False], None) and await two.outcome("e1") == (None, None)
    assert await two.outcome("never") is None
    solo = GroupBoard(ttl_s=0.5)
    await solo.record_outcome("e0", [True, False])
    assert await solo.outcome("e0") == ([True, False], None)
    await asyncio.sleep(0.8)
    solo.reap()
    assert await two.outcome("e0") is None and await solo.outcome("e0") is None
    await client.aclose()


async def test_a_burst_of_reports_beyond_the_store_s_connections_is_queued_not_refused(
    redis_server: str,
) -> None:
    store = RedisEpisodeStore.from_url(redis_server, prefix=uuid.uuid4().hex)  # 256 connections
    board = RedisGroupBoard(store.redis, prefix=store.prefix, poll_s=0.5)
    answers = await asyncio.gather(
        *(board.reward(f"g{g}", f"g{g}-e{i}", [i == 0], 2, 60.0) for g in range(300) for i in range(2))
    )
    assert len(answers) == 600 and all(a.group_complete for a in answers)
    await board.aclose()
    await store.aclose()


async def test_an_outcome_names_the_group_it_was_opened_in_on_both_boards(redis_server: str) -> None:
    prefix = uuid.uuid4().hex
    client = aioredis.Redis.from_url(redis_server)
    for board in (RedisGroupBoard(client, prefix=prefix), GroupBoard()):
        await board.record_outcome("e0", [True], "g1")
        await board.record_outcome("e1", None, None)
        assert await board.outcome("e0") == ([True], "g1") and await board.outcome("e1") == (None, None)
        await board.aclose()
    await client.set(f"{prefix}:grpo:old", "[true, false]")  # written by an earlier version: a bare row
    assert await RedisGroupBoard(client, prefix=prefix).outcome("old") == ([True, False], None)
    await client.aclose()


@pytest.mark.parametrize("shared", [True, False], ids=["redis", "in-process"])
async def test_close_waiters_ends_every_wait_at_once(redis_server: str, shared: bool) -> None:
    client = aioredis.Redis.from_url(redis_server)
    board: GroupBoard | RedisGroupBoard = (
        RedisGroupBoard(client, prefix=uuid.uuid4().hex, poll_s=5.0) if shared else GroupBoard()
    )
    waits = [asyncio.create_task(board.reward(f"g{i}", "e0", [True], 2, 600.0)) for i in range(3)]
    await asyncio.sleep(0.3)
    start = time.monotonic()
    board.close_waiters()
    for wait in waits:
        with pytest.raises(BoardClosing):
            await asyncio.wait_for(wait, 5)
    assert time.monotonic() - start < 2.0
    await board.aclose()
    await client.aclose()


async def test_outcomes_nobody_reports_are_dropped_as_new_ones_arrive() -> None:
    now = [0.0]
    board = GroupBoard(ttl_s=10.0, clock=lambda: now[0])
    for i in range(100):
        await board.record_outcome(f"e{i}", [True])
        now[0] += 1.0
    assert await board.outcome("e0") is None and await board.outcome("e88") is None
    assert await board.outcome("e90") == ([True], None) and await board.outcome("e99") == ([True], None)
    assert len(board._outcomes) <= 11
