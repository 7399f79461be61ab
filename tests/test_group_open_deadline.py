"""A group whose missing siblings never opened ends its waiters promptly, on both boards alike.

Every case runs against the in-process ``GroupBoard`` and the shared ``RedisGroupBoard`` (a real
``redis-server`` on 127.0.0.1, ``tests/redis_fixture.py``); the orchestrator's own wiring (an
episode opened with ``group_id`` is counted, ``group_open_deadline_s`` from the settings) is
checked end to end against the embedded app.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator.groups import NOT_OPENED, TIMEOUT, BoardClosing, GroupBoard, GroupRewardResponse
from orchestrator.groups_redis import RedisGroupBoard
from orchestrator.reward import completion_focused_rewards
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, write_library
from tests.redis_fixture import redis_server

__all__ = ["redis_server"]

Board = GroupBoard | RedisGroupBoard
MakeBoard = Callable[..., Board]


@pytest.fixture(params=["in-process", "redis"])
async def make_board(request: pytest.FixtureRequest) -> AsyncIterator[MakeBoard]:
    """A factory of boards of one kind; every board it made is closed after the test."""
    made: list[Board] = []
    clients: list[Any] = []
    prefix = uuid.uuid4().hex
    url = request.getfixturevalue("redis_server") if request.param == "redis" else ""

    def make(**kw: Any) -> Board:
        board: Board
        if request.param == "redis":
            client = aioredis.Redis.from_url(url)
            clients.append(client)
            board = RedisGroupBoard(client, prefix=prefix, poll_s=0.2, **kw)
        else:
            board = GroupBoard(**kw)
        made.append(board)
        return board

    yield make
    for board in made:
        await board.aclose()
    for client in clients:
        await client.aclose()


async def _opened(board: Board, group: str, *episodes: str) -> None:
    for eid in episodes:
        await board.record_open(group, eid)


async def _timed(work: Awaitable[GroupRewardResponse]) -> tuple[GroupRewardResponse, float]:
    start = time.monotonic()
    out = await asyncio.wait_for(work, 30)
    return out, time.monotonic() - start


async def test_waiters_of_a_group_whose_siblings_never_opened_end_at_the_open_deadline(
    make_board: MakeBoard,
) -> None:
    board = make_board(open_deadline_s=0.5)
    await _opened(board, "g", "e0", "e1")  # 2 of 4 rollouts ever opened
    rows = [[True, False], [True, True]]
    (x, took), (y, _) = await asyncio.gather(
        _timed(board.reward("g", "e0", rows[0], 4, 600.0)), _timed(board.reward("g", "e1", rows[1], 4, 600.0))
    )
    assert took < 5.0  # not the 600 s timeout
    for resp, row in ((x, rows[0]), (y, rows[1])):
        assert resp.fallback and not resp.group_complete and resp.reason == NOT_OPENED
        assert resp.n_reported == 2 and resp.reward == pytest.approx(completion_focused_rewards([row])[0])
    late, took = await _timed(board.reward("g", "e0", rows[0], 4, 600.0))  # a retry: answered at once
    assert late == x and took < 1.0


async def test_a_report_after_the_deadline_passed_is_answered_at_once(make_board: MakeBoard) -> None:
    board = make_board(open_deadline_s=0.3)
    await _opened(board, "g", "e0")
    await asyncio.sleep(0.5)
    resp, took = await _timed(board.reward("g", "e0", [True], 3, 600.0))
    assert resp.reason == NOT_OPENED and resp.fallback and took < 1.0


async def test_opens_that_keep_coming_extend_the_deadline_and_a_full_group_completes(
    make_board: MakeBoard,
) -> None:
    board = make_board(open_deadline_s=0.6)
    await _opened(board, "g", "e0")
    first = asyncio.create_task(board.reward("g", "e0", [True], 3, 30.0))
    for eid in ("e1", "e2"):  # each sibling opens 0.4 s after the previous one: within the deadline
        await asyncio.sleep(0.4)
        await _opened(board, "g", eid)
    assert not first.done()
    rest = await asyncio.gather(
        board.reward("g", "e1", [False], 3, 30.0), board.reward("g", "e2", [True], 3, 30.0)
    )
    out = [await first, *rest]
    assert all(r.group_complete and not r.fallback and r.reason == "" for r in out)
    assert [r.reward for r in out] == pytest.approx(completion_focused_rewards([[True], [False], [True]]))


async def test_a_group_every_rollout_opened_waits_for_its_timeout_as_before(make_board: MakeBoard) -> None:
    board = make_board(open_deadline_s=0.2)
    await _opened(board, "g", "e0", "e1")  # all opened; e1 just never reports
    resp, took = await _timed(board.reward("g", "e0", [True], 2, 1.0))
    assert resp.reason == TIMEOUT and resp.fallback and took >= 0.9


async def test_without_opens_or_with_the_check_off_the_timeout_rules(make_board: MakeBoard) -> None:
    plain = make_board(open_deadline_s=0.2)  # a driver that opens without group_id: nothing counted
    resp, took = await _timed(plain.reward("g-none", "e0", [True], 3, 1.0))
    assert resp.reason == TIMEOUT and took >= 0.9
    off = make_board(open_deadline_s=0)
    await _opened(off, "g-off", "e0")
    resp, took = await _timed(off.reward("g-off", "e0", [True], 3, 1.0))
    assert resp.reason == TIMEOUT and took >= 0.9


async def test_both_boards_answer_the_same(redis_server: str) -> None:
    client = aioredis.Redis.from_url(redis_server)
    shared = RedisGroupBoard(client, prefix=uuid.uuid4().hex, poll_s=0.2, open_deadline_s=0.3)
    solo = GroupBoard(open_deadline_s=0.3)
    answers = []
    for board in (solo, shared):
        await _opened(board, "g", "e0", "e1", "e2")
        answers.append(
            await asyncio.gather(
                *(
                    board.reward("g", f"e{i}", [i > 0, i > 1], 5, 60.0, importance=[1.0, 3.0])
                    for i in range(3)
                )
            )
        )
    assert [r.model_dump() for r in answers[0]] == [r.model_dump() for r in answers[1]]
    assert all(r.reason == NOT_OPENED for r in answers[0])
    await shared.aclose()
    await client.aclose()


async def test_shutdown_ends_a_wait_on_the_open_deadline_at_once(make_board: MakeBoard) -> None:
    board = make_board(open_deadline_s=300.0)
    await _opened(board, "g", "e0")
    waiting = asyncio.create_task(board.reward("g", "e0", [True], 2, 600.0))
    await asyncio.sleep(0.3)
    start = time.monotonic()
    board.close_waiters()
    with pytest.raises(BoardClosing):
        await asyncio.wait_for(waiting, 5)
    assert time.monotonic() - start < 2.0


async def test_groups_only_opened_are_reaped_as_new_opens_arrive() -> None:
    now = [0.0]
    board = GroupBoard(ttl_s=10.0, clock=lambda: now[0])
    for i in range(100):
        await board.record_open(f"g{i}", f"e{i}")
        now[0] += 1.0
    assert len(board) <= 12 and "g99" in board and "g0" not in board


async def test_redis_opens_expire_with_the_group_ttl(redis_server: str) -> None:
    client = aioredis.Redis.from_url(redis_server)
    prefix = uuid.uuid4().hex
    board = RedisGroupBoard(client, prefix=prefix, ttl_s=0.4, poll_s=0.1)
    await board.record_open("g", "e0")
    assert await client.hget(f"{prefix}:grp:g", "o") == b"1"
    assert await board.report("g") is None  # opened, nothing reported: no report and no error
    await asyncio.sleep(0.8)
    assert await client.keys(f"{prefix}:*") == []
    await board.aclose()
    await client.aclose()


async def test_the_orchestrator_counts_its_opens_and_reads_the_deadline_from_settings(tmp_path: Path) -> None:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    settings = Settings(admin_token="s3cret", group_open_deadline_s=0.5)
    app, _ = build_embedded_app(tmp_path / "lib", settings, tmp_path / "tasks.jsonl")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        opened = await http.post("/episodes", json={"task_id": "t-create", "group_id": "uid-1"})
        eid = opened.json()["episode_id"]
        assert (await http.post(f"/episodes/{eid}/finish", json={"answer": ""})).status_code == 200
        start = time.monotonic()
        body = {"episode_id": eid, "expected_n": 4, "timeout_s": 60}
        resp = await http.post("/groups/uid-1/reward", json=body)  # 3 siblings never opened
        assert resp.status_code == 200, resp.text
        assert resp.json()["reason"] == NOT_OPENED and resp.json()["fallback"]
        assert time.monotonic() - start < 10.0


async def test_opens_counted_on_one_replica_end_the_wait_on_another(redis_server: str) -> None:
    prefix = uuid.uuid4().hex
    clients = [aioredis.Redis.from_url(redis_server) for _ in range(2)]
    opener, waiter = (RedisGroupBoard(c, prefix=prefix, poll_s=0.2, open_deadline_s=0.5) for c in clients)
    await _opened(opener, "g", "e0", "e1")
    both = await asyncio.gather(_timed(waiter.reward("g", "e0", [True], 3, 600.0)),
                                _timed(opener.reward("g", "e1", [False], 3, 600.0)))  # fmt: skip
    assert all(r.reason == NOT_OPENED and took < 5.0 for r, took in both)
    for board, client in ((opener, clients[0]), (waiter, clients[1])):
        await board.aclose()
        await client.aclose()
