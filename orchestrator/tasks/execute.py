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
    ) -> None:
        """``lazy=False`` is the reference the bench compares: every touched service forked at its first
        call, and only reads of the untouched seed shared."""
        self.runtimes = runtimes
        self.episode_id = episode_id
        self.today = today
        self.cache = cache or SeedCache()
        self.parent = parent
        self.lazy = lazy
        self.forked: list[str] = []
        self.written: set[str] = set(parent.written) if parent is not None else set()
        #: per service, the write calls made so far (tool, arguments, success), None once one was simulated
        self.history: dict[str, list[tuple[str, str, bool]] | None] = (
            {k: (list(v) if v is not None else None) for k, v in parent.history.items()} if parent else {}
        )

    def open(self, services: Iterable[str]) -> Session:
        """Fork these services now (a grader may read a service the calls never touched)."""
        for service in services:
            self._ensure(service)
        return self

    def _ensure(self, service: str) -> ServiceRuntime:
        runtime = self.runtimes[service]
        if service not in self.forked:
            parent = self.parent
            source = parent.episode_id if parent is not None and service in parent.forked else None
            runtime.fork(self.episode_id, source=source, today=self.today)
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
        if bound is not None and bound.defn.kind == "read" and bound.backend == "implemented":
            if history is not None and (
                self.lazy or not history
            ):  # the reference path shares seed reads only
                key = (service, tool, self.today, canonical, tuple(history))
                hit = self.cache.reads.get(key)
                if hit is not None:
                    return cast(ToolResult, hit)
        else:
            self.written.add(service)
        self._ensure(service)
        result = runtime.dispatch(self.episode_id, tool, args)
        out = result if isinstance(result, ToolResult) else await result.run()
        if key is not None and out.success:
            self.cache.reads[key] = out
        if bound is not None and bound.defn.is_write and history is not None:
            if out.backend == "simulated":
                self.history[service] = None
            else:
                history.append((tool, canonical, out.success))
        return out

    def select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        return self._ensure(service).select(self.episode_id, table, where)

    def state_hash(self, service: str) -> str:
        """The runtime's own (full) state hash of this episode in ``service``."""
        return self._ensure(service).state_hash(self.episode_id)

    def reader(self) -> RuntimeStateReader:
        """The grader's view of this episode (services never forked read as their seed).

        A service the parent wrote to is forked first, so it reads as the parent left it.
        """
        if self.parent is not None:
            self.open([s for s in self.parent.forked if s in self.parent.written])
        return RuntimeStateReader(self.runtimes, self.episode_id, self.cache)

    def close(self) -> None:
        for service in self.forked:
            self.runtimes[service].delete(self.episode_id)
        self.forked = []
        self.written = set()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
