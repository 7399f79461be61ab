"""A grader that cannot be gamed: new rows only, untouched fields, whole-state guard, in-process and over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, load_library
from compoworld.runtime.app import create_service_app
from compoworld.settings import Settings
from orchestrator.discovery import EpisodeReader, ServiceDirectory
from orchestrator.models import CriterionSpec, Verdict
from orchestrator.remote import HttpService
from orchestrator.rubric import RuntimeStateReader, SeedCache, StateReader, evaluate
from orchestrator.rubric.guard import ServiceExpectation, StateGuard, TableAllowance
from tests.tasks_library import write_library

NEW = {"customer_email": "ada.chen@example.com", "amount": 99.5, "currency": "EUR"}


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServiceRuntime]:
    return load_library(write_library(tmp_path_factory.mktemp("lib")), Settings())


@pytest.fixture
def episode(runtimes: dict[str, ServiceRuntime]) -> Iterator[str]:
    eid = "grader-test"
    for rt in runtimes.values():
        rt.fork(eid)
    yield eid
    for rt in runtimes.values():
        rt.delete(eid)


def call(runtimes: dict[str, ServiceRuntime], eid: str, svc: str, tool: str, args: dict[str, Any]) -> Any:
    result = asyncio.run(runtimes[svc].call_tool(eid, tool, args))
    assert result.success, result
    return result.data


def spec(kind: str, service: str | None = "billing", **params: Any) -> CriterionSpec:
    return CriterionSpec(id=kind, kind=kind, label="no_op_fail", service=service, params=params)


def grade(specs: list[CriterionSpec], reader: StateReader) -> list[Verdict]:
    return asyncio.run(evaluate(specs, reader, ""))


def test_a_create_passes_only_for_a_new_row_not_for_an_existing_row_edited_to_match(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    created = spec("row_created", table="invoice", pk="id", where=NEW)
    reader = RuntimeStateReader(runtimes, episode)
    assert not grade([created], reader)[0].passed
    call(runtimes, episode, "billing", "updateInvoice", {"id": "inv_000003", **NEW})
    renamed = grade([created], RuntimeStateReader(runtimes, episode))[0]
    assert not renamed.passed and "edited to match" in renamed.detail
    call(
        runtimes,
        episode,
        "billing",
        "createInvoice",
        {**NEW, "amount": 99.50000001, "customer_email": "ADA.CHEN@example.com"},
    )
    assert grade([created], RuntimeStateReader(runtimes, episode))[0].passed


def test_an_update_fails_when_a_field_it_was_not_meant_to_change_changed(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    updated = spec("row_updated", table="invoice", pk="id", key="inv_000002", set={"status": "paid"})
    call(runtimes, episode, "billing", "updateInvoice", {"id": "inv_000002", "status": "paid"})
    assert grade([updated], RuntimeStateReader(runtimes, episode))[0].passed
    call(runtimes, episode, "billing", "updateInvoice", {"id": "inv_000002", "description": ""})
    verdict = grade([updated], RuntimeStateReader(runtimes, episode))[0]
    assert not verdict.passed and "description" in verdict.detail


def test_a_date_and_its_midnight_timestamp_and_integer_amounts_match_by_value(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    """The date column holds ``2026-07-01`` (the service refuses a date-time there since it keeps its
    spec's formats); a criterion naming it as the midnight timestamp, and the amount as a float, passes."""
    call(
        runtimes,
        episode,
        "billing",
        "updateInvoice",
        {"id": "inv_000005", "due_date": "2026-07-01", "amount": 250},
    )
    updated = spec(
        "row_updated",
        table="invoice",
        pk="id",
        key="inv_000005",
        set={"due_date": "2026-07-01T00:00:00Z", "amount": 250.0},
    )
    assert grade([updated], RuntimeStateReader(runtimes, episode))[0].passed


def guard(cache: SeedCache, runtimes: dict[str, ServiceRuntime], expected_hash: str) -> CriterionSpec:
    """The guard of a task that creates one invoice; crm and calendar are mounted distractors."""
    seed = {s: cache.state_hash(runtimes[s]) for s in ("billing", "crm", "calendar")}
    services = {
        "billing": ServiceExpectation(
            hash=expected_hash,
            seed_hash=seed["billing"],
            tables={"invoice": TableAllowance(pk="id", creates=1)},
        ),
        "crm": ServiceExpectation(hash=seed["crm"], seed_hash=seed["crm"]),
        "calendar": ServiceExpectation(hash=seed["calendar"], seed_hash=seed["calendar"]),
    }
    params = StateGuard(services=services).model_dump(mode="json")
    return CriterionSpec(id="g", kind="state_guard", label="no_op_pass", params=params)


WRONG_EXTRAS = {
    "an extra delete in a distractor": ("crm", "deleteContact", {"id": "con_000004"}),
    "a clobbered field": ("billing", "updateInvoice", {"id": "inv_000001", "status": "paid"}),
    "a second new row": ("billing", "createInvoice", {**NEW, "amount": 5.0}),
    "a simulated action nobody asked for": (
        "calendar",
        "inviteAttendee",
        {"event_id": 1, "email": "x@example.org"},
    ),
}


@pytest.mark.parametrize("extra", [None, *WRONG_EXTRAS])
def test_the_whole_state_guard_allows_exactly_the_expected_writes(
    runtimes: dict[str, ServiceRuntime], episode: str, extra: str | None
) -> None:
    cache = SeedCache()
    call(runtimes, episode, "billing", "createInvoice", NEW)
    expected_hash = runtimes["billing"].state_hash(episode)
    crit = guard(cache, runtimes, expected_hash)
    assert grade([crit], RuntimeStateReader(runtimes, None, cache))[0].passed, (
        "doing nothing passes the guard"
    )
    if extra is not None:
        svc, tool, args = WRONG_EXTRAS[extra]
        call(runtimes, episode, svc, tool, args)
    verdict = grade([crit], RuntimeStateReader(runtimes, episode, cache))[0]
    assert verdict.passed is (extra is None), verdict.detail


def test_the_in_process_state_hash_is_the_runtimes_own(
    runtimes: dict[str, ServiceRuntime], episode: str
) -> None:
    call(runtimes, episode, "billing", "createInvoice", NEW)
    call(runtimes, episode, "calendar", "inviteAttendee", {"event_id": 2, "email": "ada.chen@example.com"})
    reader = RuntimeStateReader(runtimes, episode, SeedCache())
    for svc, runtime in runtimes.items():
        assert asyncio.run(reader.state_hash(svc)) == runtime.state_hash(episode)


@pytest.fixture
async def http_directory(runtimes: dict[str, ServiceRuntime]) -> AsyncIterator[ServiceDirectory]:
    settings = Settings(admin_token="s3cret")
    clients = {
        name: httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_service_app(rt, settings)), base_url=f"http://{name}"
        )
        for name, rt in runtimes.items()
    }
    services = {name: HttpService(name, [f"http://{name}"], clients[name], "s3cret") for name in runtimes}
    yield ServiceDirectory(dict(services))
    for client in clients.values():
        await client.aclose()


@pytest.mark.parametrize("extra", [None, "an extra delete in a distractor", "a clobbered field"])
async def test_the_guard_and_row_checks_grade_the_same_over_the_admin_http_routes(
    runtimes: dict[str, ServiceRuntime], http_directory: ServiceDirectory, extra: str | None
) -> None:
    eid = f"http-grader-{extra is None}"
    for svc in ("billing", "crm", "calendar"):
        await http_directory.get(svc).fork(eid, None)
    try:
        await http_directory.get("billing").call(eid, "createInvoice", NEW)
        expected_hash = runtimes["billing"].state_hash(eid)
        if extra is not None:
            svc, tool, args = WRONG_EXTRAS[extra]
            await http_directory.get(svc).call(eid, tool, args)
        specs = [
            guard(SeedCache(), runtimes, expected_hash),
            spec("row_created", table="invoice", pk="id", where=NEW),
        ]
        verdicts = await evaluate(specs, EpisodeReader(http_directory, eid), "")
        assert [v.passed for v in verdicts] == [extra is None, True], verdicts
    finally:
        for svc in ("billing", "crm", "calendar"):
            await http_directory.get(svc).delete(eid)


def test_table_changes_reads_shared_rows_as_unchanged_and_copies_as_compared() -> None:
    """An in-process reader hands back the seed's own row objects where nothing changed; a remote one
    hands back copies. Both give the same new rows, deleted keys and changed columns."""
    from orchestrator.rubric.guard import table_changes

    seed = [{"id": f"r{i}", "name": f"n{i}", "n": i} for i in range(6)]
    edited = {**seed[2], "name": "changed"}
    created = {"id": "r9", "name": "new", "n": 9}
    shared = [seed[0], seed[1], edited, seed[3], seed[5], created]  # r4 deleted
    copies = [dict(r) for r in shared]
    for final in (shared, copies):
        new, deleted, changed = table_changes(final, seed, "id")
        assert new == [created] and deleted == ["r4"]
        assert changed == {("str", "r2"): ["name"]}
    assert table_changes(list(seed), seed, "id") == ([], [], {})
    keyless = [{"id": None, "name": "a"}, {"id": None, "name": "b"}]
    assert table_changes([keyless[0], {"id": None, "name": "c"}], keyless, "id")[0] == []
