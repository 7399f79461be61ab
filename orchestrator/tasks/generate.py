"""Generate verified cross-service tasks from a library: scenarios over a coherent world, rubric, check.

Each task index has its own rng (``compoworld.seeding`` of seed and index), so a task depends only on the
library, the options and its index: the same seed reproduces the same file byte for byte. A scenario
(``orchestrator.tasks.scenario``) picks a workflow archetype, a person the world knows in several
services and a business vertical, and runs its plan on forks; the criteria are read off what the plan
changed. A draft that fails, or a task that does not verify, is retried a bounded number of times and
then reported, never written.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from compoworld.runtime.service import ServiceRuntime
from compoworld.seeding import derive_seed, seeded_rng
from compoworld.settings import Settings
from orchestrator.models import CriterionSpec, GoldCall, Task, TaskMeta
from orchestrator.rubric.readers import SeedCache
from orchestrator.tasks.archetypes import ARCHETYPES
from orchestrator.tasks.criteria import GoldWrite, SkippedWrite, build_rubric
from orchestrator.tasks.execute import Session
from orchestrator.tasks.library import Manifests, TaskLibrary, eager_library
from orchestrator.tasks.rejected import DraftRejected
from orchestrator.tasks.scenario import acts as _acts  # noqa: F401  (registers the act archetype)
from orchestrator.tasks.scenario.draft import Draft
from orchestrator.tasks.scenario.recipes import Archetype, fits
from orchestrator.tasks.scenario.scene import Scene, Subject, open_scene, subjects
from orchestrator.tasks.scenario.spread import SpreadExhausted, Usage, by_service, group_by_service
from orchestrator.tasks.scenario.text import (
    Instruction,
    Paraphraser,
    TermIndex,
    compose,
    internal_terms,
    leaks,
)
from orchestrator.tasks.scenario.verticals import VERTICAL_DOMAINS, vertical_for
from orchestrator.tasks.scenario.world import World
from orchestrator.tasks.verify import SolutionRates, TaskCheck, check_task

__all__ = [
    "GenerateOptions",
    "GenerationReport",
    "TaskGenerator",
    "generate_tasks",
    "held_out",
]


class GenerateOptions(BaseModel):
    """Knobs of a generation run."""

    n: int = Field(default=100, ge=1, description="Tasks to produce.")
    seed: int = Field(default=0, description="Generation seed; with the library it fixes every task.")
    min_len: int = Field(default=2, ge=1, le=40, description="Fewest gold calls a task may have.")
    max_len: int = Field(default=40, ge=1, le=60, description="Most gold calls a task may have.")
    today: str = Field(default="2026-01-15", description="Frozen date of every task (and of the forks).")
    split_services: list[str] = Field(
        default_factory=list, description="Services held out for the test split."
    )
    attempts: int = Field(default=6, ge=1, description="Walks tried per task index before giving up on it.")
    max_index_factor: int = Field(default=3, ge=1, description="Stop after n * this many indices.")
    distractors: tuple[int, int] = Field(
        default=(2, 6), description="Bounds of distractor services per task."
    )
    chain: int = Field(
        default=4, ge=1, le=12, description="Most workflows a scenario chains (the closing message aside)."
    )
    chain_rate: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Chance of chaining each further archetype (up to three, and a message).",
    )
    archetypes: list[str] = Field(
        default_factory=list, description="Archetypes to draw from (default: every registered one)."
    )
    strict_spread: bool = Field(
        default=False,
        description="On a library large enough for the share cap (``scenario.spread``), every try's first "
        "workflow, the chained workflows and the closing message give up rather than take a system past it, "
        "and the opening draws only people with records that first workflow can use in a system under it. "
        "On the whole corpus (1,000 tasks) the busiest service in 2.8% of the tasks instead of 10.3%, 40.9% "
        "same-vertical pairs instead of 35.6%, but 6.9 gold calls instead of 8.4 and 51% touching 4+ "
        "services instead of 69%: off by default.",
    )
    solution_check: bool = Field(
        default=True, description="Run every valid variant and wrong solution on each task before keeping it."
    )
    reuse: bool = Field(
        default=True,
        description="Share work between runs of a task: solutions start from the gold run, reads and changed "
        "tables are kept by write history, services forked only where a call runs (False: the slower "
        "reference, same verdicts).",
    )


class GenerationReport(BaseModel):
    """What a run produced and why indices were dropped."""

    requested: int = Field(description="Tasks asked for.")
    produced: int = Field(default=0, description="Verified tasks written.")
    indices: int = Field(default=0, description="Task indices tried.")
    walks: int = Field(default=0, description="Scenario drafts tried (all attempts).")
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
    people: int = Field(default=0, description="People the world index found (by e-mail) in a party table.")
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


#: capability labels a draft may earn, in the order tasks list them
LABELS = ("discovery", "disambiguation", "conditional", "aggregation", "ranking", "data transformation")


def capabilities(draft: Draft) -> list[str]:
    """Capability labels the scenario earned: each set by the step that needs it."""
    labels = {label for label in draft.labels if label in LABELS}
    if len(draft.services) >= 2:
        labels.add("cross-service")
    if sum(1 for s in draft.steps if s.kind == "write" and s.executed) >= 2:
        labels.add("multi-write")
    return sorted(labels)


class TaskGenerator:
    """Generates and verifies tasks over one loaded library."""

    def __init__(
        self,
        library: TaskLibrary | Mapping[str, ServiceRuntime],
        options: GenerateOptions,
        *,
        paraphraser: Paraphraser | None = None,
    ) -> None:
        """``library``: runtimes already loaded, or a ``TaskLibrary`` (``stream_library`` loads each
        runtime on first use); the same library gives the same tasks either way."""
        lib = library if isinstance(library, TaskLibrary) else eager_library(library)
        self.runtimes = lib.runtimes
        self.options = options
        self.seeds = lib.seeds
        self.world = lib.world
        self.names = lib.names()
        self.held_out = held_out(options.split_services, self.names, options.seed)
        self.manifests = Manifests(lib.runtimes)
        self.version = lib.version
        self.paraphraser = paraphraser
        self.cache = SeedCache(by_history=options.reuse, seed_hashes=lib.seed_hashes)
        names = options.archetypes or ARCHETYPES.names()
        self.archetypes: list[Archetype] = [ARCHETYPES.get(n) for n in names]  # type: ignore[misc]
        everyone = subjects(self.world)
        self.pools: dict[str, list[Subject]] = {
            a.name: [s for s in everyone if _fits(a, s, self.world)] for a in self.archetypes
        }
        #: each pool by the service of its party table, grouped once (the opening draws from it every try)
        self.groups = {name: group_by_service(pool, _party_service) for name, pool in self.pools.items()}
        #: id of a subject -> its record tables counted by service (``_reach``; the subjects live as long)
        self._by_record_service: dict[int, list[tuple[str, int]]] = {}
        #: (id of a subject, archetype) -> the services of the record tables it can use (``_reach``)
        self._fitting: dict[tuple[int, str], list[str]] = {}
        self.terms = TermIndex(lib.terms)
        #: services per kept task so far: every draw of a service balances against it (``spread``)
        self.usage = Usage.for_library(len(self.names))

    async def one(self, index: int, report: GenerationReport) -> tuple[Task, TaskCheck] | None:
        """The verified task of one index, or None after ``attempts`` failed tries (reasons in the report)."""
        rng = seeded_rng(self.options.seed, index)
        for attempt in range(self.options.attempts):
            report.walks += 1
            try:
                outcome, instruction = await self._draft(rng, index, attempt)
            except DraftRejected as rejected:
                report.failures[rejected.reason] = report.failures.get(rejected.reason, 0) + 1
                self.usage.rejected(blame=not isinstance(rejected, SpreadExhausted))
                continue
            check = await check_task(
                outcome,
                self.runtimes,
                self.seeds,
                cache=self.cache,
                solutions=self.options.solution_check,
                hashes=False,
                reuse=self.options.reuse,
            )
            if not check.valid:
                reason = "verification: " + re.sub(
                    r"\b(c|step |gold step )\d+\b ?", "", check.reasons[0].split(":")[0]
                )
                report.failures[reason] = report.failures.get(reason, 0) + 1
                self.usage.rejected()
                continue
            if self.paraphraser is not None:  # only a kept task is worth a model call
                seed = derive_seed("paraphrase", outcome.id, attempt) % 2**32
                outcome.instruction = await self.paraphraser(instruction, seed)
            return outcome, check
        return None

    def _archetype(self, rng: random.Random, index: int, attempt: int) -> Archetype:
        """Archetypes in turn by index (each gets its share), another one on a retry."""
        usable = [a for a in self.archetypes if self.pools[a.name]]
        if not usable:
            raise DraftRejected("no archetype fits this library")
        return usable[(index + attempt * 7) % len(usable)] if attempt < 2 else rng.choice(usable)

    def _opening(self, rng: random.Random, index: int, attempt: int) -> tuple[Archetype, Subject]:
        """The first workflow and the person it opens with: the opening's service first (each alike, not
        where most people happen to be; see ``spread``: a system of some line of business first, the least
        used so far), then a person there, those known in more systems more often (their scenarios can
        chain more workflows).

        An archetype none of whose people can be drawn (``_reach`` is 0 for each under a strict spread)
        gives way to the next one in turn (the archetypes' pools hold different people and tables), so a
        try is spent on a draft that can keep the cap; ``SpreadExhausted`` when none can."""
        first = self._archetype(rng, index, attempt)
        usable = [a for a in self.archetypes if self.pools[a.name]]
        start = usable.index(first)
        for archetype in usable[start:] + usable[:start]:
            try:
                subject = by_service(
                    rng,
                    self.pools[archetype.name],
                    _party_service,
                    favoured=self.world.in_vertical(VERTICAL_DOMAINS),
                    weight=lambda subject, archetype=archetype: self._reach(subject, archetype),  # type: ignore[misc]
                    usage=self.usage,
                    groups=self.groups[archetype.name],
                )
            except SpreadExhausted:
                continue
            return archetype, subject
        raise SpreadExhausted("every system a scenario could open in is in its share of tasks already")

    async def _draft(self, rng: random.Random, index: int, attempt: int) -> tuple[Task, Instruction]:
        """One unverified task from a fresh scenario, and its instruction with the values it must state and
        hide; ``DraftRejected`` with the reason when it cannot be one."""
        opts = self.options
        # the opening takes the least used party service past the share cap rather than give up: party
        # tables are the scarcest role (60 services of the whole corpus's 4,282 open tasks, each also a
        # record or a sink of other tasks), and the cap follows the tasks kept so far, so a strict opening
        # stops the run (every party service past it, no task kept to raise it: 48 of 1,000 tasks). With
        # ``strict_spread`` every later draw gives up past the cap, and the opening draws only people with
        # records the first workflow can use in a system under it (``_reach``)
        strict = opts.strict_spread
        self.usage.strict = False
        archetype, subject = self._opening(rng, index, attempt)
        # the opening system's line of business, else the one the person's other systems point to
        lead = self.world.domain(subject.party.service)
        hint = [self.world.domain(t.service) for t, _ in subject.records]
        vertical = vertical_for([lead, *hint], rng, lead=lead)
        episode = f"taskgen:{opts.seed}:{index}:{attempt}"
        with Session(self.runtimes, episode, opts.today, self.cache, lazy=opts.reuse) as session:
            draft = Draft(self.world, session, rng, opts.today, usage=self.usage)
            scene = await open_scene(draft, vertical, subject)
            # past the share cap, the first workflow gives up (another try draws anew), except on the
            # last try unless the spread is strict: a library too small for the cap still gets its tasks
            self.usage.strict = strict or attempt < opts.attempts - 1
            scene.archetype = archetype.name
            await archetype.plan(scene)
            chained = [archetype.name]
            others, notify = self._chain(rng, archetype, subject)
            for extra in others:  # in turn until the chain is full (one that cannot apply is undone)
                if len(chained) >= opts.chain:
                    break
                if rng.random() < opts.chain_rate and await _try_plan(extra, scene, opts.strict_spread):
                    chained.append(extra.name)
            if notify is not None and await _try_plan(notify, scene, True):
                chained.append(notify.name)
            if not any(s.kind == "write" for s in draft.steps) and not draft.answers:
                raise DraftRejected("scenario neither writes nor reports")
            calls = sum(1 for s in draft.steps if s.executed)
            if not opts.min_len <= calls <= opts.max_len:
                raise DraftRejected("gold call count out of bounds")
            services = sorted(set(draft.services))
            distractors = self._distractors(rng, services)
            if not opts.reuse:  # the reference forks every touched service; reuse reads the seed where
                session.open(services)  # nothing was written (the same rows, unforked)
            reader = session.reader()
            writes, skipped = self._writes(draft)
            rubric = await build_rubric(
                reader, self.manifests, services, distractors, writes, draft.answers, skipped
            )
            hashes = {svc: await reader.state_hash(svc) for svc in services}
        frame = rng.choice(vertical.frames)
        text = compose(rng, frame, scene.sentences, scene.rules, scene.asks)
        hidden = [*draft.hidden, *(s.arguments.get(k) for s in draft.steps for k in s.bindings)]
        if leaks(text, hidden):
            raise DraftRejected("instruction would reveal a looked-up value")
        if internal_terms(text, self.terms):
            raise DraftRejected("instruction names a tool or an internal key")
        task = self._task(index, draft, rubric, hashes, text, distractors, chained, vertical.name)
        return task, Instruction(text, required=list(draft.stated), hidden=hidden)

    def _reach(self, subject: Subject, first: Archetype | None = None) -> float:
        """How much a scenario over this person can do without the busiest systems: one, and one more for
        each of their record tables in a system still under the share cap (``spread``). Drawn by it,
        the people known in more systems come up more often (their scenarios chain more workflows), and
        those whose records lie only in systems past their share less. Before any system is past the cap
        (and on a library too small for one) it is one more than the person's record tables.

        Under a strict spread it is 0 for a person none of whose record tables that the ``first``
        workflow could use lies in a system under the cap: their draft would give up for the spread
        after its opening's calls (so such a person is not drawn, and a party system holding only such
        people is no candidate)."""
        usage = self.usage
        strict = first is not None and self.options.strict_spread and usage.hard and first.needs != ("none",)
        if strict and all(usage.over(s) for s in self._fitting_services(subject, first)):  # type: ignore[arg-type]
            return 0.0
        return 1 + sum(n for service, n in self._record_services(subject) if not usage.over(service))

    def _fitting_services(self, subject: Subject, archetype: Archetype) -> list[str]:
        """The services of the person's record tables the archetype can use, found once per subject."""
        key = (id(subject), archetype.name)
        found = self._fitting.get(key)
        if found is None:
            found = self._fitting[key] = sorted(
                {t.service for t, rows in subject.records if fits(archetype, t, rows, self.world)}
            )
        return found

    def _record_services(self, subject: Subject) -> list[tuple[str, int]]:
        """(service, how many of the person's record tables it holds), found once per subject."""
        found = self._by_record_service.get(id(subject))
        if found is None:
            counts = Counter(table.service for table, _ in subject.records)
            found = self._by_record_service[id(subject)] = sorted(counts.items())
        return found

    def _chain(
        self, rng: random.Random, first: Archetype, subject: Subject
    ) -> tuple[list[Archetype], Archetype | None]:
        """Archetypes that may follow the first over the same person, in a random order, and the message
        that closes the scenario (None when it is not sent)."""
        others = [
            a
            for a in self.archetypes
            if a is not first and a.name != "notify" and _fits(a, subject, self.world)
        ]
        rng.shuffle(others)
        # then a second round of the workflows that may run again on another table or system
        others += [a for a in [first, *others] if a.repeatable]
        notify = next((a for a in self.archetypes if a.name == "notify"), None)
        if notify is None or notify is first or rng.random() >= self.options.chain_rate:
            notify = None
        return others, notify

    def _distractors(self, rng: random.Random, services: list[str]) -> list[str]:
        """Services mounted beside the task's own that it does not need: drawn from the systems earlier
        tasks of the run use (ones that hold people and their records, so they look like places the work
        could be, and whose runtimes the run has most likely loaded already: on the whole corpus a
        distractor drawn from all 4,282 services was a cold load for its ``extra_reads`` and
        ``extra_delete`` variants), the rest of the library only where those are too few."""
        split = "test" if set(services) & set(self.held_out) else "train"

        def allowed(name: str) -> bool:
            return name not in services and (split == "test" or name not in self.held_out)

        lo, hi = self.options.distractors
        wanted = rng.randint(min(lo, hi), max(lo, hi))
        seen = [s for s in sorted(self.usage.uses) if allowed(s)]
        if len(seen) >= wanted:
            return sorted(rng.sample(seen, wanted))
        rest = [s for s in self.names if allowed(s) and s not in self.usage.uses]
        return sorted(seen + rng.sample(rest, min(len(rest), wanted - len(seen))))

    def _writes(self, draft: Draft) -> tuple[list[GoldWrite], list[SkippedWrite]]:
        writes: list[GoldWrite] = []
        skipped: list[SkippedWrite] = []
        for step, result in zip(draft.steps, draft.results, strict=True):
            manifest = self.manifests[step.service]
            tool = manifest.tool(step.tool)
            if tool is None or step.kind != "write":
                continue
            entity = manifest.entity(tool.entity or "")
            if step.executed:
                writes.append(GoldWrite(step.service, tool, entity, step.arguments, result))
            elif step.condition is not None:
                skipped.append(SkippedWrite(step.service, tool, entity, step.arguments))
        return writes, skipped

    def _task(
        self,
        index: int,
        draft: Draft,
        rubric: list[CriterionSpec],
        hashes: dict[str, str],
        instruction: str,
        distractors: list[str],
        scenario: list[str],
        vertical: str,
    ) -> Task:
        opts = self.options
        services = sorted(set(draft.services))
        split = "test" if set(services) & set(self.held_out) else "train"
        gold = [
            GoldCall(service=s.service, tool=s.tool, arguments=s.arguments, result=r)
            for s, r in zip(draft.steps, draft.results, strict=True)
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
            answer_keys=[_answer_key(a.value) for a in draft.answers],
            expected_state_hash=hashes,
            meta=TaskMeta(
                walk=draft.steps,
                capabilities=capabilities(draft),
                domain=_domain([self.world.domain(s.service) for s in draft.steps]),
                scenario=scenario,
                vertical=vertical,
                seed=opts.seed,
                split=split,
                library_version=self.version,
            ),
        )

    async def run(self, progress: Callable[[int], None] | None = None) -> tuple[list[Task], GenerationReport]:
        opts = self.options
        report = GenerationReport(requested=opts.n, held_out=self.held_out, people=len(self.world.people))
        tasks: list[Task] = []
        self.usage = Usage.for_library(len(self.names))  # a run's tally starts empty: same run, same tasks
        start = time.perf_counter()
        index = 0
        while len(tasks) < opts.n and index < opts.n * opts.max_index_factor:
            outcome = await self.one(index, report)
            index += 1
            if outcome is None:
                continue
            task, check = outcome
            tasks.append(task)
            self.usage.add(task.services)
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


def _domain(in_order: Sequence[str]) -> str:
    """The domain most of the task's calls are in (the first such, on a tie)."""
    counts = Counter(in_order)
    return max(dict.fromkeys(in_order), key=lambda d: counts[d]) if in_order else "general"


def _party_service(subject: Subject) -> str:
    return subject.party.service


def _fits(archetype: Archetype, subject: Subject, world: World) -> bool:
    if archetype.needs == ("none",):
        return True
    return any(fits(archetype, table, rows, world) for table, rows in subject.records)


async def _try_plan(archetype: Archetype, scene: Scene, strict: bool) -> bool:
    """Run a chained archetype; if it cannot apply before it wrote anything, undo what it added.
    ``strict``: it is left out rather than take a service past its share of tasks (``spread``)."""
    draft = scene.draft
    marks = (len(draft.steps), len(scene.sentences), len(scene.asks), len(scene.rules), len(draft.answers))
    labels, hidden, stated = set(draft.labels), list(draft.hidden), list(draft.stated)
    listed, current = list(scene.listed), scene.current
    claimed = {name: set(keys) for name, keys in scene.claimed.items()}
    drawn = len(draft.usage.drawn)
    scene.archetype = archetype.name
    usage, was = draft.usage, draft.usage.strict
    usage.strict = strict
    try:
        await archetype.plan(scene)
        return True
    except DraftRejected:
        if any(s.kind == "write" and s.executed for s in draft.steps[marks[0] :]):
            raise
        del draft.steps[marks[0] :], draft.results[marks[0] :], scene.sentences[marks[1] :]
        del scene.asks[marks[2] :], scene.rules[marks[3] :], draft.answers[marks[4] :]
        draft.labels, draft.hidden, draft.stated = labels, hidden, stated
        scene.listed, scene.current, scene.claimed = listed, current, claimed
        scene.scopes = {k: f for k, f in scene.scopes.items() if f.step < marks[0]}
        del usage.drawn[drawn:]  # an undone step blames no service: the draft goes on without it
        return False
    finally:
        usage.strict = was


def _answer_key(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def generate_tasks(
    runtimes: TaskLibrary | Mapping[str, ServiceRuntime],
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
