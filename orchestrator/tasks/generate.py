"""Generate verified cross-service tasks from a library: walk, replay, rubric, instruction, verify.

Each task index has its own rng (``compoworld.seeding`` of seed and index), so a task depends only on the
library, the options and its index: the same seed reproduces the same file byte for byte.
Everything runs in-process on forks (one event loop for the whole batch). A walk that
fails, or a task that does not verify, is retried a bounded number of times and then
reported, never written.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pydantic import BaseModel, Field

from compoworld.runtime.service import ServiceRuntime
from compoworld.seeding import derive_seed, seeded_rng
from compoworld.settings import Settings
from orchestrator.graph.build import build_graph
from orchestrator.graph.model import ToolGraph
from orchestrator.models import CriterionSpec, GoldCall, Task, TaskMeta
from orchestrator.rubric.answers import CodeType, kind_of
from orchestrator.rubric.readers import SeedCache
from orchestrator.tasks.criteria import AnswerSpec, GoldWrite, SkippedWrite, build_rubric
from orchestrator.tasks.execute import Session
from orchestrator.tasks.instruction import Paraphraser, leaks, render_instruction
from orchestrator.tasks.paths import MISSING, parse_step_ref, resolve_source
from orchestrator.tasks.replay import replay
from orchestrator.tasks.seeds import SeedIndex
from orchestrator.tasks.shape import add_condition, choose_answers, prune_unused_reads
from orchestrator.tasks.verify import SolutionRates, TaskCheck, check_task
from orchestrator.tasks.walk import DraftRejected, Walk, WalkConfig, Walker

__all__ = [
    "GenerateOptions",
    "GenerationReport",
    "TaskGenerator",
    "capabilities",
    "generate_tasks",
    "held_out",
]


class GenerateOptions(BaseModel):
    """Knobs of a generation run."""

    n: int = Field(default=100, ge=1, description="Tasks to produce.")
    seed: int = Field(default=0, description="Generation seed; with the library it fixes every task.")
    min_len: int = Field(default=2, ge=1, le=8, description="Fewest walk steps.")
    max_len: int = Field(default=6, ge=1, le=8, description="Most walk steps.")
    today: str = Field(default="2026-01-15", description="Frozen date of every task (and of the forks).")
    split_services: list[str] = Field(
        default_factory=list, description="Services held out for the test split."
    )
    attempts: int = Field(default=6, ge=1, description="Walks tried per task index before giving up on it.")
    max_index_factor: int = Field(default=3, ge=1, description="Stop after n * this many indices.")
    distractors: tuple[int, int] = Field(
        default=(2, 6), description="Bounds of distractor services per task."
    )
    conditional_rate: float = Field(default=0.2, ge=0, le=1, description="Share of walks ending in a branch.")
    cross_weight: float = Field(
        default=4.0, gt=0, description="Weight of a cross-service edge vs one within."
    )
    solution_check: bool = Field(
        default=True, description="Run every valid variant and wrong solution on each task before keeping it."
    )


class GenerationReport(BaseModel):
    """What a run produced and why indices were dropped."""

    requested: int = Field(description="Tasks asked for.")
    produced: int = Field(default=0, description="Verified tasks written.")
    indices: int = Field(default=0, description="Task indices tried.")
    walks: int = Field(default=0, description="Walks drawn (all attempts).")
    failures: dict[str, int] = Field(
        default_factory=dict, description="Why attempts were discarded, by reason."
    )
    multi_service_2: float = Field(default=0.0, description="Share of tasks touching 2+ services.")
    multi_service_3: float = Field(default=0.0, description="Share of tasks touching 3+ services.")
    solutions: SolutionRates = Field(
        default_factory=SolutionRates, description="Valid variants and wrong solutions judged, per kind."
    )
    seconds: float = Field(default=0.0, description="Wall time, generation and verification.")
    held_out: list[str] = Field(default_factory=list, description="Services of the test split.")
    cross_service_edges: int = Field(default=0, description="Cross-service edges in the library's graph.")
    paraphrased: int = Field(default=0, description="Instructions replaced by an accepted LLM paraphrase.")

    @property
    def tasks_per_s(self) -> float:
        return self.produced / self.seconds if self.seconds > 0 else 0.0


def held_out(spec: Sequence[str], services: Sequence[str], seed: int) -> list[str]:
    """Held-out services: names as given, or one fraction (``["0.2"]``) chosen by the seed."""
    if len(spec) == 1:
        try:
            share = float(spec[0])
        except ValueError:
            share = -1.0
        if 0 < share < 1:
            count = max(1, round(share * len(services)))
            return sorted(seeded_rng("split", seed).sample(sorted(services), count))
    unknown = sorted(set(spec) - set(services))
    if unknown:
        raise ValueError(f"--split-services names services not in the library: {', '.join(unknown)}")
    return sorted(set(spec))


def capabilities(walk: Walk, answers: Sequence[str]) -> list[str]:
    """Capability labels the walk really exercises."""
    labels: set[str] = set()
    for step in walk.steps:
        for provenance in step.bindings.values():
            ref = parse_step_ref(provenance)
            if ref is None:
                continue
            labels.add("sequential-dependency")
            if walk.steps[ref[0]].service != step.service:
                labels.add("cross-service")
                if step.kind == "write":
                    labels.add("cross-env-constraint")
        if step.condition is not None:
            labels.add("conditional-branch")
    if any(a.startswith(("count:", "sum:")) for a in answers):
        labels.add("aggregation")
    if any(a.startswith("step:") for a in answers):
        labels.add("information-retrieval")
    if sum(1 for s in walk.steps if s.kind == "write" and s.executed) >= 2:
        labels.add("multi-write")
    return sorted(labels)


class TaskGenerator:
    """Generates and verifies tasks over one loaded library."""

    def __init__(
        self,
        runtimes: Mapping[str, ServiceRuntime],
        options: GenerateOptions,
        *,
        graph: ToolGraph | None = None,
        paraphraser: Paraphraser | None = None,
    ) -> None:
        self.runtimes = runtimes
        self.options = options
        self.graph = graph or build_graph([r.manifest for r in runtimes.values()])
        self.seeds = SeedIndex(runtimes)
        config = WalkConfig(
            min_len=options.min_len, max_len=options.max_len, cross_weight=options.cross_weight
        )
        self.walker = Walker(self.graph, runtimes, self.seeds, config, options.today)
        self.held_out = held_out(options.split_services, sorted(runtimes), options.seed)
        self.manifests = {name: rt.manifest for name, rt in runtimes.items()}
        self.paraphraser = paraphraser
        self.cache = SeedCache()

    async def one(self, index: int, report: GenerationReport) -> tuple[Task, TaskCheck] | None:
        """The verified task of one index, or None after ``attempts`` failed tries (reasons in the report)."""
        rng = seeded_rng(self.options.seed, index)
        for attempt in range(self.options.attempts):
            report.walks += 1
            try:
                outcome = await self._draft(rng, index, attempt)
            except DraftRejected as rejected:
                report.failures[rejected.reason] = report.failures.get(rejected.reason, 0) + 1
                continue
            # the plan replay already ran these gold calls on fresh forks and recorded the hashes
            check = await check_task(
                outcome,
                self.runtimes,
                self.seeds,
                cache=self.cache,
                solutions=self.options.solution_check,
                hashes=False,
            )
            if not check.valid:
                reason = "verification: " + re.sub(
                    r"\b(c|step |gold step )\d+\b ?", "", check.reasons[0].split(":")[0]
                )
                report.failures[reason] = report.failures.get(reason, 0) + 1
                continue
            return outcome, check
        return None

    async def _draft(self, rng: random.Random, index: int, attempt: int) -> Task:
        """One unverified task from a fresh walk; ``DraftRejected`` with the reason when it cannot be one."""
        opts = self.options
        episode = f"taskgen:{opts.seed}:{index}:{attempt}"
        with Session(self.runtimes, episode, opts.today) as session:
            walk = await self.walker.walk(rng, session)
        sources = choose_answers(rng, walk, self.seeds)
        add_condition(rng, walk, self.seeds, sources, opts.conditional_rate)
        sources = prune_unused_reads(walk, sources)
        if len(walk.steps) < opts.min_len:
            raise DraftRejected("walk too short once unused lookups are dropped")
        services = sorted(set(walk.services))
        distractors = self._distractors(rng, services)
        with Session(self.runtimes, episode + ":plan", opts.today, self.cache).open(services) as session:
            replayed = await replay(walk.steps, session, resolve=True)
            for i, step in enumerate(walk.steps):
                ran = replayed.args[i] is not None
                if ran != step.executed or (ran and replayed.results[i] is MISSING):
                    raise DraftRejected("replay diverged from the walk")
                if ran:
                    step.arguments = replayed.args[i] or {}
            answers = [(s, resolve_source(s, replayed.results)) for s in sources]
            if any(v is MISSING for _, v in answers):
                raise DraftRejected("answer does not resolve on replay")
            writes, skipped = self._writes(walk, replayed.results)
            reader = session.reader()
            rubric = await build_rubric(
                reader,
                self.manifests,
                services,
                distractors,
                writes,
                [self._answer(rng, walk, s, v) for s, v in answers],
                skipped,
            )
            walk.results = replayed.results
            hashes = {svc: await reader.state_hash(svc) for svc in services}
        instruction = render_instruction(
            walk.steps, walk.nodes, answers, self.manifests, walk.aggregate, walk.rows
        )
        if leaks(instruction.text, instruction.hidden):
            raise DraftRejected("instruction would reveal a looked-up value")
        text = instruction.text
        if self.paraphraser is not None:
            text = await self.paraphraser(instruction, derive_seed("paraphrase", episode) % 2**32)
        return self._task(rng, index, walk, sources, answers, rubric, hashes, text, distractors)

    def _distractors(self, rng: random.Random, services: list[str]) -> list[str]:
        split = "test" if set(services) & set(self.held_out) else "train"
        pool = [
            s
            for s in sorted(self.runtimes)
            if s not in services and (split == "test" or s not in self.held_out)
        ]
        lo, hi = self.options.distractors
        k = min(len(pool), rng.randint(min(lo, hi), max(lo, hi)))
        return sorted(rng.sample(pool, k))

    def _writes(self, walk: Walk, results: Sequence[Any]) -> tuple[list[GoldWrite], list[SkippedWrite]]:
        writes: list[GoldWrite] = []
        skipped: list[SkippedWrite] = []
        for step, node, result in zip(walk.steps, walk.nodes, results, strict=True):
            manifest = self.manifests[node.service]
            tool = manifest.tool(node.tool)
            if tool is None or node.kind != "write":
                continue
            entity = manifest.entity(node.entity or "")
            if step.executed:
                writes.append(GoldWrite(node.service, tool, entity, step.arguments, result))
            elif step.condition is not None:
                skipped.append(SkippedWrite(node.service, tool, entity, step.arguments))
        return writes, skipped

    def _answer(self, rng: random.Random, walk: Walk, source: str, value: Any) -> AnswerSpec:
        """The typed answer check of a walk's answer source, with rivals from the same column's other rows."""
        kind, _, rest = source.partition(":")
        index_s, _, path = rest.partition(":")
        node = walk.nodes[int(index_s)]
        entity = self.seeds.entity(node.service, node.entity)
        column = entity.column(path.rsplit(".", 1)[-1]) if entity and kind != "count" else None
        semantic = column.semantic if column else None
        rivals: list[Any] = []
        if kind == "step" and column is not None and entity is not None:
            pool = [r.get(column.name) for r in self.seeds.rows(node.service, entity.table)]
            pool = [
                v for v in pool if isinstance(v, (str, int, float)) and not isinstance(v, bool) and v != value
            ]
            rivals = rng.sample(pool, min(3, len(pool)))
        answer_kind = kind_of(value, semantic, column.format if column else None)
        code_type = cast(CodeType, semantic) if answer_kind == "code" else None
        return AnswerSpec(
            what="", kind=answer_kind, value=value, code_type=code_type, rivals=rivals, source=source
        )

    def _task(
        self,
        rng: random.Random,
        index: int,
        walk: Walk,
        sources: list[str],
        answers: list[tuple[str, Any]],
        rubric: list[CriterionSpec],
        hashes: dict[str, str],
        instruction: str,
        distractors: list[str],
    ) -> Task:
        opts = self.options
        services = sorted(set(walk.services))
        split = "test" if set(services) & set(self.held_out) else "train"
        in_order = [self.manifests[s.service].domain for s in walk.steps]
        counts = Counter(in_order)
        domain = max(dict.fromkeys(in_order), key=lambda d: counts[d])
        gold = [
            GoldCall(service=s.service, tool=s.tool, arguments=s.arguments, result=r)
            for s, r in zip(walk.steps, walk.results, strict=True)
            if s.executed
        ]
        return Task(
            id=f"cw-s{opts.seed}-{index:05d}",
            instruction=instruction,
            services=services,
            distractors=distractors,
            today=opts.today,
            gold_calls=gold,
            rubric=rubric,
            answer_keys=[str(v) for _, v in answers],
            expected_state_hash=hashes,
            meta=TaskMeta(
                walk=walk.steps,
                capabilities=capabilities(walk, sources),
                domain=domain,
                seed=opts.seed,
                split=split,
                library_version=self.graph.library_version,
            ),
        )

    async def run(self, progress: Callable[[int], None] | None = None) -> tuple[list[Task], GenerationReport]:
        opts = self.options
        report = GenerationReport(
            requested=opts.n,
            held_out=self.held_out,
            cross_service_edges=sum(1 for e in self.graph.edges if e.cross_service),
        )
        tasks: list[Task] = []
        start = time.perf_counter()
        index = 0
        while len(tasks) < opts.n and index < opts.n * opts.max_index_factor:
            outcome = await self.one(index, report)
            index += 1
            if outcome is None:
                continue
            task, check = outcome
            tasks.append(task)
            report.solutions.add(check)
            if progress is not None:
                progress(len(tasks))
        report.indices = index
        report.produced = len(tasks)
        report.seconds = time.perf_counter() - start
        if tasks:
            report.multi_service_2 = sum(len(t.services) >= 2 for t in tasks) / len(tasks)
            report.multi_service_3 = sum(len(t.services) >= 3 for t in tasks) / len(tasks)
        if self.paraphraser is not None:
            report.paraphrased = self.paraphraser.accepted
        return tasks, report


def generate_tasks(
    runtimes: Mapping[str, ServiceRuntime],
    options: GenerateOptions,
    *,
    progress: Callable[[int], None] | None = None,
    settings: Settings | None = None,
) -> tuple[list[Task], GenerationReport]:
    """Synchronous entry point: one event loop for the whole batch (paraphrasing if an LLM is configured)."""

    async def main() -> tuple[list[Task], GenerationReport]:
        paraphraser = None
        client = None
        if settings is not None and settings.llm_base_url:
            from compoworld.llm import LLMClient

            client = LLMClient(
                settings.llm_base_url,
                settings.llm_model,
                settings.llm_api_key,
                timeout_s=settings.llm_timeout_s,
                retries=settings.llm_retries,
            )
            paraphraser = Paraphraser(client)
        try:
            return await TaskGenerator(runtimes, options, paraphraser=paraphraser).run(progress)
        finally:
            if client is not None:
                await client.close()

    return asyncio.run(main())
