"""Verifying the verifiers: valid variants complete, wrong solutions fail, and a gameable rubric is caught."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from compoworld.registry import RegistryError
from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.rubric import SeedCache
from orchestrator.tasks.generate import GenerateOptions, generate_tasks
from orchestrator.tasks.seeds import SeedIndex
from orchestrator.tasks.solutions import SOLUTION_KINDS, register_solution
from orchestrator.tasks.verify import check_task
from tests.tasks_library import write_library


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServiceRuntime]:
    return load_library(write_library(tmp_path_factory.mktemp("lib")), Settings())


@pytest.fixture(scope="module")
def tasks(runtimes: dict[str, ServiceRuntime]) -> list[Task]:
    return generate_tasks(runtimes, GenerateOptions(n=30, seed=11))[0]


def check(task: Task, runtimes: dict[str, ServiceRuntime]):  # type: ignore[no-untyped-def]
    return asyncio.run(check_task(task, runtimes, SeedIndex(runtimes), cache=SeedCache()))


def test_every_kind_is_registered_with_its_family() -> None:
    families = {kind: sk.family for kind, sk in SOLUTION_KINDS.items()}
    assert {"reordered", "extra_reads", "search_instead_of_read", "extra_fields", "answer_paraphrase"} <= {
        k for k, f in families.items() if f == "valid"
    }
    assert {
        "extra_delete",
        "clobbered_field",
        "rename_instead_of_create",
        "ignored_condition",
        "answer_dump",
        "value_off",
        "answer_off",
    } <= {k for k, f in families.items() if f == "wrong"}


def test_each_kept_task_runs_its_variants_and_wrong_solutions_as_expected(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    applied: set[str] = set()
    for task in tasks[:12]:
        result = check(task, runtimes)
        assert result.valid, result.reasons
        assert all(o.as_expected for o in result.outcomes)
        assert any(o.family == "valid" for o in result.outcomes) and any(
            o.family == "wrong" for o in result.outcomes
        )
        applied |= {o.kind for o in result.outcomes}
    assert {"extra_delete", "clobbered_field", "value_off", "extra_reads"} <= applied


def test_a_rubric_without_its_guards_is_reported_as_gameable(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    task = tasks[0].model_copy(deep=True)
    task.rubric = [c for c in task.rubric if c.label == "no_op_fail"]
    result = check(task, runtimes)
    caught_by_nothing = {o.kind for o in result.outcomes if not o.as_expected}
    assert not result.valid and "extra_delete" in caught_by_nothing
    assert any("wrong solution 'extra_delete' completes" in r for r in result.reasons)


def test_an_answer_check_that_matches_substrings_is_reported_as_gameable(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    task = next(t for t in tasks if any(c.kind == "answer_value" for c in t.rubric)).model_copy(deep=True)
    for spec in task.rubric:
        if spec.kind == "answer_value":
            spec.params["rivals"] = []
    weak = check(task, runtimes)
    dump = next(o for o in weak.outcomes if o.kind == "answer_dump")
    assert not dump.completed, "even without rivals a dump of every value must not pass"


def test_check_names_the_kind_a_hand_edited_task_no_longer_tells_apart(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime], tmp_path: Path
) -> None:
    closing = generate_tasks(runtimes, GenerateOptions(n=6, seed=11, archetypes=["clean_up"]))[0]
    task = next(t for t in closing if any(c.kind == "row_updated" for c in t.rubric)).model_copy(deep=True)
    for spec in task.rubric:
        if spec.kind == "row_updated":
            spec.kind, spec.params = (
                "field_equals",
                {
                    "table": spec.params["table"],
                    "pk": spec.params["pk"],
                    "key": spec.params["key"],
                    "field": sorted(spec.params["set"])[0],
                    "value": spec.params["set"][sorted(spec.params["set"])[0]],
                },
            )
    task.rubric = [c for c in task.rubric if c.kind != "state_guard"]
    result = check(task, runtimes)
    assert not result.valid
    assert any(r.startswith("wrong solution 'clobbered_field' completes") for r in result.reasons), (
        result.reasons
    )


def test_solutions_that_repeat_the_gold_calls_are_judged_as_when_run_from_the_seed(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    """Sharing the gold run (answer-only variants on its state, longer ones forked from it) changes no verdict."""
    for task in tasks[:10]:
        seeds = SeedIndex(runtimes)
        shared = asyncio.run(check_task(task, runtimes, seeds, cache=SeedCache()))
        fresh = asyncio.run(check_task(task, runtimes, seeds, cache=SeedCache(), reuse=False))
        assert [(o.kind, o.completed) for o in shared.outcomes] == [
            (o.kind, o.completed) for o in fresh.outcomes
        ]
        assert shared.valid == fresh.valid and shared.noop_score == fresh.noop_score


def test_a_session_forked_from_the_gold_run_reads_as_the_gold_run_left_it(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    """A child session starts where its parent ended, also in services it never calls itself."""
    from orchestrator.tasks.execute import Session

    task = next(t for t in tasks if any(g.tool.startswith(("create", "add")) for g in t.gold_calls))

    async def main() -> None:
        with Session(runtimes, "parent", task.today) as parent:
            for g in task.gold_calls:
                assert (await parent.call(g.service, g.tool, g.arguments)).success
            written = sorted(set(parent.forked) & parent.written)
            assert written
            expected = {s: await parent.reader().state_hash(s) for s in written}
            with Session(runtimes, "child", task.today, parent=parent) as child:
                seed = {s: await child.reader().state_hash(s) for s in written}
                assert seed == expected
            with Session(runtimes, "fresh", task.today) as fresh:
                assert {s: await fresh.reader().state_hash(s) for s in written} != expected

    asyncio.run(main())


def test_a_page_size_declared_as_a_string_or_capped_is_sent_as_declared() -> None:
    from compoworld.manifest import ToolDef
    from orchestrator.tasks.paths import page_size

    def tool(schema: dict[str, object]) -> ToolDef:
        return ToolDef.model_validate(
            {
                "name": "list_things",
                "kind": "read",
                "operation": "list",
                "backend": "implemented",
                "limit_arg": "size",
                "input_schema": {"type": "object", "properties": {"size": schema}},
            }
        )

    assert page_size(tool({"type": "string"}), 200) == "200"
    assert page_size(tool({"type": "integer", "maximum": 50}), 200) == 50
    assert page_size(tool({"type": "integer"}), 200) == 200


def test_writes_the_cache_knows_fork_nothing_and_read_as_the_open_run_with_that_history(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    """A session repeating an open run's writes forks nothing and its grader reads that run's forks; once
    the run is closed the same writes are replayed on a fork, to the same state."""
    from orchestrator.tasks.execute import Session

    task = next(
        t
        for t in tasks
        if len({g.service for g in t.gold_calls}) >= 2
        and all(runtimes[g.service].tools[g.tool].backend != "simulated" for g in t.gold_calls)
    )
    cache = SeedCache()

    async def run(session: Session) -> list[object]:
        return [(await session.call(g.service, g.tool, g.arguments)).data for g in task.gold_calls]

    async def main() -> None:
        with Session(runtimes, "gold", task.today, cache, skip_known_writes=False) as gold:
            results = await run(gold)
            assert gold.forked, "the gold run forks where it writes"
            written = sorted(gold.written)
            expected = {s: gold.state_hash(s) for s in written}
            with Session(runtimes, "again", task.today, cache) as again:
                assert await run(again) == results
                assert again.forked == []
                reader = again.reader()
                assert again.forked == [] and set(reader.elsewhere) == set(written)
                assert {s: await reader.state_hash(s) for s in written} == expected
        with Session(runtimes, "later", task.today, cache) as later:
            assert await run(later) == results and later.forked == []
            reader = later.reader()
            assert sorted(later.forked) == written and reader.elsewhere == {}
            assert {s: later.state_hash(s) for s in written} == expected

    asyncio.run(main())


def test_a_simulated_call_is_always_run_on_a_fork_of_its_own(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    """A world model decides a simulated call's effect: its service is never taken from another run."""
    from orchestrator.tasks.execute import Session

    def simulated(service: str, tool: str) -> bool:
        return runtimes[service].tools[tool].backend == "simulated"

    task = next(t for t in tasks if any(simulated(g.service, g.tool) for g in t.gold_calls))
    services = {g.service for g in task.gold_calls if simulated(g.service, g.tool)}
    cache = SeedCache()

    async def main() -> None:
        with Session(runtimes, "gold", task.today, cache, skip_known_writes=False) as gold:
            for g in task.gold_calls:
                await gold.call(g.service, g.tool, g.arguments)
            with Session(runtimes, "again", task.today, cache) as again:
                for g in task.gold_calls:
                    await again.call(g.service, g.tool, g.arguments)
                assert services <= set(again.forked)
                assert not services & set(again.reader().elsewhere)

    asyncio.run(main())


def test_a_kind_name_is_taken_once_and_kinds_run_in_registration_order() -> None:
    with pytest.raises(RegistryError, match="solution kind named 'gold' is already registered"):
        register_solution("gold", "wrong")(lambda ctx: None)
    order = SOLUTION_KINDS.ordered()
    assert order[0] == "gold" and order.index("reordered") < order.index("extra_delete")
