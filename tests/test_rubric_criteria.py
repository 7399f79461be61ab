"""Rubric criteria graded on real forked SQLite state through the StateReader protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import CriterionSpec, Verdict
from orchestrator.rubric import (
    Check,
    Criterion,
    Rubric,
    RuntimeStateReader,
    StateReader,
    complete,
    evaluate,
    register_criterion,
    rubric_score,
)
from tests.tasks_library import write_library


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServiceRuntime]:
    return load_library(write_library(tmp_path_factory.mktemp("lib")), Settings())


def spec(
    kind: str, service: str | None = "billing", label: str = "no_op_fail", **params: Any
) -> CriterionSpec:
    return CriterionSpec(id=f"{kind}", kind=kind, label=label, service=service, params=params)  # type: ignore[arg-type]


def grade(specs: list[CriterionSpec], reader: StateReader, answer: str = "") -> list[Verdict]:
    return asyncio.run(evaluate(specs, reader, answer))


@pytest.fixture
def episode(runtimes: dict[str, ServiceRuntime]) -> Iterator[str]:
    eid = "rubric-test"
    for rt in runtimes.values():
        rt.fork(eid)
    yield eid
    for rt in runtimes.values():
        rt.delete(eid)


def call(runtimes: dict[str, ServiceRuntime], eid: str, svc: str, tool: str, args: dict[str, Any]) -> dict:
    return asyncio.run(runtimes[svc].call_tool(eid, tool, args)).envelope()


def test_state_criteria_fail_before_the_writes_and_pass_after(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    specs = [
        spec("row_exists", table="invoice", where={"customer_email": "x@example.org", "amount": 12.5}),
        spec("field_equals", table="invoice", pk="id", key="inv_000001", field="status", value="paid"),
        spec("row_absent", table="invoice", where={"id": "inv_000002"}),
        spec(
            "row_unchanged",
            label="no_op_pass",
            table="invoice",
            pk="id",
            key="inv_000003",
            expected=runtimes["billing"].select(None, "invoice", {"id": "inv_000003"})[0],
        ),
    ]
    reader = RuntimeStateReader(runtimes, episode)
    assert [v.passed for v in grade(specs, reader)] == [False, False, False, True]
    call(
        runtimes,
        episode,
        "billing",
        "createInvoice",
        {"customer_email": "x@example.org", "amount": 12.5, "currency": "EUR"},
    )
    call(runtimes, episode, "billing", "updateInvoice", {"id": "inv_000001", "status": "paid"})
    call(runtimes, episode, "billing", "deleteInvoice", {"id": "inv_000002"})
    verdicts = grade(specs, reader)
    assert [v.passed for v in verdicts] == [True, True, True, True], [v.detail for v in verdicts]
    call(runtimes, episode, "billing", "updateInvoice", {"id": "inv_000003", "amount": 1.0})
    guard = grade(specs[3:], reader)[0]
    assert not guard.passed and "amount" in guard.detail


def test_row_exists_min_count_requires_a_new_copy_of_an_existing_row(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    row = runtimes["billing"].select(None, "invoice", {"id": "inv_000004"})[0]
    where = {k: row[k] for k in ("customer_email", "amount", "currency")}
    crit = [spec("row_exists", table="invoice", where=where, min_count=2)]
    reader = RuntimeStateReader(runtimes, episode)
    assert not grade(crit, reader)[0].passed
    call(runtimes, episode, "billing", "createInvoice", where)
    assert grade(crit, reader)[0].passed


def test_simulated_writes_are_graded_from_the_action_log(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    logged = spec(
        "action_logged",
        service="mailer",
        tool="sendNotification",
        arguments={"recipient": "Ada.Chen@example.com ", "text": "hello"},
    )
    absent = spec(
        "action_absent",
        service="mailer",
        label="no_op_pass",
        tool="sendNotification",
        arguments={"recipient": "ada.chen@example.com"},
    )
    reader = RuntimeStateReader(runtimes, episode)
    assert [v.passed for v in grade([logged, absent], reader)] == [False, True]
    call(
        runtimes,
        episode,
        "mailer",
        "sendNotification",
        {"recipient": "ada.chen@example.com", "text": "Hello"},
    )
    assert [v.passed for v in grade([logged, absent], reader)] == [True, False]


@pytest.mark.parametrize(
    ("value", "answer", "passed"),
    [
        (1234.5, "The total is $1,234.50.", True),
        (1234.5, "The total is 1234.", False),
        ("Ada Chen", "it is  ADA   chen", True),
        ("2026-03-04", "Due on March 4, 2026.", True),
        ("2026-01-15T12:00:00Z", "at 2026-01-15 12:00 UTC", True),
        (7, "There are 17 of them", False),
        (7, "There are 7 of them", True),
        ("ada.chen@example.com", "", False),
    ],
)
def test_answer_contains_normalises_case_spacing_and_number_formats(
    value: Any, answer: str, passed: bool
) -> None:
    verdict = grade(
        [spec("answer_contains", service=None, value=value)], RuntimeStateReader({}, None), answer
    )[0]
    assert verdict.passed is passed


def test_a_criterion_that_cannot_be_checked_fails_with_a_reason_instead_of_raising(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    specs = [
        spec("no_such_kind"),
        spec("row_exists", table="nope", where={}),
        spec("row_exists", table="invoice", where={"bogus_column": 1}),
        spec("field_equals", table="invoice"),
        spec("row_exists", service=None, table="invoice", where={}),
        spec("row_exists", service="ghost", table="invoice", where={}),
    ]
    verdicts = grade(specs, RuntimeStateReader(runtimes, None))
    assert all(not v.passed and v.detail.startswith("cannot be checked") for v in verdicts), verdicts
    assert "unknown criterion kind" in verdicts[0].detail and "field" in verdicts[3].detail


class DictReader:
    """A StateReader over plain dicts: what a remote (HTTP) reader looks like to ``evaluate``."""

    def __init__(self, tables: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
        self.tables = tables
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls.append((service, table, where))
        return [r for r in self.tables[service][table] if all(r.get(k) == v for k, v in where.items())]


def test_evaluate_only_needs_the_select_protocol_and_reads_targeted_rows() -> None:
    reader = DictReader({"crm": {"contact": [{"id": "c1", "name": "Ann"}, {"id": "c2", "name": "Bo"}]}})
    assert isinstance(reader, StateReader)
    verdicts = grade(
        [spec("field_equals", service="crm", table="contact", pk="id", key="c2", field="name", value="bo")],
        reader,
    )
    assert verdicts[0].passed and reader.calls == [("crm", "contact", {"id": "c2"})]


def test_new_criterion_kinds_register_by_name_without_editing_the_registry() -> None:
    @register_criterion("answer_is_short")
    class AnswerIsShort(Criterion):
        needs_service = False
        max_words: int

        async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
            return Check(len(answer.split()) <= self.max_words, f"{len(answer.split())} words")

    crit = [spec("answer_is_short", service=None, max_words=3)]
    assert grade(crit, DictReader({}), "two words")[0].passed
    assert not grade(crit, DictReader({}), "this one has five words")[0].passed


def test_score_is_the_importance_weighted_pass_fraction_and_complete_needs_all() -> None:
    specs = [
        spec("answer_contains", service=None, value="a"),
        spec("answer_contains", service=None, value="b"),
    ]
    specs[0].id, specs[1].id, specs[1].importance = "c0", "c1", 3.0
    rubric = Rubric(specs)
    verdicts = asyncio.run(rubric.evaluate(DictReader({}), "b"))
    assert [v.passed for v in verdicts] == [False, True]
    assert rubric.score(verdicts) == pytest.approx(0.75) == rubric_score(verdicts)
    assert not complete(verdicts) and not complete([])
    assert complete(asyncio.run(rubric.evaluate(DictReader({}), "a and b")))
