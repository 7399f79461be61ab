"""The group reward board in the shared Redis store: a group's rollouts may report to any replica.

Keys (the episode store's prefix ``p``)::

    p:grp:{gid}     hash: n = rollouts expected, k = criteria, s = criterion importance (JSON),
                    o = rollouts opened with the group's id, t = wall-clock time of the latest open
    p:grpr:{gid}    hash: episode id -> its verdict row as JSON (null: aborted before grading)
    p:groups        pub/sub channel: a group's id, published when its last report arrives
    p:grpo:{eid}    an ended episode's outcome as the orchestrator graded it: JSON {"row": verdicts
                    or null (aborted), "group": the group it was opened in or null}

A report is one Lua script: it checks the report against the group (the same conflicts as the
in-process ``GroupBoard``), adds it, renews both keys' TTL and, when the group is full,
publishes its id. A full group's reports never change again, so every replica computes the same
rewards from them (``group_responses``). A waiting rollout listens for the publication through one
subscription per replica. While that subscription holds, a waiter reads the group again only
every ``10 * poll_s`` (a safety net; at most a third of the TTL) or at its own deadlines; while
it is down, every ``poll_s``, and when it is back every waiter reads at once (a publication may
have been missed meanwhile). Each read renews the TTL, so a group is never forgotten while
someone waits on it. (Reading every ``poll_s`` regardless cost a replica about half a core for
2,000 idle waiters.)
A rollout whose siblings do not all report within its ``timeout_s`` is scored alone
(``fallback_response``), exactly as on the in-process board, and so is one of a group that fewer
than ``expected_n`` rollouts opened, none for ``open_deadline_s`` (``record_open`` counts the opens
on any replica; the deadline is read from the shared wall-clock time of the latest one).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from orchestrator.groups import (
    NOT_OPENED,
    TIMEOUT,
    BoardClosing,
    GroupBoard,
    GroupConflictError,
    GroupRewardResponse,
    RewardBoard,
    check_report,
    fallback_response,
    group_responses,
    open_deadline_left,
    set_soon,
)
from orchestrator.reward import DEFAULT_LAMBDA, GroupRewardReport
from orchestrator.store import store_errors
from orchestrator.store_redis import RedisEpisodeStore

__all__ = ["RedisGroupBoard", "board_for_store"]

log = logging.getLogger(__name__)

# KEYS: meta, reports, channel.  ARGV: n, k (-1: aborted), importance JSON or '', episode, row JSON,
# ttl (ms), group id.  Returns {'ok', count} or {conflict, what the group holds}.
_REPORT = """
local n = redis.call('HGET', KEYS[1], 'n')
if n and n ~= ARGV[1] then return {'n', n} end
n = tonumber(ARGV[1])
if ARGV[2] ~= '-1' then
  local k = redis.call('HGET', KEYS[1], 'k')
  if k and k ~= ARGV[2] then return {'k', k} end
  local s = redis.call('HGET', KEYS[1], 's')
  if ARGV[3] ~= '' and s and s ~= ARGV[3] then return {'s', s} end
end
local prev = redis.call('HGET', KEYS[2], ARGV[4])
if prev and prev ~= ARGV[5] then return {'v', prev} end
local count = redis.call('HLEN', KEYS[2])
if not prev then
  if count >= n then return {'full', tostring(count)} end
  redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
  count = count + 1
end
redis.call('HSET', KEYS[1], 'n', ARGV[1])
if ARGV[2] ~= '-1' then
  redis.call('HSET', KEYS[1], 'k', ARGV[2])
  if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 's', ARGV[3]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
if (not prev) and count == n then redis.call('PUBLISH', KEYS[3], ARGV[7]) end
return {'ok', tostring(count)}
"""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisGroupBoard:
    """The group board every orchestrator replica shares (see the module docstring)."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "cw",
        ttl_s: float = 900.0,
        lam: float = DEFAULT_LAMBDA,
        poll_s: float = 1.0,
        open_deadline_s: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_s <= 0 or poll_s <= 0:
            raise ValueError("ttl_s and poll_s must be > 0")
        if not 0.0 <= lam <= 1.0:
            raise ValueError("lam must be in [0, 1]")
        if open_deadline_s < 0:
            raise ValueError("open_deadline_s must be >= 0 (0: off)")
        self._open_deadline_s = open_deadline_s
        self._clock = clock  # wall clock: every replica reads the time of the latest open
        self.redis = client
        self.prefix = prefix
        self._ttl_ms = int(ttl_s * 1000)
        self._lam = lam
        self._poll_s = poll_s
        self._idle_poll_s = min(10 * poll_s, ttl_s / 3)  # a waiter's reads renew the group's TTL
        self._script = client.register_script(_REPORT)
        self._channel = f"{prefix}:groups"
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._closing = False

    def _keys(self, group_id: str) -> tuple[str, str]:
        return f"{self.prefix}:grp:{group_id}", f"{self.prefix}:grpr:{group_id}"

    async def record_outcome(
        self, episode_id: str, row: list[bool] | None, group_id: str | None = None
    ) -> None:
        """The orchestrator's grading of an ended episode, for any replica's reward route."""
        value = json.dumps({"row": None if row is None else [bool(v) for v in row], "group": group_id})
        with store_errors():
            await self.redis.set(f"{self.prefix}:grpo:{episode_id}", value, px=self._ttl_ms)

    async def outcome(self, episode_id: str) -> tuple[list[bool] | None, str | None] | None:
        with store_errors():
            raw = await self.redis.get(f"{self.prefix}:grpo:{episode_id}")
        if raw is None:
            return None
        held = json.loads(raw)
        if not isinstance(held, dict):  # written before outcomes named their group: a bare row
            return held, None
        return held["row"], held["group"]

    async def record_open(self, group_id: str, episode_id: str) -> None:
        """An episode of ``group_id`` opened (on any replica): count it and note when."""
        meta_key, _ = self._keys(group_id)
        with store_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hincrby(meta_key, "o", 1)
                pipe.hset(meta_key, "t", repr(self._clock()))
                pipe.pexpire(meta_key, self._ttl_ms)
                await pipe.execute()

    def close_waiters(self) -> None:
        """End every wait now with ``BoardClosing`` (shutdown); safe to call from a signal handler."""
        self._closing = True
        for events in list(self._waiters.values()):
            for event in list(events):
                set_soon(event)

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
        """Post one rollout's verdicts and wait for its reward (``GroupBoard.reward``'s contract)."""
        check_report(expected_n, timeout_s, importance)
        row = None if (aborted or verdicts is None) else [bool(v) for v in verdicts]
        if row is not None and importance is not None and len(importance) != len(row):
            raise ValueError(f"importance has {len(importance)} entries for {len(row)} verdicts")
        await self._listen()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        event = asyncio.Event()
        self._waiters.setdefault(group_id, set()).add(event)
        try:
            await self._post(group_id, episode_id, row, expected_n, importance)
            while True:
                event.clear()  # before the read: a publication after it wakes the wait below
                meta, rows = await self._read(group_id)
                if len(rows) >= expected_n:
                    _, result = group_responses(group_id, rows, _importance(meta), self._lam)
                    return result[episode_id]
                if self._closing:
                    raise BoardClosing("the orchestrator is shutting down; send the report again")
                left = deadline - loop.time()
                opened = int(meta.get("o", 0))
                last = float(meta["t"]) if "t" in meta else None
                unopened = open_deadline_left(opened, last, expected_n, self._open_deadline_s, self._clock())
                if left <= 0 or (unopened is not None and unopened <= 0):
                    k = int(meta["k"]) if "k" in meta else None
                    return fallback_response(
                        group_id, episode_id, rows.get(episode_id, row), k, _importance(meta),
                        self._lam, len(rows), expected_n,
                        NOT_OPENED if unopened is not None and unopened <= 0 else TIMEOUT, opened,
                    )  # fmt: skip
                poll = self._idle_poll_s if self._listening() else self._poll_s
                wait = min(left, poll) if unopened is None else min(left, poll, unopened)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), timeout=wait)
        finally:
            events = self._waiters.get(group_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._waiters[group_id]

    async def _post(
        self,
        group_id: str,
        episode_id: str,
        row: list[bool] | None,
        expected_n: int,
        importance: list[float] | None,
    ) -> None:
        meta_key, rows_key = self._keys(group_id)
        args = [
            expected_n,
            -1 if row is None else len(row),
            "" if importance is None or row is None else json.dumps([float(x) for x in importance]),
            episode_id,
            json.dumps(row),
            self._ttl_ms,
            group_id,
        ]
        with store_errors():
            reply = await self._script(keys=[meta_key, rows_key, self._channel], args=args)
        status, held = (_text(x) for x in reply)
        if status == "ok":
            return
        what = {
            "n": f"group {group_id!r} expects {held} rollouts; this report says {expected_n}",
            "k": f"group {group_id!r} is graded on {held} criteria; episode {episode_id!r} reported "
            f"{len(row or [])}",
            "s": f"group {group_id!r} already has different criterion importance",
            "v": f"episode {episode_id!r} already reported different verdicts",
            "full": f"group {group_id!r} already has its {expected_n} reports; {episode_id!r} is one too many",
        }
        raise GroupConflictError(what[status])

    async def _read(self, group_id: str) -> tuple[dict[str, str], dict[str, list[bool] | None]]:
        """The group's settings and reports, renewing its TTL (someone is waiting on it)."""
        meta_key, rows_key = self._keys(group_id)
        with store_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hgetall(meta_key)
                pipe.hgetall(rows_key)
                pipe.pexpire(meta_key, self._ttl_ms)
                pipe.pexpire(rows_key, self._ttl_ms)
                meta, rows, _, _ = await pipe.execute()
        return (
            {_text(k): _text(v) for k, v in meta.items()},
            {_text(k): json.loads(v) for k, v in rows.items()},
        )

    async def report(self, group_id: str) -> GroupRewardReport | None:
        """The full group computation, once the group is complete (None before, or once forgotten)."""
        meta, rows = await self._read(group_id)
        if "n" not in meta or len(rows) < int(meta["n"]):
            return None
        report, _ = group_responses(group_id, rows, _importance(meta), self._lam)
        return report

    def _listening(self) -> bool:
        """The subscription holds: a completed group's publication will wake its waiters here."""
        return self._subscribed.is_set() and self._listener is not None and not self._listener.done()

    def _wake_all(self) -> None:
        for events in list(self._waiters.values()):
            for event in list(events):
                event.set()

    async def _listen(self) -> None:
        """Start this replica's one subscription to completed groups (once), and wait until it holds."""
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen_forever())
        if not self._subscribed.is_set():
            with contextlib.suppress(TimeoutError):  # without it waiters still poll every poll_s
                await asyncio.wait_for(self._subscribed.wait(), timeout=5.0)

    async def _listen_forever(self) -> None:
        from redis.exceptions import ConnectionError as RedisConnectionError

        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(self._channel)
                self._subscribed.set()
                self._wake_all()  # a publication during a reconnect was missed: everyone reads again
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        for event in self._waiters.get(_text(message["data"]), ()):
                            event.set()
            except (RedisConnectionError, OSError) as exc:
                log.warning("group board subscription lost (%s); waiters poll until it is back", exc)
                self._subscribed.clear()
                await asyncio.sleep(self._poll_s)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def aclose(self) -> None:
        """Stop the subscription; the client belongs to the episode store, which closes it."""
        self.close_waiters()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None


def _importance(meta: dict[str, str]) -> list[float] | None:
    return json.loads(meta["s"]) if "s" in meta else None


def board_for_store(store: object, **kwargs: Any) -> RewardBoard:
    """The board that goes with an episode store: shared in Redis when the episodes are."""

    if isinstance(store, RedisEpisodeStore):
        return RedisGroupBoard(store.redis, prefix=store.prefix, **kwargs)
    return GroupBoard(**kwargs)
