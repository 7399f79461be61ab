"""Episodes: open (fork every mounted service), step (route tool calls), finish (grade), release.

``Orchestrator`` is the one object behind both the HTTP API and the in-process runner. Each
request is handled by the function registered for the episode's current state (STYLE #9);
the transitions themselves live in ``lifecycle``. Episode ids come from ``secrets`` and are
capabilities: nothing else identifies an episode to its driver.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from compoworld.contracts import ToolResult
from compoworld.errors import CompoWorldError, EpisodeStateLost
from compoworld.runtime.service import ServiceRuntime
from compoworld.sanitize import InputRefused, Limits, check_value
from compoworld.seeding import seeded_rng
from compoworld.settings import Settings
from orchestrator import forks
from orchestrator.api import (
    FinishResponse,
    OpenRequest,
    OpenResponse,
    StepRequest,
    StepResponse,
    ToolMessage,
)
from orchestrator.arguments import BadArguments, parse_arguments
from orchestrator.budget import TrajectoryBudget, message_bytes
from orchestrator.discovery import EpisodeReader, ServiceDirectory
from orchestrator.errors import EpisodeBusy, EpisodeNotFound, InvalidRequest, TrajectoryFull
from orchestrator.exposure import (
    Exposure,
    MetaAnswer,
    Route,
    ToolRef,
    build_exposure,
    exposure_from_plan,
    tool_refs,
)
from orchestrator.grading import Grader, default_grader
from orchestrator.lifecycle import EpisodeRecord, EpisodeState, OrchestratorConfig, OutcomeLedger
from orchestrator.models import Task, Trajectory, Verdict
from orchestrator.prompts import build_prompt
from orchestrator.rubric import complete, rubric_score
from orchestrator.store import EpisodeStore, InMemoryEpisodeStore
from orchestrator.tasksource import TaskRegistry
from orchestrator.trajectory import to_trajectory
from orchestrator.turns import assistant_message, note_environment_error, shown

__all__ = ["Orchestrator"]

log = logging.getLogger(__name__)
S = EpisodeState
EXPOSURE_CACHE = 4096  # live exposures kept per process; beyond it they are rebuilt from the plan
REAP_BATCH = 10_000
PromptBuilder = Callable[[Task, Any], list[dict[str, Any]]]


class Orchestrator:
    """Opens, drives, grades and releases episodes over a service directory."""

    def __init__(
        self,
        directory: ServiceDirectory,
        tasks: TaskRegistry | None = None,
        *,
        config: OrchestratorConfig | None = None,
        store: EpisodeStore | None = None,
        grader: Grader | None = None,
        prompt: PromptBuilder = build_prompt,
        limits: Limits | None = None,
        budget: TrajectoryBudget | None = None,
    ) -> None:
        self.directory = directory
        self.limits = limits or Limits()  # of one tool call's arguments (compoworld.sanitize)
        self.budget = budget or TrajectoryBudget()  # of one episode's recorded messages
        self.tasks = tasks or TaskRegistry()
        self.config = config or OrchestratorConfig()
        self.store: EpisodeStore = store or InMemoryEpisodeStore()
        self.grader = grader or default_grader()
        self.prompt = prompt
        self._refs: dict[str, list[ToolRef]] = {}
        self._exposures: OrderedDict[str, Exposure] = OrderedDict()  # a cache: records hold the plan
        self._opens = 0
        self.released = 0  # episodes whose forks were released (the reaper trims the heap after)
        self.outcomes: OutcomeLedger | None = None  # the group board, told of every episode's end
        Handler = Callable[[EpisodeRecord, Any], Awaitable[Any]]
        self._on_step: dict[EpisodeState, Handler] = {
            S.OPEN: self._step_live,
            S.RUNNING: self._step_live,
            S.FINISHED: self._refuse_calls,
            S.ABORTED: self._refuse_calls,
            S.EXPIRED: self._refuse_calls,
        }
        self._on_finish: dict[EpisodeState, Handler] = {
            S.OPEN: self._finish_live,
            S.RUNNING: self._finish_live,
            S.FINISHED: self._finish_again,
            S.ABORTED: self._finish_aborted,
            S.EXPIRED: self._refuse_finish,
        }

    @classmethod
    def embedded(
        cls,
        runtimes: Mapping[str, ServiceRuntime],
        settings: Settings,
        tasks: Path | TaskRegistry | None = None,
        **kwargs: Any,
    ) -> Orchestrator:
        """An orchestrator calling in-process runtimes directly (no HTTP anywhere)."""
        registry = tasks if isinstance(tasks, TaskRegistry) else TaskRegistry.load(tasks)
        kwargs.setdefault("config", OrchestratorConfig.from_settings(settings))
        kwargs.setdefault("limits", Limits.from_settings(settings))
        kwargs.setdefault("budget", TrajectoryBudget.from_settings(settings))
        return cls(ServiceDirectory.embedded(runtimes, settings), registry, **kwargs)

    async def aclose(self) -> None:
        """Release this process's episodes; with a shared store the other replicas keep serving them."""
        if not self.store.shared:
            for eid in await self.store.ids():
                await self.delete(eid)
        await self.store.aclose()
        await self.directory.aclose()

    # -- open ---------------------------------------------------------------------------

    async def tool_refs(self, service: str) -> list[ToolRef]:
        refs = self._refs.get(service)
        if refs is None:
            refs = self._refs[service] = tool_refs(service, await self.directory.get(service).tool_schemas())
        return refs

    async def open(self, req: OpenRequest) -> OpenResponse:
        """Fork every service the task touches (and its distractors) and expose their tools."""
        task = self._task_of(req)
        services = list(dict.fromkeys([*task.services, *task.distractors]))
        refs = {svc: await self.tool_refs(svc) for svc in services}
        self._opens += 1
        if self._opens % 256 == 0:
            await self.reap()
        if await self.store.count_held() >= self.config.max_live:  # ended ones hold memory too
            raise EpisodeBusy(
                f"{self.config.max_live} episodes are held (live, or ended and not deleted); delete some first"
            )
        rng = seeded_rng("episode", task.id, req.seed)
        rng.shuffle(services)
        exposure = build_exposure(req.mode, services, refs, rng)
        eid = secrets.token_urlsafe(24)
        rec = EpisodeRecord(
            id=eid,
            task=task,
            mode=req.mode,
            seed=req.seed,
            exposure=exposure.plan(),
            messages=self.prompt(task, req.mode),
            max_steps=req.max_steps or self.config.max_steps,
            deadline=time.time() + (req.max_wall_s or self.config.max_wall_s),
            group_id=req.group_id,
            rollout_idx=req.rollout_idx,
            source=req.source or "",
            library_version=self.directory.version,
        )
        await forks.fork_all(self.directory, rec, services)
        self._cache_exposure(eid, exposure)
        await self.store.put(rec)
        if self.outcomes is not None and rec.group_id:  # the group board learns which rollouts started
            await self.outcomes.record_open(rec.group_id, eid)
        return OpenResponse.model_construct(
            episode_id=eid,
            task_id=task.id,
            mode=req.mode,
            messages=list(rec.messages),
            tools=exposure.tools,
            max_steps=rec.max_steps,
            mcp_path=f"/episodes/{eid}/mcp",
        )

    def _task_of(self, req: OpenRequest) -> Task:
        """The request's task: inline, by id, or a session over named services (no rubric, no prompt)."""
        if req.task is not None:
            return req.task
        if req.task_id is not None:
            return self.tasks.get(req.task_id)
        services = list(dict.fromkeys(req.services or []))
        for svc in services:
            if not self.directory.has(svc):
                raise InvalidRequest(f"unknown service '{svc[:64]}'")
        return Task(
            id="session",
            instruction="",
            services=services,
            today=self.config.session_today,
            gold_calls=[],
            rubric=[],
        )

    # -- step ---------------------------------------------------------------------------

    async def _record(self, episode_id: str) -> EpisodeRecord:
        rec = await self.store.get(episode_id)
        if rec is None:
            raise EpisodeNotFound(f"unknown episode '{episode_id[:64]}' (never opened, deleted, or reaped)")
        for service, base in rec.pins.items():  # any replica may serve this turn: route as recorded
            self.directory.get(service).adopt(rec.id, base)
        return rec

    def _lock(self, episode_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self.store.lock(episode_id, self.config.lock_wait_s)

    async def _still(self, episode_id: str) -> EpisodeRecord:
        """The record, read once the turn lock is held (not before: a concurrent DELETE may have
        released it, and a read outside the lock would be a wasted store round trip). An unknown
        id takes the free lock for a moment and answers 404."""
        return await self._record(episode_id)

    def _cache_exposure(self, episode_id: str, exposure: Exposure) -> None:
        self._exposures[episode_id] = exposure
        self._exposures.move_to_end(episode_id)
        while len(self._exposures) > EXPOSURE_CACHE:
            self._exposures.popitem(last=False)

    async def exposure(self, rec: EpisodeRecord) -> Exposure:
        """The episode's live exposure: cached here, or rebuilt from the record's plan."""
        cached = self._exposures.get(rec.id)
        if cached is not None:
            self._exposures.move_to_end(rec.id)
            return cached
        refs = {svc: await self.tool_refs(svc) for svc in rec.exposure.services}
        try:
            exposure = exposure_from_plan(rec.exposure, refs)
        except KeyError as exc:
            raise InvalidRequest(f"episode's tool {exc} is no longer served (the library changed)") from exc
        self._cache_exposure(rec.id, exposure)
        return exposure

    async def step(self, episode_id: str, req: StepRequest) -> StepResponse:
        """Run one assistant turn's tool calls, in order, inside the episode.

        A retried turn (the same ``step_id`` as the latest one) gets the latest answer again.
        """
        async with self._lock(episode_id):
            rec = await self._still(episode_id)
            if req.step_id is not None and rec.last_step is not None and rec.last_step["id"] == req.step_id:
                return StepResponse.model_validate(rec.last_step["response"])
            out: StepResponse = await self._on_step[rec.state](rec, req)
            return out

    async def _refuse_calls(self, rec: EpisodeRecord, req: StepRequest) -> StepResponse:
        raise rec.refuse("tool calls")

    async def _step_live(self, rec: EpisodeRecord, req: StepRequest) -> StepResponse:
        if time.time() > rec.deadline:
            await self._auto_finish(rec, "timeout")
            await self.store.put(rec)
            return self._step_response(rec, [])
        self._check_turn(req)
        rec.advance(S.RUNNING)
        calls = [
            (
                c.id or f"call_{rec.n_tool_calls + i + 1}",
                c.name,
                c.arguments,
                parse_arguments(c.arguments, self.limits),
            )
            for i, c in enumerate(req.tool_calls)
        ]
        turn = assistant_message(req.assistant, calls)
        used = await self._within_budget(rec, turn, len(calls))
        rec.messages.append(turn)
        results: list[ToolMessage] = []
        exposure = await self.exposure(rec)
        lost: ToolResult | None = None
        for index, (call_id, name, raw, args) in enumerate(calls):
            # turn.index.digest: a replica retrying this turn after another died mid-way sends the
            # same ids, and each service answers a call it already ran from its memory of it
            digest = hashlib.sha256(json.dumps([name, raw], sort_keys=True, default=str).encode()).hexdigest()
            if lost is None:
                result = await self._run_call(
                    rec, exposure, name, args, f"{rec.n_steps}.{index}.{digest[:16]}"
                )
                result, content = shown(result)
                note_environment_error(rec, name, result)
                if isinstance(result, ToolResult) and result.code == "episode_gone":
                    lost = result
            else:  # the episode's state is gone: the rest of the turn is not run
                content = json.dumps(lost.envelope(), ensure_ascii=False)
            message = {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
            rec.messages.append(message)
            used += message_bytes(message)
            results.append(ToolMessage.model_construct(tool_call_id=call_id, name=name, content=content))
        rec.n_steps += 1
        rec.n_tool_calls += len(calls)
        rec.n_bytes = used
        rec.touch()
        if lost is not None:  # a grade read from a re-forked seed would be wrong: aborted instead
            await self._abort_for_environment(rec, "episode state lost")
        elif rec.n_steps >= rec.max_steps:
            await self._auto_finish(rec, "max_steps")
        elif self.budget.over(len(rec.messages), used):  # the results crossed it: answered, then ended
            await self._auto_finish(rec, "trajectory_limit")
        response = self._step_response(rec, results)
        if req.step_id is not None:
            rec.last_step = {"id": req.step_id, "response": response.model_dump(mode="json")}
        await self.store.put(rec)
        return response

    async def _within_budget(self, rec: EpisodeRecord, turn: dict[str, Any], n_calls: int) -> int:
        """The episode's recorded bytes with ``turn`` added, or, when the turn (its assistant message
        and one tool message per call) would take it past the budget, the episode ends graded on its
        state so far and the turn is refused (413) before any call runs."""
        if rec.n_bytes < 0:  # a record from before the count (or a fresh one): counted once
            rec.n_bytes = sum(message_bytes(m) for m in rec.messages)
        used = rec.n_bytes + message_bytes(turn)
        why = self.budget.over(len(rec.messages) + 1 + n_calls, used)
        if why:
            await self._auto_finish(rec, "trajectory_limit")
            await self.store.put(rec)
            raise TrajectoryFull(
                f"this turn would record {why}; none of its calls ran and the episode ended "
                f"({rec.state.value}, finish_reason {rec.finish_reason})"
            )
        return used

    def _check_turn(self, req: StepRequest) -> None:
        """The turn's own text (content, call names and ids) is clean data, or the step is refused
        before anything is recorded (in-process callers skip the HTTP edge; ``compoworld.sanitize``)."""
        try:
            check_value(req.assistant, self.limits, "the assistant message")
            check_value([[c.id, c.name] for c in req.tool_calls], self.limits, "a tool call's name or id")
        except InputRefused as exc:
            raise InvalidRequest(exc.message) from exc

    async def _run_call(
        self,
        rec: EpisodeRecord,
        exposure: Exposure,
        name: str,
        args: dict[str, Any] | BadArguments,
        call_id: str,
    ) -> ToolResult | MetaAnswer:
        if isinstance(args, BadArguments):
            return args.error
        route = exposure.resolve(name, args)
        if not isinstance(route, Route):
            return route
        rec.n_real_tool_calls += 1
        return await self.directory.get(route.service).call(rec.id, route.tool, route.args, call_id)

    @staticmethod
    def _step_response(rec: EpisodeRecord, results: list[ToolMessage]) -> StepResponse:
        return StepResponse.model_construct(
            results=results,
            done=rec.terminal,
            state=rec.state.value,
            finish_reason=rec.finish_reason if rec.terminal else "",
            steps_left=rec.steps_left,
            environment_error=rec.environment_error,
        )

    # -- finish / abort ---------------------------------------------------------------

    async def finish(self, episode_id: str, answer: str) -> FinishResponse:
        """Grade the final state and answer. A second finish returns the first result unchanged."""
        async with self._lock(episode_id):
            rec = await self._still(episode_id)
            out: FinishResponse = await self._on_finish[rec.state](rec, answer)
            return out

    async def _finish_live(self, rec: EpisodeRecord, answer: str) -> FinishResponse:
        try:
            check_value(answer, self.limits, "the answer")
        except InputRefused as exc:
            raise InvalidRequest(exc.message) from exc
        if rec.environment_error and "episode_gone" in rec.environment_error:
            await self._abort_for_environment(rec, "episode state lost")
        else:
            try:  # a service that cannot answer stays a 503 (retryable); one that lost the state cannot
                await self._grade(rec, answer, "answered")
            except EpisodeStateLost as exc:  # an error, never a grade read from a fresh seed
                rec.environment_error = f"grading failed: {exc}"[:500]
                await self._abort_for_environment(rec, "episode state lost")
            else:
                await self._freeze(rec)
        await self.store.put(rec)
        return self._finish_response(rec)

    async def _abort_for_environment(self, rec: EpisodeRecord, why: str) -> None:
        """End the episode as the environment's failure (the trainer masks it): aborted, not graded."""
        log.warning("episode %s aborted: %s (%s)", rec.id[:8], why, rec.environment_error)
        self._fail_all(rec, f"{why}: {rec.environment_error}")
        rec.advance(S.ABORTED, f"error: {why}")
        rec.touch()
        await self._freeze(rec)

    async def _finish_again(self, rec: EpisodeRecord, answer: str) -> FinishResponse:
        return self._finish_response(rec)

    async def _finish_aborted(self, rec: EpisodeRecord, answer: str) -> FinishResponse:
        """An episode the environment ended (state lost mid-step) answers its recorded abort, so the
        driver's finish learns ``environment_error`` (the trainer masks it); a driver's abort is final."""
        if rec.environment_error:
            return self._finish_response(rec)
        raise rec.refuse("answers")

    async def _refuse_finish(self, rec: EpisodeRecord, answer: str) -> FinishResponse:
        raise rec.refuse("answers")

    async def _grade(self, rec: EpisodeRecord, answer: str, reason: str) -> None:
        verdicts = await self.grader(rec.task.rubric, EpisodeReader(self.directory, rec.id), answer)
        rec.verdicts = list(verdicts)
        rec.score, rec.complete = rubric_score(rec.verdicts), complete(rec.verdicts)
        rec.answer = answer
        if reason == "answered":
            rec.messages.append({"role": "assistant", "content": answer})
        rec.advance(S.FINISHED, reason)
        rec.touch()

    async def _auto_finish(self, rec: EpisodeRecord, reason: str) -> None:
        """Terminate on a limit; if grading itself fails the episode is aborted, not left hanging."""
        try:
            await self._grade(rec, "", reason)
        except CompoWorldError as exc:
            log.warning("episode %s: grading at %s failed: %s", rec.id[:8], reason, exc)
            rec.environment_error = rec.environment_error or f"grading failed at {reason}: {exc}"
            self._fail_all(rec, f"{reason}; grading failed: {exc}")
            rec.advance(S.ABORTED, f"error: grading failed at {reason}")
        await self._freeze(rec)

    async def abort(self, episode_id: str, reason: str = "aborted") -> FinishResponse:
        """The driver gives up: every criterion counts as failed (the reward's aborted case)."""
        async with self._lock(episode_id):
            rec = await self._still(episode_id)
            if rec.terminal:
                raise rec.refuse("aborts")
            self._fail_all(rec, reason)
            rec.advance(S.ABORTED, reason or "aborted")
            rec.touch()
            await self._freeze(rec)
            await self.store.put(rec)
            return self._finish_response(rec)

    @staticmethod
    def _fail_all(rec: EpisodeRecord, reason: str) -> None:
        rec.verdicts = [
            Verdict(id=c.id, kind=c.kind, label=c.label, passed=False, detail=f"episode aborted: {reason}")
            for c in rec.task.rubric
        ]
        rec.score, rec.complete = 0.0, False

    @staticmethod
    def _finish_response(rec: EpisodeRecord) -> FinishResponse:
        return FinishResponse.model_construct(
            episode_id=rec.id,
            criteria=list(rec.verdicts),
            score=rec.score,
            complete=rec.complete,
            state=rec.state.value,
            finish_reason=rec.finish_reason,
            environment_error=rec.environment_error,
        )

    # -- reads, release, reaping ------------------------------------------------------

    async def trajectory(self, episode_id: str) -> Trajectory:
        rec = await self._record(episode_id)
        return to_trajectory(rec, (await self.exposure(rec)).tools)

    async def exposed_tools(self, episode_id: str) -> list[dict[str, Any]]:
        """The episode's agent-facing tool schemas (what MCP lists)."""
        return list((await self.exposure(await self._record(episode_id))).tools)

    async def task_of(self, episode_id: str) -> Task:
        """The full task, gold calls and rubric included: for admin routes only."""
        return (await self._record(episode_id)).task

    async def state_dump(self, episode_id: str) -> dict[str, Any]:
        """Typed state of every fork of the episode: for admin routes only."""
        rec = await self._record(episode_id)
        return {svc: await self.directory.get(svc).dump(rec.id) for svc in rec.forked}

    async def delete(self, episode_id: str) -> dict[str, Any]:
        """Release the episode's forks in every service and forget it (a live episode is aborted first)."""
        async with self._lock(episode_id):
            rec = await self._still(episode_id)
            if not rec.terminal:
                self._fail_all(rec, "released before finishing")
                rec.advance(S.ABORTED, "released")
                await self._ended(rec)
            await self._release(rec)
            await self.store.pop(episode_id)
        self._exposures.pop(episode_id, None)
        return {"episode_id": episode_id, "state": rec.state.value, "finish_reason": rec.finish_reason}

    async def _release(self, rec: EpisodeRecord) -> None:
        await forks.release(self.directory, rec)
        self.released += 1

    async def _freeze(self, rec: EpisodeRecord) -> None:
        """An episode just ended: its forks become read-only and the group board learns its outcome."""
        await forks.freeze(self.directory, rec)
        await self._ended(rec)

    async def _ended(self, rec: EpisodeRecord) -> None:
        if self.outcomes is not None:
            row = [v.passed for v in rec.verdicts] if rec.state is S.FINISHED else None
            await self.outcomes.record_outcome(rec.id, row, rec.group_id)

    async def keep_alive(self) -> int:
        """Refresh every fork of every episode this orchestrator still holds (``forks.keep_alive``)."""
        return await forks.keep_alive(self.directory, self.store)

    async def reap(self, now: float | None = None) -> int:
        """Expire idle live episodes (forks released) and forget old terminal ones; returns how many.

        With a shared store every replica reaps; an episode another replica is busy with is skipped.
        """
        now = time.time() if now is None else now
        cfg = self.config
        touched = 0
        for eid in await self.store.idle(now - cfg.idle_ttl_s, now - cfg.retain_s, REAP_BATCH):
            try:
                async with self.store.lock(eid, 0):
                    touched += await self._reap_one(eid, now)
            except EpisodeBusy:
                continue
        await self.keep_alive()
        return touched

    async def _reap_one(self, eid: str, now: float) -> int:
        rec = await self.store.get(eid)
        if rec is None:
            return 0
        idle = now - rec.last_active
        if not rec.terminal and idle > self.config.idle_ttl_s:
            self._fail_all(rec, "abandoned")
            rec.advance(S.EXPIRED, "idle")
            await self._ended(rec)
            await self._release(rec)
            await self.store.put(rec)
            return 1
        if rec.terminal and idle > self.config.retain_s:
            await self._release(rec)
            await self.store.pop(eid)
            self._exposures.pop(eid, None)
            return 1
        return 0
