"""Scenario tasks on the starter library itself: what the fixture library cannot show (actions, the real
seed population, every archetype)."""

from __future__ import annotations

import asyncio
import re

import pytest

from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.rubric import RuntimeStateReader, SeedCache
from orchestrator.tasks.execute import Session
from orchestrator.tasks.generate import GenerateOptions, generate_tasks

LIBRARY = Settings().library
pytestmark = pytest.mark.skipif(
    not any(LIBRARY.glob("*/manifest.json")), reason="the starter library is not built"
)


@pytest.fixture(scope="module")
def runtimes() -> dict[str, ServiceRuntime]:
    return load_library(LIBRARY, Settings(library=LIBRARY, llm_base_url=None))


@pytest.fixture(scope="module")
def tasks(runtimes: dict[str, ServiceRuntime]) -> list[Task]:
    return generate_tasks(runtimes, GenerateOptions(n=12, seed=3))[0]


def test_the_graders_state_hash_is_the_runtimes_own_after_every_gold_run(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    """The reader re-reads only the tables the write log says changed (actions included): a table it
    missed would hash as its seed and differ from the runtime's hash of the whole state."""
    backends: set[str] = set()

    async def main() -> None:
        for task in tasks:
            with Session(runtimes, f"starter:{task.id}", task.today) as session:
                for g in task.gold_calls:
                    out = await session.call(g.service, g.tool, g.arguments)
                    assert out.success, out.message
                    backends.add(str(out.backend))
                session.open(task.services)
                reader = RuntimeStateReader(runtimes, session.episode_id, SeedCache())
                for svc in task.services:
                    assert await reader.state_hash(svc) == session.state_hash(svc)
                    assert task.expected_state_hash[svc] == session.state_hash(svc)

    asyncio.run(main())
    assert "action" in backends


def test_episodes_with_the_same_writes_share_one_read_of_a_changed_table(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    """Rows of a changed table are kept by write history: the same writes read them once, other
    writes (or none) do not see them."""
    task = next(t for t in tasks if any(g.tool.lower().endswith(("add", "insert")) for g in t.gold_calls))
    write = next(g for g in task.gold_calls if g.tool.lower().endswith(("add", "insert")))
    table = runtimes[write.service].tools[write.tool].table
    assert table is not None
    cache = SeedCache()

    async def rows_after(episode: str, writes: int) -> list[dict[str, object]]:
        with Session(runtimes, episode, task.today, cache) as session:
            for _ in range(writes):
                await session.call(write.service, write.tool, write.arguments)
            session.open([write.service])
            return await session.reader().select(write.service, table.name, {})

    once = asyncio.run(rows_after("a", 1))
    kept = len(cache.states)
    assert asyncio.run(rows_after("b", 1)) == once and len(cache.states) == kept
    twice = asyncio.run(rows_after("c", 2))
    assert len(cache.states) > kept and twice != once


def test_every_archetype_yields_tasks_on_the_starter_library(runtimes: dict[str, ServiceRuntime]) -> None:
    """Archetypes take turns by index, so unchained tasks over 30 indices give each one three first tries."""
    from orchestrator.tasks.archetypes import ARCHETYPES

    made = generate_tasks(runtimes, GenerateOptions(n=30, seed=5, chain_rate=0.0))[0]
    assert {t.meta.scenario[0] for t in made} == set(ARCHETYPES.names())


def test_no_instruction_reads_like_a_form_or_a_database(tasks: list[Task]) -> None:
    from orchestrator.tasks.stats import unnatural

    assert [t.instruction for t in tasks if unnatural(t)] == []


def test_a_person_added_to_another_system_is_looked_up_there_once_the_record_exists(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    made = generate_tasks(runtimes, GenerateOptions(n=4, seed=2, archetypes=["mirror"], chain_rate=0.0))[0]
    assert made
    for task in made:
        walk = task.meta.walk
        (created,) = [i for i, s in enumerate(walk) if s.kind == "write" and s.operation == "create"]
        after = walk[created + 1]
        assert after.service == walk[created].service and after.operation in ("list", "search")
        assert "to make sure the new record is in place" in task.instruction
        (email,) = set(re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", str(walk[created].arguments)))
        assert email in str(task.gold_calls[created + 1].result)  # the new record is in what it found


def test_distractors_are_drawn_from_the_systems_earlier_tasks_used(tasks: list[Task]) -> None:
    """A distractor is a system the run's earlier tasks work in (one that holds people and their records,
    whose runtime the run most likely loaded already), the rest of the library only where those are too
    few: on a library of thousands a distractor drawn from all of it was a cold load per variant."""
    used: set[str] = set()
    from_used = 0
    for task in tasks:
        others, distractors = used - set(task.services), set(task.distractors)
        assert distractors <= others or others <= distractors, task.id
        from_used += bool(others) and distractors <= others
        used |= set(task.services)
    assert from_used >= len(tasks) // 3
