"""Episodes in Redis, shared by every orchestrator replica (``RedisEpisodeStore``).

Several orchestrator replicas behind one Redis; any replica serves any request of any episode.
Keys (prefix ``p``, default ``cw``)::

    p:ep:{id}     hash: v = the record's version, r = the record as JSON without its messages
                  and its task, t = the task as JSON (written once, at the open), g = the tag of
                  that task (a fresh one each time an id is opened)
    p:log:{id}    list: the step log (messages), appended turn by turn
    p:live        zset id -> last activity (wall clock) of live episodes
    p:done        zset id -> last activity of terminal ones, until they are forgotten
    p:lock:{id}   the episode's turn lock: leased, renewed while held, so a replica that dies
                  holding it blocks the episode for one lease at most

Every write is one Lua script that checks the record's ``version`` (a fencing token: a replica
whose lease ran out cannot overwrite a newer turn), then sets the record, appends the new
messages and moves the id between the indexes, atomically.

The step log only grows (``RPUSH``), so a replica keeps the decoded log of the episodes it
served lately (bounded, least recently used first out) and a read fetches the record and only
the messages past the ones it holds, in one script: a turn's cost does not grow with the
episode. A log shorter than the cached one (deleted, then reused) is read whole.

The task never changes after the open, and a generated one carries its gold calls' results
(~200 KB of JSON, against ~1 KB for the rest of the record), so it is written once and a replica
keeps the tasks it decoded lately by their tag: a read sends the tag it holds and gets the task
only when the stored tag differs (an episode it has not served, or an id opened again).

A turn costs two round trips: taking the lock reads the record in the same script
(``SET NX PX`` with a token, then the record and the log tail), and the turn's last write is
held until the lock is let go, then sent with the release in one script (the version check,
the write, then ``DEL`` of the lock only if it still holds this turn's token). A second write
in the same turn sends the held one first; a read after a write sends it first too.

The scripts go out on ``ScriptLane``: redis-py's connections and retry policy, without its
per-command machinery, and each answers one string (the record, its log length and the new
tail as one JSON array) rather than a nested reply, so a turn's store cost is mostly the two
round trips themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

from orchestrator.errors import EpisodeBusy, EpisodeConflict
from orchestrator.lifecycle import (
    EpisodeRecord,
    record_from_json,
    record_to_json,
    task_from_json,
    task_to_json,
)
from orchestrator.models import Task
from orchestrator.redislane import Script as _Script
from orchestrator.redislane import ScriptLane
from orchestrator.store import store_errors

__all__ = ["LOG_CACHE", "RedisEpisodeStore"]

log = logging.getLogger(__name__)


# The record, its task where the reader lacks it, and the log tail, as one string (one bulk
# reply, nothing nested to parse): "<log length>\n<record JSON>\n<task tag>\n<task JSON or
# nothing>\n[<message>,<message>...]". None of the length, the JSON texts or the tag holds a
# newline; the tail is the log's own JSON texts made one JSON array. A record written before
# tasks were kept apart has no tag, and its task is inside the record.
_READ = """
local function read(ep, log_, held, tag)
  local raw = redis.call('HGET', ep, 'r')
  if not raw then return '' end
  local stored = redis.call('HGET', ep, 'g') or ''
  local task = ''
  if stored ~= tag then task = redis.call('HGET', ep, 't') or '' end
  local n = redis.call('LLEN', log_)
  if n < held then held = 0 end
  return n .. '\\n' .. raw .. '\\n' .. stored .. '\\n' .. task .. '\\n['
    .. table.concat(redis.call('LRANGE', log_, held, -1), ',') .. ']'
end
"""

# KEYS: ep, log.  ARGV: messages the reader holds, the task tag it holds.
#   -> the read ("" when there is no record)
_GET = _READ + "return read(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2])\n"

# KEYS: lock, ep, log.  ARGV: token, lease ms, messages the reader holds, the task tag it holds.
#   -> "0" (held by another) or "1" followed by the read ("1" alone: no record)
_LOCK_GET = _READ + (
    "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return '0' end\n"
    "return '1' .. read(KEYS[2], KEYS[3], tonumber(ARGV[3]), ARGV[4])\n"
)

# A write (the version check, the record, new messages, the live/done index), then the lock's
# release if it still holds ``token`` (a write outside a turn sends "", which no lock holds).
# KEYS: ep, log, live, done, lock.  ARGV: token, expected version, record JSON, terminal (0/1),
# score, task tag ("": the task is not sent), task JSON, messages...
#   -> "<put ok> <version now> <released>"
_PUT_RELEASE = """
local ok, version = 1, tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if version ~= tonumber(ARGV[2]) then
  ok = 0
else
  redis.call('HSET', KEYS[1], 'v', version + 1, 'r', ARGV[3])
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'g', ARGV[6], 't', ARGV[7]) end
  if #ARGV > 7 then redis.call('RPUSH', KEYS[2], unpack(ARGV, 8)) end
  local id = string.match(KEYS[1], ':ep:(.*)$')
  if ARGV[4] == '1' then
    redis.call('ZREM', KEYS[3], id)
    redis.call('ZADD', KEYS[4], ARGV[5], id)
  else
    redis.call('ZADD', KEYS[3], ARGV[5], id)
  end
  version = version + 1
end
local released = 0
if redis.call('GET', KEYS[5]) == ARGV[1] then released = redis.call('DEL', KEYS[5]) end
return ok .. ' ' .. version .. ' ' .. released
"""

# KEYS: lock.  ARGV: token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: lock.  ARGV: token, lease ms.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


class _Write:
    """A ``put`` held until the turn ends (or the next write or read in it)."""

    __slots__ = ("args", "expected", "logged", "new", "record")

    def __init__(self, record: EpisodeRecord, expected: int, logged: int, args: list[Any], new: list[str]):
        self.record, self.expected, self.logged, self.args, self.new = record, expected, logged, args, new


class _Turn:
    """The lock a task holds on one episode: its token, the record read with it, a held write."""

    __slots__ = ("fresh", "pending", "read", "task", "token")

    def __init__(self, token: str, task: asyncio.Task[Any] | None) -> None:
        self.token, self.task = token, task
        self.fresh = False  # ``read`` is the record as the lock found it, not yet handed out
        self.read: EpisodeRecord | None = None
        self.pending: _Write | None = None


#: Decoded step logs a replica keeps (episodes it served lately); each entry is the log's prefix.
LOG_CACHE = 4096


class RedisEpisodeStore:
    """Records in Redis, shared by every orchestrator replica (see the module docstring).

    ``lease_s`` bounds how long a dead replica's turn lock blocks its episode; a live holder
    renews it every third of the lease.
    """

    shared = True  # other replicas serve these episodes: closing one replica releases nothing

    def __init__(
        self, client: Any, *, prefix: str = "cw", lease_s: float = 30.0, turn_limit_s: float = 300.0
    ) -> None:
        self.redis = client
        self.prefix = prefix
        self.lease_s = lease_s
        self.turn_limit_s = turn_limit_s
        self.lane = ScriptLane(client)  # the per-turn scripts, off redis-py's command machinery
        self._get, self._lock_get = _Script(_GET), _Script(_LOCK_GET)
        self._put_release, self._release = _Script(_PUT_RELEASE), _Script(_RELEASE)
        self._renew_script = client.register_script(_RENEW)
        self._turns: dict[str, _Turn] = {}
        self._logs: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        #: the task of each episode served lately, by id: (its tag, the task)
        self._tasks: OrderedDict[str, tuple[str, Task]] = OrderedDict()

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisEpisodeStore:
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError, TimeoutError

        retry = Retry(ExponentialBackoff(cap=1.0, base=0.05), 6, (ConnectionError, TimeoutError))
        # a blocking pool: a command beyond the 256 connections waits for one (30 s at most) instead of
        # failing at once, so a burst (a thousand group reports at one replica) is queued, not a 503
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=256, timeout=30, socket_connect_timeout=10, retry=retry
        )
        return cls(aioredis.Redis.from_pool(pool), **kwargs)

    def _key(self, kind: str, episode_id: str = "") -> str:
        return f"{self.prefix}:{kind}:{episode_id}" if episode_id else f"{self.prefix}:{kind}"

    def _turn(self, episode_id: str) -> _Turn | None:
        """The turn this task holds on the episode, if any (a read or write outside it goes straight)."""
        turn = self._turns.get(episode_id)
        return turn if turn is not None and turn.task is asyncio.current_task() else None

    async def get(self, episode_id: str) -> EpisodeRecord | None:
        turn = self._turn(episode_id)
        if turn is not None:
            if turn.fresh:  # read by the lock script a moment ago, under the lock
                turn.fresh = False
                rec, turn.read = turn.read, None
                return rec
            await self._flush(turn)
        held, task = self._logs.get(episode_id, []), self._tasks.get(episode_id)
        with store_errors():
            read = await self.lane(
                self._get,
                [self._key("ep", episode_id), self._key("log", episode_id)],
                [len(held), task[0] if task else ""],
            )
        return self._decode(episode_id, held, read, task)

    def _decode(
        self, episode_id: str, held: list[dict[str, Any]], read: bytes, held_task: tuple[str, Task] | None
    ) -> EpisodeRecord | None:
        """The record from a ``_READ`` answer (empty: none), its log completed from ``held`` and its
        task from the answer or, where the answer leaves it out, ``held_task`` (whose tag the read sent)."""
        if not read:
            self._logs.pop(episode_id, None)
            self._tasks.pop(episode_id, None)
            return None
        length, raw, tag, task_json, new = read.split(b"\n", 4)
        tail: list[dict[str, Any]] = json.loads(new)
        start = int(length) - len(tail)  # len(held), or 0 when the log was read whole
        log_ = [*held[:start], *tail]
        self._remember(episode_id, log_)
        task = None
        if tag:  # the task is kept apart: sent now, or the one held under this tag
            if task_json:
                task = task_from_json(task_json)
                self._hold_task(episode_id, tag.decode(), task)
            elif held_task is not None and held_task[0] == tag.decode():
                task = held_task[1]
                self._hold_task(episode_id, *held_task)
            else:  # the script leaves the task out only for the tag the read sent
                raise EpisodeConflict(f"episode {episode_id[:8]}: its task could not be matched; retry")
        rec = record_from_json(raw, list(log_), task=task)
        rec.logged = len(rec.messages)
        return rec

    def _remember(self, episode_id: str, log_: list[dict[str, Any]]) -> None:
        self._logs[episode_id] = log_
        self._logs.move_to_end(episode_id)
        while len(self._logs) > LOG_CACHE:
            self._logs.popitem(last=False)

    def _hold_task(self, episode_id: str, tag: str, task: Task) -> None:
        self._tasks[episode_id] = (tag, task)
        self._tasks.move_to_end(episode_id)
        while len(self._tasks) > LOG_CACHE:
            self._tasks.popitem(last=False)

    async def put(self, record: EpisodeRecord) -> None:
        turn = self._turn(record.id)
        if turn is not None:
            await self._flush(turn)
        write = self._write(record)
        if turn is not None:  # sent with the lock's release, or before the turn's next read/write
            turn.fresh, turn.read, turn.pending = False, None, write
            return
        await self._send(write)

    def _put_keys(self, episode_id: str) -> list[str]:
        return [
            self._key("ep", episode_id),
            self._key("log", episode_id),
            self._key("live"),
            self._key("done"),
        ]

    def _write(self, record: EpisodeRecord) -> _Write:
        """The write's script arguments; the record counts it as written until the store says otherwise
        (it is serialised with the version it will have once written)."""
        new = [json.dumps(m, ensure_ascii=False, default=str) for m in record.messages[record.logged :]]
        expected, logged = record.version, record.logged
        record.version += 1
        held = self._tasks.get(record.id)
        # the open (or an id opened again) sends the task under a fresh tag; later writes leave it
        first = expected == 0 or held is None or held[1] is not record.task
        tag = uuid.uuid4().hex if first else ""
        args = [
            expected,
            record_to_json(record, with_messages=False, with_task=False),
            int(record.terminal),
            record.last_active,
            tag,
            task_to_json(record.task) if first else "",
        ]
        record.logged = len(record.messages)
        return _Write(record, expected, logged, args, new)

    def _written(self, write: _Write, ok: bool, stored: int) -> None:
        record = write.record
        if not ok:
            record.version, record.logged = write.expected, write.logged
            raise EpisodeConflict(
                f"episode changed on another replica (version {stored}, this turn started at {write.expected}); retry"
            )
        self._remember(record.id, list(record.messages[: record.logged]))
        tag = write.args[4]
        if tag:
            self._hold_task(record.id, tag, record.task)

    async def _flush(self, turn: _Turn) -> None:
        """Send the turn's held write now (a read or another write in the same turn comes next)."""
        write, turn.pending = turn.pending, None
        if write is not None:
            await self._send(write)

    async def _send(self, write: _Write) -> None:
        """One write now, outside a lock's release (its token "" matches no lock)."""
        keys = [*self._put_keys(write.record.id), self._key("lock", write.record.id)]
        with store_errors():
            ok, stored, _ = _outcome(await self.lane(self._put_release, keys, ["", *write.args, *write.new]))
        self._written(write, ok, stored)

    async def pop(self, episode_id: str) -> EpisodeRecord | None:
        with store_errors():
            rec = await self.get(episode_id)
            self._logs.pop(episode_id, None)
            self._tasks.pop(episode_id, None)
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.delete(self._key("ep", episode_id), self._key("log", episode_id))
                pipe.zrem(self._key("live"), episode_id)
                pipe.zrem(self._key("done"), episode_id)
                await pipe.execute()
            return rec

    async def ids(self) -> list[str]:
        with store_errors():
            live = await self.redis.zrange(self._key("live"), 0, -1)
            done = await self.redis.zrange(self._key("done"), 0, -1)
            return sorted(x.decode() for x in [*live, *done])

    async def count_live(self) -> int:
        with store_errors():
            return int(await self.redis.zcard(self._key("live")))

    async def count_held(self) -> int:
        with store_errors():
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zcard(self._key("live"))
                pipe.zcard(self._key("done"))
                live, done = await pipe.execute()
            return int(live) + int(done)

    async def idle(self, live_before: float, done_before: float, limit: int) -> list[str]:
        with store_errors():
            live = await self.redis.zrangebyscore(self._key("live"), "-inf", live_before, start=0, num=limit)
            done = await self.redis.zrangebyscore(self._key("done"), "-inf", done_before, start=0, num=limit)
            return [x.decode() for x in [*live, *done]][:limit]

    @contextlib.asynccontextmanager
    async def lock(self, episode_id: str, wait_s: float) -> AsyncIterator[None]:
        turn = await self._acquire(episode_id, wait_s)
        self._turns[episode_id] = turn
        held = asyncio.Event()
        held.set()
        # the renewer starts only once the turn has lasted a third of the lease: most turns end
        # sooner, and a task made and cancelled per turn costs more than the turn's timer
        renewer: list[asyncio.Task[None]] = []
        start = asyncio.get_running_loop().call_later(
            self.lease_s / 3,
            lambda: renewer.append(asyncio.ensure_future(self._renew(episode_id, turn.token, held))),
        )
        failed = True
        try:
            async with asyncio.timeout(self.turn_limit_s):  # a turn stuck here must not hold the lock forever
                yield
            failed = False
        except TimeoutError:
            log.exception(
                "a turn of episode %s held its lock for %g s; released", episode_id[:8], self.turn_limit_s
            )
            raise EpisodeBusy(f"the turn did not finish within {self.turn_limit_s:g} s; retry") from None
        finally:
            held.clear()  # the renewer stops at its next wake-up even if the cancel below is lost
            start.cancel()
            for renew in renewer:
                renew.cancel()
                await asyncio.wait({renew}, timeout=1.0)
            if self._turns.get(episode_id) is turn:
                del self._turns[episode_id]
            await self._end(episode_id, turn, quiet=failed)

    async def _acquire(self, episode_id: str, wait_s: float) -> _Turn:
        """Take the lock and read the record in one script; retried every 5 ms for ``wait_s``."""
        turn = _Turn(uuid.uuid4().hex, asyncio.current_task())
        keys = [self._key("lock", episode_id), self._key("ep", episode_id), self._key("log", episode_id)]
        stop = time.monotonic() + max(wait_s, 0.0)
        while True:
            held, task = self._logs.get(episode_id, []), self._tasks.get(episode_id)
            with store_errors():
                out = await self.lane(
                    self._lock_get,
                    keys,
                    [turn.token, int(self.lease_s * 1000), len(held), task[0] if task else ""],
                )
            if out[:1] == b"1":
                turn.read, turn.fresh = self._decode(episode_id, held, out[1:], task), True
                return turn
            if wait_s <= 0 or time.monotonic() > stop:
                busy = f"the episode stayed busy for {wait_s:g} s (another replica holds its turn)"
                raise EpisodeBusy(busy)
            await asyncio.sleep(0.005)

    async def _end(self, episode_id: str, turn: _Turn, *, quiet: bool) -> None:
        """Send the held write with the release (one script), or just release. ``quiet``: the turn
        already failed, so a conflict here is logged rather than raised over that failure."""
        write, turn.pending = turn.pending, None
        lock_key = self._key("lock", episode_id)
        with store_errors():
            if write is None:
                released = await self.lane(self._release, [lock_key], [turn.token])
            else:
                keys = [*self._put_keys(episode_id), lock_key]
                ok, stored, released = _outcome(
                    await self.lane(self._put_release, keys, [turn.token, *write.args, *write.new])
                )
        if not released:  # the lease ran out: another turn may hold it now; the version check fenced us
            log.warning("the turn lock of episode %s had expired at release", episode_id[:8])
        if write is not None:
            try:
                self._written(write, ok, stored)
            except EpisodeConflict:
                if not quiet:
                    raise
                log.warning("episode %s: the failed turn's last write was fenced off", episode_id[:8])

    async def _renew(self, episode_id: str, token: str, held: asyncio.Event) -> None:
        """Renew the turn's lease now (a third of it has passed) and every third of it after."""
        while held.is_set():
            try:
                renewed = await self._renew_script(
                    keys=[self._key("lock", episode_id)], args=[token, int(self.lease_s * 1000)]
                )
            except Exception:  # the store did not answer: try again at the next wake-up
                log.warning("could not renew the turn lock of episode %s", episode_id[:8], exc_info=True)
                renewed = True
            if not renewed:
                log.warning(
                    "lost the turn lock of episode %s; the version check fences this turn", episode_id[:8]
                )
                return
            await asyncio.sleep(self.lease_s / 3)

    async def aclose(self) -> None:
        await self.lane.aclose()
        await self.redis.aclose()


def _outcome(answer: bytes) -> tuple[bool, int, int]:
    """``_PUT_RELEASE``'s answer: whether the write was made, the version now, whether the lock was let go."""
    ok, version, released = answer.split()
    return ok == b"1", int(version), int(released)
