"""Run tool calls in-process on per-episode forks: the fast path of task generation and verification.

A ``Session`` is one episode across the services it touches. It forks a service on first
use (with the task's frozen today) and drops every fork on close, so thousands of drafts and
solution runs leave nothing behind. Implemented tools run synchronously (``ServiceRuntime.dispatch``);
only simulated tools await the world model. An implemented read sees typed state, which is a
function of the seed, the frozen day and the writes made so far in that service; so its result
is shared through the ``SeedCache`` across episodes by (call, day, write history): gold,
variants and wrong solutions list the same tables many times, before and after the same
writes. A history with a simulated write is never shared (a world model decides its effect).
A service is forked only when a call has to run there: a session that only reads cached
results forks nothing (a grader reads an unforked service as its seed, which is what it holds).

A session may have a ``parent``: a service the parent forked is forked from the parent's
state, so a solution that repeats the gold calls and then does more starts where the gold
run ended instead of replaying it.

Writes are shared the same way (``lazy``): the result of an implemented write is a function of the
day and the write history before it, so it is kept in the ``SeedCache`` by (service, day, history,
call). A write the cache knows is not run: the service stays unforked, its state is *the seed plus
this history*. It becomes a real fork only when it must: a read or write the cache does not know, or
the grader. Then, if an open session holds a fork with exactly this history (the gold run, which
stays open while its solutions run), the session reads that fork or forks from it; otherwise it
forks from the seed (or its parent) and replays the writes it skipped. A reordered variant, a
solution that only adds reads, or the services a wrong solution leaves as the gold run left them
thus cost no fork and no write.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, cast

from compoworld.contracts import ToolResult
from compoworld.runtime.service import ServiceRuntime
from orchestrator.rubric.readers import RuntimeStateReader, SeedCache

__all__ = ["Session"]


class Session:
    """One episode over a set of runtimes; use as a context manager so its forks are deleted."""

    def __init__(
        self,
        runtimes: Mapping[str, ServiceRuntime],
        episode_id: str,
        today: str,
        cache: SeedCache | None = None,
        *,
        parent: Session | None = None,
        lazy: bool = True,
        skip_known_writes: bool = True,
    ) -> None:
        """``lazy=False`` is the reference the bench compares: every touched service forked at its first
        call, and only reads of the untouched seed shared. ``skip_known_writes=False`` runs every write
        (the gold replay, which must reproduce the recorded results itself)."""
        self.runtimes = runtimes
        self.episode_id = episode_id
        self.today = today
        self.cache = cache or SeedCache()
        self.parent = parent
        self.lazy = lazy
        self.skip_known_writes = lazy and skip_known_writes
        self.forked: list[str] = []
        self.written: set[str] = set(parent.written) if parent is not None else set()
        #: per service, the write calls made so far (tool, arguments, success), None once one was simulated
        self.history: dict[str, list[tuple[str, str, bool]] | None] = (
            {k: (list(v) if v is not None else None) for k, v in parent.history.items()} if parent else {}
        )
        #: per service, the write calls' arguments in order (what a fork from the seed replays)
        self.calls: dict[str, list[tuple[str, Any]]] = (
            {k: list(v) for k, v in parent.calls.items()} if parent else {}
        )
        #: per service, how many of those the parent's fork already holds
        self._inherited = {k: len(v) for k, v in self.calls.items()}
        #: services a simulated tool was called in (their fork is not a function of the write history)
        self.simulated: set[str] = set(parent.simulated) if parent is not None else set()
        if lazy:
            self.cache.live.append(self)

    def open(self, services: Iterable[str]) -> Session:
        """Fork these services now (a grader may read a service the calls never touched)."""
        for service in services:
            self._ensure(service)
        return self

    def _live(self, service: str) -> Session | None:
        """Another open session whose fork of ``service`` holds exactly the state this one means there."""
        history = self.history.get(service, [])
        if history is None or service in self.simulated:
            return None
        for other in self.cache.live:
            if (
                other is not self
                and service in other.forked
                and service not in other.simulated
                and other.today == self.today
                and other.history.get(service, []) == history
            ):
                return cast(Session, other)
        return None

    def _ensure(self, service: str) -> ServiceRuntime:
        """The service, forked in this episode: from an open fork with the same history, else from the
        parent's fork or the seed with the writes skipped so far replayed."""
        runtime = self.runtimes[service]
        if service in self.forked:
            return runtime
        calls = self.calls.get(service, [])
        other = self._live(service) if self.lazy else None
        parent = self.parent
        if other is not None:
            runtime.fork(self.episode_id, source=other.episode_id, today=self.today)
            done = len(calls)
        elif parent is not None and service in parent.forked:
            runtime.fork(self.episode_id, source=parent.episode_id, today=self.today)
            done = self._inherited.get(service, 0)
        else:
            runtime.fork(self.episode_id, today=self.today)
            done = 0
        history = self.history.get(service) or []
        for i in range(done, len(calls)):  # writes the cache knew: implemented, so synchronous
            tool, args = calls[i]
            out = runtime.dispatch(self.episode_id, tool, args)
            if not isinstance(out, ToolResult) or (i < len(history) and out.success != history[i][2]):
                raise RuntimeError(f"replaying {service}.{tool} did not reproduce its known result")
        self.forked.append(service)
        return runtime

    async def call(self, service: str, tool: str, args: dict[str, Any]) -> ToolResult:
        """The result of one tool call in this episode."""
        if service not in self.runtimes:
            return ToolResult.fail("unknown_service", f"no service '{service}'")
        runtime = self.runtimes[service] if self.lazy else self._ensure(service)
        bound = runtime.tools.get(tool)
        key = None
        history = self.history.setdefault(service, [])
        canonical = json.dumps(args, sort_keys=True, default=str)
        known = self._known(service, bound, history, canonical, tool)
        if bound is not None and bound.defn.kind == "read" and bound.backend == "implemented":
            if history is not None and (
                self.lazy or not history
            ):  # the reference path shares seed reads only
                key = (service, tool, self.today, canonical, tuple(history))
                hit = self.cache.reads.get(key)
                if hit is not None:
                    return cast(ToolResult, hit)
            other = self._live(service) if self.lazy and service not in self.forked else None
            if other is not None:  # an open fork holds this very state: read it there
                out = cast(ToolResult, runtime.dispatch(other.episode_id, tool, args))
                if key is not None and out.success:
                    self.cache.reads[key] = out
                return out
        else:
            self.written.add(service)
            if known is not None and self.skip_known_writes and service not in self.forked:
                hit = self.cache.writes.get(known)
                if hit is not None:
                    self._record(service, tool, args, canonical, cast(ToolResult, hit))
                    return cast(ToolResult, hit)
        self._ensure(service)
        result = runtime.dispatch(self.episode_id, tool, args)
        out = result if isinstance(result, ToolResult) else await result.run()
        if key is not None and out.success:
            self.cache.reads[key] = out
        if bound is not None and bound.backend == "simulated":
            self.simulated.add(service)
        if bound is not None and bound.defn.is_write:
            if known is not None and out.backend != "simulated":
                self.cache.writes[known] = out
            self._record(service, tool, args, canonical, out)
        return out

    def _known(
        self, service: str, bound: Any, history: list[tuple[str, str, bool]] | None, canonical: str, tool: str
    ) -> tuple[Any, ...] | None:
        """The cache key of this call's result if it is a write whose result the history decides."""
        if not self.lazy or history is None or bound is None or not bound.defn.is_write:
            return None
        if bound.backend == "simulated" or service in self.simulated:
            return None
        return (service, self.today, tuple(history), tool, canonical)

    def _record(self, service: str, tool: str, args: Any, canonical: str, out: ToolResult) -> None:
        self.calls.setdefault(service, []).append((tool, args))
        history = self.history.get(service)
        if history is None:
            return
        if out.backend == "simulated":
            self.history[service] = None
        else:
            history.append((tool, canonical, out.success))

    def select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        return self._ensure(service).select(self.episode_id, table, where)

    def state_hash(self, service: str) -> str:
        """The runtime's own (full) state hash of this episode in ``service``."""
        return self._ensure(service).state_hash(self.episode_id)

    def reader(self) -> RuntimeStateReader:
        """The grader's view of this episode (services never written to read as their seed).

        A service the parent wrote to reads as the parent left it; one whose writes were all known
        reads the open fork with the same history, or is forked now.
        """
        if not self.lazy:
            if self.parent is not None:
                self.open([s for s in self.parent.forked if s in self.parent.written])
            return RuntimeStateReader(self.runtimes, self.episode_id, self.cache)
        elsewhere: dict[str, str] = {}
        for service in sorted(self.written):
            if service in self.forked:
                continue
            other = self._live(service)
            if other is not None:
                elsewhere[service] = other.episode_id
            else:
                self._ensure(service)
        return RuntimeStateReader(self.runtimes, self.episode_id, self.cache, elsewhere=elsewhere)

    def close(self) -> None:
        for service in self.forked:
            self.runtimes[service].delete(self.episode_id)
        self.forked = []
        self.written = set()
        if self in self.cache.live:
            self.cache.live.remove(self)

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
