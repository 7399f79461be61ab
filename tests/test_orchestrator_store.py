"""Episodes in a shared Redis store: any replica serves any turn, retries never run a turn twice.

Real ``redis-server`` on 127.0.0.1 (``tests/redis_fixture.py``) and real services over HTTP
(uvicorn on 127.0.0.1). Each "replica" is an ``Orchestrator`` with its own Redis client and its
own HTTP client, sharing nothing in memory with the others.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from compoworld.runtime import ServiceRuntime, create_library_app
from compoworld.settings import Settings
from orchestrator.api import OpenRequest, StepRequest, ToolCall
from orchestrator.discovery import ServiceDirectory
from orchestrator.episodes import Orchestrator
from orchestrator.errors import EpisodeBusy, EpisodeConflict
from orchestrator.lifecycle import EpisodeState, OrchestratorConfig
from orchestrator.store_redis import RedisEpisodeStore
from tests.orchestrator_fixture import runtimes, serving, task_create, task_update, tool_content
from tests.redis_fixture import redis_server

__all__ = ["redis_server"]

SETTINGS = Settings(admin_token="tok")


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[tuple[dict[str, ServiceRuntime], dict[str, list[str]]]]:
    rts = runtimes(tmp_path / "lib")
    async with serving(create_library_app(rts, SETTINGS)) as url:
        yield rts, {name: [f"{url}/services/{name}"] for name in rts}


def replica(redis_url: str, urls: dict[str, list[str]], prefix: str, **config: float) -> Orchestrator:
    store = RedisEpisodeStore.from_url(redis_url, prefix=prefix, lease_s=config.pop("lease_s", 30.0))
    cfg = OrchestratorConfig(**config)  # type: ignore[arg-type]
    return Orchestrator(ServiceDirectory.remote(SETTINGS, urls), config=cfg, store=store)


def turn(name: str, args: object, step_id: str | None = None) -> StepRequest:
    return StepRequest(tool_calls=[ToolCall(id="c1", name=name, arguments=args)], step_id=step_id)


async def test_any_replica_serves_any_turn_of_an_episode(redis_server: str, mesh) -> None:  # type: ignore[no-untyped-def]
    rts, urls = mesh
    prefix = uuid.uuid4().hex
    a, b, c = (replica(redis_server, urls, prefix) for _ in range(3))
    opened = await a.open(OpenRequest(task=task_update(), mode="gateway"))
    eid = opened.episode_id
    listed = await b.step(eid, turn("list_tools", {"service": "desk"}))  # exposure rebuilt from the plan
    assert "updateContact" in listed.results[0].content
    args = {"tool_name": "desk__updateContact", "arguments": {"id": "con_000005", "status": "customer"}}
    changed = await c.step(eid, turn("call_tool", args))
    assert tool_content(changed.results[0])["data"]["status"] == "customer"
    graded = await a.finish(eid, "")
    assert graded.complete is True
    traj_b, traj_c = await b.trajectory(eid), await c.trajectory(eid)
    assert traj_b == traj_c and traj_b.tools == opened.tools
    assert traj_b.meta.n_steps == 3  # two turns and the answer
    roles = [m["role"] for m in traj_b.messages][-5:]
    assert roles == ["assistant", "tool", "assistant", "tool", "assistant"]
    await c.delete(eid)
    assert not any(rt.has_episode(eid) for rt in rts.values())
    keys = await aioredis.Redis.from_url(redis_server).keys(f"{prefix}:*")
    assert keys == [], keys  # nothing left behind: record, log, indexes, lock
    for r in (a, b, c):
        await r.aclose()


async def test_a_retried_turn_is_answered_again_not_run_twice(redis_server: str, mesh) -> None:  # type: ignore[no-untyped-def]
    rts, urls = mesh
    a, b = (replica(redis_server, urls, uuid.uuid4().hex[:8] + "x") for _ in range(2))
    b = replica(redis_server, urls, a.store.prefix)  # type: ignore[attr-defined]
    opened = await a.open(OpenRequest(task=task_create()))
    make = turn("crm__createContact", {"name": "Ann Lee", "email": "ann@example.com"}, step_id="turn-1")
    first = await a.step(opened.episode_id, make)
    again = await b.step(opened.episode_id, make)  # the client lost A's answer and asked B
    assert again == first
    assert len(rts["crm"].write_log(opened.episode_id)) == 1
    rec = await b.store.get(opened.episode_id)
    assert rec is not None and rec.n_steps == 1 and rec.n_tool_calls == 1
    for r in (a, b):
        await r.aclose()


async def test_a_replica_dying_mid_turn_leaves_the_turn_to_another_without_double_writes(
    redis_server: str,
    mesh,  # type: ignore[no-untyped-def]
) -> None:
    rts, urls = mesh
    prefix = uuid.uuid4().hex
    a, b = replica(redis_server, urls, prefix, lease_s=1.0), replica(redis_server, urls, prefix, lease_s=1.0)
    opened = await a.open(OpenRequest(task=task_create()))
    eid = opened.episode_id

    async def die(record: object) -> None:  # A ran the calls, then died before persisting the turn
        raise ConnectionResetError("replica killed")

    a.store.put = die  # type: ignore[method-assign]
    make = turn("crm__createContact", {"name": "Ann Lee", "email": "ann@example.com"}, step_id="t1")
    with pytest.raises(ConnectionResetError):
        await a.step(eid, make)
    assert len(rts["crm"].write_log(eid)) == 1  # the service did run it
    retried = await b.step(eid, make)
    made = tool_content(retried.results[0])
    assert made["success"] is True and made["data"]["name"] == "Ann Lee"
    assert len(rts["crm"].write_log(eid)) == 1  # answered from the service's memory of the call
    graded = await b.finish(eid, made["data"]["id"])
    assert graded.complete is True, graded.criteria
    await b.delete(eid)
    for r in (a, b):
        await r.aclose()


async def test_a_dead_replicas_turn_lock_blocks_the_episode_for_one_lease_at_most(
    redis_server: str,
    mesh,  # type: ignore[no-untyped-def]
) -> None:
    _, urls = mesh
    prefix = uuid.uuid4().hex
    a = replica(redis_server, urls, prefix, lease_s=1.0, lock_wait_s=5.0)
    opened = await a.open(OpenRequest(task=task_create()))
    dead = aioredis.Redis.from_url(redis_server).lock(f"{prefix}:lock:{opened.episode_id}", timeout=1.0)
    assert await dead.acquire()  # held by a replica that then dies without releasing it
    start = time.monotonic()
    out = await a.step(opened.episode_id, turn("crm__listContacts", {}))
    assert 0.5 < time.monotonic() - start < 4.0 and out.state == "running"
    await dead.acquire()
    with pytest.raises(EpisodeBusy):
        async with a.store.lock(opened.episode_id, 0):
            pass
    await a.delete(opened.episode_id)
    await a.aclose()


async def test_a_stale_write_is_fenced_off(redis_server: str, mesh) -> None:  # type: ignore[no-untyped-def]
    _, urls = mesh
    a = replica(redis_server, urls, uuid.uuid4().hex)
    opened = await a.open(OpenRequest(task=task_create()))
    first, second = await a.store.get(opened.episode_id), await a.store.get(opened.episode_id)
    assert first is not None and second is not None
    first.n_steps = 5
    await a.store.put(first)
    second.n_steps = 9  # read before the write above: its put must not overwrite it
    with pytest.raises(EpisodeConflict, match="another replica"):
        await a.store.put(second)
    stored = await a.store.get(opened.episode_id)
    assert stored is not None and stored.n_steps == 5
    await a.delete(opened.episode_id)
    await a.aclose()


async def test_every_replica_reaps_idle_episodes_and_frees_their_forks(redis_server: str, mesh) -> None:  # type: ignore[no-untyped-def]
    rts, urls = mesh
    prefix = uuid.uuid4().hex
    a, b = (
        replica(redis_server, urls, prefix, idle_ttl_s=60),
        replica(redis_server, urls, prefix, idle_ttl_s=60),
    )
    opened = [await a.open(OpenRequest(task=task_create())) for _ in range(3)]
    assert await b.store.count_live() == 3
    assert await b.reap(now=time.time() + 61) == 3
    assert all(not rts["crm"].has_episode(o.episode_id) for o in opened)
    rec = await a.store.get(opened[0].episode_id)
    assert rec is not None and rec.state == EpisodeState.EXPIRED and await a.store.count_live() == 0
    with pytest.raises(EpisodeConflict, match="expired"):
        await a.step(opened[0].episode_id, turn("crm__listContacts", {}))
    await asyncio.gather(*(a.delete(o.episode_id) for o in opened))
    for r in (a, b):
        await r.aclose()


def test_records_round_trip_through_json() -> None:
    from orchestrator.exposure import ExposurePlan
    from orchestrator.lifecycle import EpisodeRecord, record_from_json, record_to_json

    rec = EpisodeRecord(
        id="e", task=task_create(), mode="gateway", seed=3,
        exposure=ExposurePlan("gateway", ["crm", "desk"], [("crm", "createContact")]),
        messages=[{"role": "user", "content": "hi ✓"}], max_steps=4, deadline=time.time() + 60,
        pins={"crm": "http://10.0.0.7:8000"}, last_step={"id": "t1", "response": {"done": False}},
    )  # fmt: skip
    assert record_from_json(record_to_json(rec)) == rec
    bare = record_to_json(rec, with_messages=False)
    assert "messages" not in json.loads(bare)
    assert record_from_json(bare, rec.messages) == rec


async def test_a_long_turn_keeps_its_lock_and_a_stuck_one_is_cut_at_the_turn_limit(redis_server: str) -> None:
    store = RedisEpisodeStore.from_url(redis_server, prefix=uuid.uuid4().hex, lease_s=0.6, turn_limit_s=2.5)
    other = RedisEpisodeStore.from_url(redis_server, prefix=store.prefix, lease_s=0.6)
    async with store.lock("e1", 0):
        await asyncio.sleep(1.5)  # over two leases: renewed while held
        with pytest.raises(EpisodeBusy):
            async with other.lock("e1", 0):
                pass
    async with other.lock("e1", 0):  # released at once on exit
        pass
    start = time.monotonic()
    with pytest.raises(EpisodeBusy, match=r"did not finish within 2\.5 s"):
        async with store.lock("e2", 0):
            await asyncio.sleep(60)  # a turn that never returns
    assert time.monotonic() - start < 10
    async with other.lock("e2", 0):  # and its lock is free again, not renewed forever
        pass
    await asyncio.sleep(1.0)
    assert await store.redis.keys(f"{store.prefix}:lock:*") == []
    for s in (store, other):
        await s.aclose()


async def test_a_replica_reads_only_a_logs_new_tail_yet_sees_it_all(redis_server: str, mesh) -> None:  # type: ignore[no-untyped-def]
    _, urls = mesh
    prefix = uuid.uuid4().hex
    a, b = (replica(redis_server, urls, prefix) for _ in range(2))
    eid = (await a.open(OpenRequest(task=task_create(), mode="direct"))).episode_id
    for i in range(3):  # turns alternate between the replicas: each holds a stale prefix of the log
        await (a if i % 2 == 0 else b).step(eid, turn("crm__listContacts", {"limit": 1}))
    via_a, via_b = await a.store.get(eid), await b.store.get(eid)
    assert via_a is not None and via_b is not None
    assert via_a.messages == via_b.messages and len(via_a.messages) == 2 + 3 * 2  # system, user, 3 turns
    raw = aioredis.Redis.from_url(redis_server)
    # the log only grows, so a replica does not read again what it holds: rewriting the first
    # message behind its back (never done by the store) shows only to a replica that holds nothing
    await raw.lset(f"{prefix}:log:{eid}", 0, json.dumps({"role": "system", "content": "rewritten"}))
    fresh = RedisEpisodeStore.from_url(redis_server, prefix=prefix)
    seen_fresh, seen_a = await fresh.get(eid), await a.store.get(eid)
    assert seen_fresh is not None and seen_fresh.messages[0]["content"] == "rewritten"
    assert seen_a is not None and seen_a.messages == via_a.messages
    await fresh.aclose()
    await raw.delete(f"{prefix}:log:{eid}")  # the log replaced behind the replicas' backs, shorter
    await raw.rpush(f"{prefix}:log:{eid}", json.dumps({"role": "user", "content": "only this"}))
    again = await a.store.get(eid)
    assert again is not None and again.messages == [{"role": "user", "content": "only this"}]
    await raw.aclose()
    await a.delete(eid)
    assert await b.store.get(eid) is None
    for r in (a, b):
        await r.aclose()
