"""A turn on the Redis store is two round trips: lock + read in one script, write + release in another.

What the merge must not lose, on a real ``redis-server`` (``tests/redis_fixture.py``): a turn whose
lease ran out between the two scripts is fenced by the version check and never releases the lock
another turn now holds; a flushed script cache is reloaded; a read after a write in the same turn
sees the write; and a step through a replica costs exactly two store calls.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from orchestrator.api import OpenRequest
from orchestrator.errors import EpisodeConflict
from orchestrator.redislane import Script as _Script
from orchestrator.redislane import ScriptLane
from orchestrator.store_redis import RedisEpisodeStore
from tests.orchestrator_fixture import task_create
from tests.redis_fixture import redis_server
from tests.test_orchestrator_store import mesh, replica, turn

__all__ = ["mesh", "redis_server"]


@pytest.fixture
async def opened(redis_server: str, mesh: Any) -> AsyncIterator[tuple[Any, str, aioredis.Redis]]:  # type: ignore[type-arg]
    _, urls = mesh
    orch = replica(redis_server, urls, uuid.uuid4().hex)
    eid = (await orch.open(OpenRequest(task=task_create()))).episode_id
    raw = aioredis.Redis.from_url(redis_server)
    yield orch, eid, raw
    await orch.delete(eid)
    await orch.aclose()
    await raw.aclose()


async def test_a_turn_whose_lease_ran_out_is_fenced_and_leaves_the_new_holders_lock(
    opened: tuple[Any, str, aioredis.Redis],  # type: ignore[type-arg]
) -> None:
    orch, eid, raw = opened
    store: RedisEpisodeStore = orch.store
    other = RedisEpisodeStore(aioredis.Redis(connection_pool=raw.connection_pool), prefix=store.prefix)
    lock_key = f"{store.prefix}:lock:{eid}"
    with pytest.raises(EpisodeConflict, match="another replica"):
        async with store.lock(eid, 0):
            rec = await store.get(eid)
            assert rec is not None
            rec.n_steps = 7
            await store.put(rec)  # held until the release
            await raw.delete(lock_key)  # the lease ran out between the two scripts ...
            async with other.lock(eid, 0):  # ... and another replica ran a turn meanwhile
                newer = await other.get(eid)
                assert newer is not None
                newer.n_steps = 3
                await other.put(newer)
            await raw.set(lock_key, b"someone-else", px=30_000)  # a third turn holds the lock now
    assert await raw.get(lock_key) == b"someone-else"  # the fenced turn did not release it
    stored = await other.get(eid)
    assert stored is not None and stored.n_steps == 3
    await raw.delete(lock_key)


async def test_a_turn_that_lost_its_lock_but_not_its_version_writes_and_releases_nothing_else(
    opened: tuple[Any, str, aioredis.Redis],  # type: ignore[type-arg]
) -> None:
    orch, eid, raw = opened
    store: RedisEpisodeStore = orch.store
    lock_key = f"{store.prefix}:lock:{eid}"
    async with store.lock(eid, 0):
        rec = await store.get(eid)
        assert rec is not None
        rec.n_steps = 4
        await store.put(rec)
        await raw.set(lock_key, b"next-holder", px=30_000)  # expired, and taken by another turn
    assert await raw.get(lock_key) == b"next-holder"
    await raw.delete(lock_key)
    stored = await store.get(eid)
    assert stored is not None and stored.n_steps == 4  # no newer turn ran: the version check let it in


async def test_a_flushed_script_cache_is_reloaded_mid_turn(
    opened: tuple[Any, str, aioredis.Redis],  # type: ignore[type-arg]
) -> None:
    orch, eid, raw = opened
    store: RedisEpisodeStore = orch.store
    await raw.script_flush()
    async with store.lock(eid, 0):  # lock + read: NOSCRIPT, loaded, run
        rec = await store.get(eid)
        assert rec is not None
        rec.n_steps = 2
        await store.put(rec)
        await raw.script_flush()  # again between the two scripts
    assert await raw.get(f"{store.prefix}:lock:{eid}") is None  # write + release reloaded and ran
    stored = await store.get(eid)
    assert stored is not None and stored.n_steps == 2


async def test_a_read_after_a_write_in_the_same_turn_sees_the_write(
    opened: tuple[Any, str, aioredis.Redis],  # type: ignore[type-arg]
) -> None:
    orch, eid, raw = opened
    store: RedisEpisodeStore = orch.store
    fresh = RedisEpisodeStore(aioredis.Redis(connection_pool=raw.connection_pool), prefix=store.prefix)
    async with store.lock(eid, 0):
        rec = await store.get(eid)
        assert rec is not None
        rec.messages.append({"role": "user", "content": "more"})
        await store.put(rec)
        await store.put(rec)  # a second write sends the held one first: nothing appended twice
        again = await store.get(eid)
        assert again is not None and again.messages == rec.messages and again.version == rec.version
        seen = await fresh.get(eid)  # and it is in Redis, not only in this replica's memory
        assert seen is not None and seen.messages == rec.messages
    after = await fresh.get(eid)
    assert after is not None and after.messages == rec.messages and after.version == rec.version


async def test_a_step_through_a_replica_costs_two_store_calls(
    opened: tuple[Any, str, aioredis.Redis],  # type: ignore[type-arg]
) -> None:
    orch, eid, _ = opened
    calls: list[str] = []
    client = orch.store.redis
    original = client.execute_command

    async def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[0]))
        return await original(*args, **kwargs)

    client.execute_command = counting
    lane = orch.store.lane
    before = lane.calls
    try:
        out = await orch.step(eid, turn("crm__listContacts", {"limit": 1}))
    finally:
        client.execute_command = original
    assert out.state == "running"
    assert calls == [], calls  # nothing through redis-py's command path ...
    assert lane.calls - before == 2  # ... and two scripts on the store's lane: lock + read, write + release


async def test_a_lane_call_cut_mid_answer_leaves_no_stale_reply_behind(redis_server: str) -> None:
    """A script call cancelled after it was sent (its reply still on the wire) must not hand that
    reply to the next call on the same connection: redis-py disconnects it, the next call reconnects."""
    client = aioredis.Redis.from_url(redis_server)
    lane = ScriptLane(client)
    slow = _Script(
        "local t = redis.call('TIME'); while true do local n = redis.call('TIME');"
        " if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > 200000 then break end end; return 'slow'"
    )
    echo = _Script("return ARGV[1]")
    try:
        assert await lane(echo, [], ["warm"]) == b"warm"  # EVALSHA: NOSCRIPT, then EVAL
        call = asyncio.ensure_future(lane(slow, [], []))
        await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for word in ("a", "b", "c"):
            assert await lane(echo, [], [word]) == word.encode()
        assert lane.calls == 5
    finally:
        await lane.aclose()
        await client.aclose()


async def test_a_lane_beyond_its_connections_waits_for_one_on_a_blocking_pool(redis_server: str) -> None:
    store = RedisEpisodeStore.from_url(redis_server, prefix=uuid.uuid4().hex)  # blocking, 256
    store.lane.limit = 4
    store.lane._slots = asyncio.Semaphore(4)
    store.lane._loop = asyncio.get_running_loop()
    echo = _Script("return ARGV[1]")
    try:
        answers = await asyncio.gather(*(store.lane(echo, [], [str(i)]) for i in range(40)))
        assert answers == [str(i).encode() for i in range(40)]
        assert len(store.lane._idle) <= 4
    finally:
        await store.aclose()


class _Recording:
    """The store's lane, recording the ARGV of every script it sends."""

    def __init__(self, lane: ScriptLane) -> None:
        self.lane, self.sent = lane, []  # type: list[list[Any]]

    async def __call__(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        self.sent.append(list(args))
        return await self.lane(script, keys, args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.lane, name)


def _lane_args(store: RedisEpisodeStore) -> list[list[Any]]:
    recording = _Recording(store.lane)
    store.lane = recording  # type: ignore[assignment]
    return recording.sent


async def test_the_task_is_written_once_and_each_replica_reads_it_once(redis_server: str, mesh: Any) -> None:
    """A generated task carries its gold calls' results (~200 KB); it never changes after the open,
    so no turn sends it to Redis again and a replica fetches it only for an episode it has not served."""
    _, urls = mesh
    prefix = uuid.uuid4().hex
    a, b = replica(redis_server, urls, prefix), replica(redis_server, urls, prefix)
    task_json = task_create().model_dump_json()
    sent_a, sent_b = _lane_args(a.store), _lane_args(b.store)
    try:
        eid = (await a.open(OpenRequest(task=task_create()))).episode_id
        for orch in (a, b, b, a, b):
            out = await orch.step(eid, turn("crm__listContacts", {"limit": 1}))
            assert out.state == "running"
        carrying = [args for args in [*sent_a, *sent_b] if any(task_json in str(v) for v in args)]
        assert len(carrying) == 1  # the open's write, and no turn's write since
        raw = aioredis.Redis.from_url(redis_server)
        try:
            assert b'"instruction"' not in await raw.hget(f"{prefix}:ep:{eid}", "r")
            assert await raw.hget(f"{prefix}:ep:{eid}", "t") == task_json.encode()
        finally:
            await raw.aclose()
        seen = await b.store.get(eid)
        assert seen is not None and seen.task == task_create() and seen.n_steps == 5
        held_tags = {args[-1] for args in sent_b if len(args) == 4 and isinstance(args[-1], str)}
        assert "" in held_tags and len(held_tags) == 2  # b asked without a tag once, then with the open's
    finally:
        await a.delete(eid)
        await a.aclose()
        await b.aclose()


async def test_an_id_opened_again_gets_its_new_task_on_a_replica_that_held_the_old(
    redis_server: str, mesh: Any
) -> None:
    _, urls = mesh
    prefix = uuid.uuid4().hex
    a, b = replica(redis_server, urls, prefix), replica(redis_server, urls, prefix)
    try:
        eid = (await a.open(OpenRequest(task=task_create("t-first")))).episode_id
        first = await b.store.get(eid)
        assert first is not None and first.task.id == "t-first"
        rec = await a.store.pop(eid)
        assert rec is not None
        rec.task, rec.version, rec.logged = task_create("t-second"), 0, 0
        await a.store.put(rec)  # the same id, opened again with another task
        again = await b.store.get(eid)
        assert again is not None and again.task.id == "t-second"
    finally:
        await a.store.pop(eid)
        await a.aclose()
        await b.aclose()


async def test_a_record_written_with_its_task_inside_still_reads(redis_server: str) -> None:
    """Records of a store from before tasks were kept apart: ``r`` holds the task, no tag."""
    from orchestrator.exposure import ExposurePlan
    from orchestrator.lifecycle import EpisodeRecord, record_to_json

    prefix, eid = uuid.uuid4().hex, uuid.uuid4().hex
    rec = EpisodeRecord(
        id=eid,
        task=task_create(),
        mode="direct",
        seed=1,
        exposure=ExposurePlan("direct", ["crm"], []),
        messages=[],
        max_steps=3,
        deadline=1e12,
        version=1,  # serialised with the version it has once written
    )
    raw = aioredis.Redis.from_url(redis_server)
    store = RedisEpisodeStore(aioredis.Redis(connection_pool=raw.connection_pool), prefix=prefix)
    try:
        await raw.hset(f"{prefix}:ep:{eid}", mapping={"v": 1, "r": record_to_json(rec, with_messages=False)})
        got = await store.get(eid)
        assert got is not None and got.task == task_create() and got.version == 1
        got.n_steps = 1
        await store.put(got)  # the next write moves the task apart
        assert await raw.hget(f"{prefix}:ep:{eid}", "t") is not None
        fresh = RedisEpisodeStore(aioredis.Redis(connection_pool=raw.connection_pool), prefix=prefix)
        again = await fresh.get(eid)
        assert again is not None and again.task == task_create() and again.n_steps == 1
    finally:
        await store.pop(eid)
        await raw.aclose()
