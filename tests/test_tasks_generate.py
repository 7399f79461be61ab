"""Scenario task generation on a hand-built 4-service library: verified, cross-service, hidden values, determinism."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.rubric import RuntimeStateReader, evaluate
from orchestrator.tasks.check import check_tasks
from orchestrator.tasks.execute import Session
from orchestrator.tasks.generate import GenerateOptions, GenerationReport, generate_tasks, held_out
from orchestrator.tasks.paths import parse_step_ref
from orchestrator.tasks.replay import replay
from orchestrator.tasks.scenario.text import internal_terms, leaks
from orchestrator.tasks.verify import task_steps
from orchestrator.tasksource import dump_tasks
from tests.tasks_library import write_library

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_library(tmp_path_factory.mktemp("lib"))


@pytest.fixture(scope="module")
def runtimes(library: Path) -> dict[str, ServiceRuntime]:
    return load_library(library, Settings())


@pytest.fixture(scope="module")
def generated(runtimes: dict[str, ServiceRuntime]) -> tuple[list[Task], GenerationReport]:
    return generate_tasks(runtimes, GenerateOptions(n=80, seed=7))


def test_generation_produces_the_requested_number_of_verified_tasks(
    generated: tuple[list[Task], GenerationReport], runtimes: dict[str, ServiceRuntime]
) -> None:
    tasks, report = generated
    assert len(tasks) == report.produced == 80
    check = check_tasks(list(enumerate(tasks, start=1)), [], runtimes)
    assert check.valid == 80 and not check.invalid, check.invalid[:3]


def test_most_tasks_need_information_from_two_or_more_services(
    generated: tuple[list[Task], GenerationReport],
) -> None:
    tasks, report = generated
    assert report.multi_service_2 >= 0.7 and report.multi_service_3 >= 0.3
    for task in tasks:
        if len(task.services) >= 2:
            assert (
                "cross-service" in task.meta.capabilities or "sequential-dependency" in task.meta.capabilities
            )


def test_valid_variants_complete_and_wrong_solutions_are_caught_on_every_kept_task(
    generated: tuple[list[Task], GenerationReport],
) -> None:
    rates = generated[1].solutions
    assert rates.valid_rate == 1.0 and rates.wrong_caught_rate == 1.0
    assert {"extra_delete", "clobbered_field", "value_off", "extra_reads"} <= set(rates.kinds)
    assert rates.noop_tasks == 80 and rates.noop_mean <= 0.15


def test_doing_nothing_fails_a_no_op_fail_criterion_and_passes_every_guard(
    generated: tuple[list[Task], GenerationReport], runtimes: dict[str, ServiceRuntime]
) -> None:
    for task in generated[0]:
        verdicts = asyncio.run(evaluate(task.rubric, RuntimeStateReader(runtimes, None), ""))
        assert any(not v.passed for v in verdicts if v.label == "no_op_fail")
        assert all(v.passed for v in verdicts if v.label == "no_op_pass")


def test_instructions_never_state_a_looked_up_value_a_key_or_a_tool_name(
    generated: tuple[list[Task], GenerationReport], runtimes: dict[str, ServiceRuntime]
) -> None:
    tools = {t.name for rt in runtimes.values() for t in rt.manifest.tools}
    for task in generated[0]:
        bound = [s.arguments.get(a) for s in task.meta.walk for a in s.bindings if "." not in a]
        assert not leaks(task.instruction, [b for b in bound if b is not None]), task.instruction
        assert not leaks(task.instruction, task.answer_keys), task.instruction
        assert not internal_terms(task.instruction, tools), task.instruction
        assert "{" not in task.instruction and "[" not in task.instruction


def test_every_value_that_flows_between_services_is_bound_to_an_earlier_result(
    generated: tuple[list[Task], GenerationReport],
) -> None:
    crossing = 0
    for task in generated[0]:
        for step in task.meta.walk:
            for provenance in step.bindings.values():
                ref = parse_step_ref(provenance)
                assert ref is not None and ref[0] < task.meta.walk.index(step)
                crossing += task.meta.walk[ref[0]].service != step.service
    assert crossing >= len(generated[0])


def test_gold_calls_are_the_executed_walk_steps(generated: tuple[list[Task], GenerationReport]) -> None:
    for task in generated[0]:
        executed = [s for s in task.meta.walk if s.executed]
        assert [(s.service, s.tool, s.arguments) for s in executed] == [
            (g.service, g.tool, g.arguments) for g in task.gold_calls
        ]
        assert set(task.expected_state_hash) == set(task.services) == {s.service for s in task.meta.walk}
        assert all(
            not s.executed and s.condition and not s.condition.taken for s in task.meta.walk if not s.executed
        )


def test_labels_distractors_and_ids_follow_the_contract(
    generated: tuple[list[Task], GenerationReport],
) -> None:
    tasks = generated[0]
    assert [t.id for t in tasks[:3]] == ["cw-s7-00000", "cw-s7-00001", "cw-s7-00002"]
    domains = {"crm", "finance", "productivity", "communication"}
    for task in tasks:
        assert not set(task.distractors) & set(task.services)
        assert min(2, 4 - len(task.services)) <= len(task.distractors) <= 6
        assert task.meta.domain in domains and task.today == "2026-01-15"
        assert task.meta.scenario and task.meta.vertical
        assert any(c.label == "no_op_fail" for c in task.rubric)
        assert "discovery" in task.meta.capabilities
        if "conditional" in task.meta.capabilities:
            assert any(s.condition or s.operation in ("delete", "update") for s in task.meta.walk)
        if "multi-write" in task.meta.capabilities:
            assert sum(s.kind == "write" and s.executed for s in task.meta.walk) >= 2
    caps = {c for t in tasks for c in t.meta.capabilities}
    assert {
        "discovery",
        "cross-service",
        "aggregation",
        "ranking",
        "data transformation",
        "multi-write",
    } <= caps


def test_a_task_depends_on_its_seed_and_index_not_on_how_many_were_asked_for(
    generated: tuple[list[Task], GenerationReport], runtimes: dict[str, ServiceRuntime]
) -> None:
    few, _ = generate_tasks(runtimes, GenerateOptions(n=5, seed=7))
    assert dump_tasks(few) == dump_tasks(generated[0][:5])


def test_held_out_services_appear_only_in_test_tasks(runtimes: dict[str, ServiceRuntime]) -> None:
    tasks, report = generate_tasks(runtimes, GenerateOptions(n=30, seed=3, split_services=["mailer"]))
    assert report.held_out == ["mailer"]
    for task in tasks:
        if task.meta.split == "train":
            assert "mailer" not in task.services and "mailer" not in task.distractors
        else:
            assert "mailer" in task.services
    assert {t.meta.split for t in tasks} == {"train", "test"}


def _generate_in_subprocess(library: Path, out: Path, hash_seed: str) -> bytes:
    code = (
        "import sys; from typer.testing import CliRunner; from orchestrator.tasks.cli import tasks_app; "
        "r = CliRunner().invoke(tasks_app(), sys.argv[1:]); print(r.output); sys.exit(r.exit_code)"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    args = ["generate", "--library", str(library), "--n", "40", "--seed", "11", "--out", str(out)]
    subprocess.run([sys.executable, "-c", code, *args], check=True, env=env, cwd=ROOT, capture_output=True)
    return out.read_bytes()


def test_same_seed_and_library_give_a_byte_identical_task_file(library: Path, tmp_path: Path) -> None:
    first = _generate_in_subprocess(library, tmp_path / "a.jsonl", "1")
    second = _generate_in_subprocess(library, tmp_path / "b.jsonl", "2")
    assert first == second and first.count(b"\n") == 40


def test_recorded_state_hashes_equal_the_runtimes_own_hash_after_a_replay(
    generated: tuple[list[Task], GenerationReport], runtimes: dict[str, ServiceRuntime]
) -> None:
    for task in generated[0][:20]:
        with Session(runtimes, f"hash:{task.id}", task.today).open(task.services) as session:
            asyncio.run(replay(task_steps(task), session))
            assert {s: session.state_hash(s) for s in task.services} == task.expected_state_hash


def test_a_fraction_holds_out_that_share_of_services_chosen_by_the_seed() -> None:
    services = ["a", "b", "c", "d", "e"]
    assert held_out(["0.4"], services, 1) == held_out(["0.4"], services, 1)
    assert len(held_out(["0.4"], services, 1)) == 2 and held_out([], services, 1) == []
    with pytest.raises(ValueError, match="zzz"):
        held_out(["zzz"], services, 1)


def test_the_opening_pulls_up_the_persons_record_by_the_key_the_listing_gave(
    generated: tuple[list[Task], GenerationReport],
) -> None:
    """Look before you act: where the party table can be read by key, the person's own record is opened."""
    opened = 0
    for task in generated[0]:
        first, second = task.meta.walk[0], task.meta.walk[1]
        assert first.operation in ("list", "search")
        if second.operation == "read" and second.service == first.service:
            ref = parse_step_ref(next(iter(second.bindings.values())))
            assert ref is not None and ref[0] == 0
            opened += 1
    assert opened == len(generated[0])  # the test CRM reads contacts by key
