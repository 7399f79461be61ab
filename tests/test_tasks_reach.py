"""Reaching more services with the same person: a text message by phone, and the work moving on to systems
not yet touched.

The hand-written library is the test CRM (contacts with a phone number), the test billing and calendar
services (records by e-mail), and a text-message service whose send tool takes a list of recipient
objects with a mobile number (no e-mail at all), simulated. Every task is kept only after its gold run,
a do-nothing run and the solution families were graded.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from compoworld.manifest import ServiceManifest, ToolDef
from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.rubric.readers import SeedCache
from orchestrator.tasks.execute import Session
from orchestrator.tasks.generate import GenerateOptions, generate_tasks
from orchestrator.tasks.paths import parse_step_ref
from orchestrator.tasks.scenario.draft import Draft
from orchestrator.tasks.scenario.messages import message_tools
from orchestrator.tasks.scenario.scene import open_scene, subjects
from orchestrator.tasks.scenario.verticals import VERTICALS
from orchestrator.tasks.scenario.world import World
from orchestrator.tasks.seeds import SeedIndex
from tests.tasks_library import PEOPLE, _col, _entity, billing, calendar, crm, crud_tools, write_service


def texter() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    recipient = {
        "type": "object",
        "properties": {"mobileNumber": {"type": "string"}, "clientMessageId": {"type": "string"}},
        "required": ["mobileNumber"],
    }
    send = ToolDef(
        name="smsSend",
        kind="write",
        operation="action",
        backend="simulated",
        simulated_reason="action",
        method="POST",
        path="/sms/outgoing/send",
        description="Send an SMS to one or more mobile numbers.",
        input_schema={
            "type": "object",
            "properties": {
                "recipients": {"type": "array", "items": recipient},
                "message": {"type": "string"},
                "maxSegments": {"type": "integer"},
            },
            "required": ["recipients", "message"],
            "additionalProperties": False,
        },
        output_schema={"type": "object", "properties": {"statusCode": {"type": "integer"}}},
        arg_semantics={"message": "text"},
        arg_locations={"recipients": "body", "message": "body", "maxSegments": "body"},
    )
    manifest = ServiceManifest(
        name="texter", title="WinText SMS API", domain="messaging", entities=[], tools=[send]
    )
    return manifest, {}


def billing_with_receipts() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    """The test billing service with a second table of records by e-mail (receipts), so a scenario could
    stay in billing for its second listing."""
    manifest, seed = billing()
    receipt = _entity(
        "receipt",
        "string",
        "rct",
        [
            _col("payer_email", format="email", nullable=False, semantic="email"),
            _col("total", "number", nullable=False, semantic="money"),
            _col("issued_on", format="date", semantic="date"),
        ],
        "payer_email",
    )
    manifest.entities.append(receipt)
    manifest.tools += crud_tools(receipt, "/receipts", ["payer_email"])
    seed["receipt"] = [
        {
            "id": f"rct_{i + 1:06d}",
            "payer_email": PEOPLE[i % 12][1],
            "total": 50.0 + i,
            "issued_on": f"2026-01-{1 + i:02d}",
        }
        for i in range(24)
    ]
    return manifest, seed


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServiceRuntime]:
    root: Path = tmp_path_factory.mktemp("reach")
    for make in (crm, billing_with_receipts, calendar, texter):
        write_service(root, *make())
    return load_library(root, Settings())


def test_a_send_tool_with_a_list_of_mobile_numbers_is_a_message_tool_by_phone(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    (tool,) = message_tools(World(runtimes))
    assert (tool.service, tool.recipient, tool.body, tool.channel) == (
        "texter",
        "recipients.0.mobileNumber",
        "message",
        "phone",
    )
    assert tool.arguments("+15550001") == {"recipients": [{"mobileNumber": "+15550001"}]}


@pytest.fixture(scope="module")
def texts(runtimes: dict[str, ServiceRuntime]) -> list[Task]:
    made, report = generate_tasks(
        runtimes, GenerateOptions(n=12, seed=5, archetypes=["notify"], chain_rate=0)
    )
    assert report.produced == 12, report.failures
    return made


def test_the_text_goes_to_the_number_the_party_row_holds_bound_from_the_opening_listing(
    texts: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    contacts = {r["email"]: r for r in SeedIndex(runtimes).rows("crm", "contact")}
    for task in texts:
        opening, send = task.meta.walk[0], task.meta.walk[-1]
        assert send.tool == "smsSend" and opening.operation == "list" and opening.service == "crm"
        number = send.arguments["recipients"][0]["mobileNumber"]
        ref = parse_step_ref(send.bindings["recipients.0.mobileNumber"])
        assert ref is not None and ref[0] == 0  # looked up, not handed over
        row = next(r for r in contacts.values() if r["phone"] == number)
        assert row["name"].split()[0] in task.instruction and row["name"] in task.instruction
        assert number not in task.instruction and "phone number Acme CRM has for them" in task.instruction
        assert send.arguments["message"] in task.instruction and "WinText SMS" in task.instruction


def test_chained_work_moves_on_to_a_system_the_scenario_has_not_touched(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    """After a listing in billing, the next archetype that can use any record table lists the calendar, not
    billing's other table (for every draw of the scenario's rng)."""
    world = World(runtimes)
    subject = next(
        s
        for s in subjects(world)
        if {t.key for t, _ in s.records}
        >= {("billing", "invoice"), ("billing", "receipt"), ("calendar", "event")}
    )

    async def second_listing(seed: int) -> str:
        with Session(runtimes, f"reach:{seed}", "2026-01-15", SeedCache()) as session:
            draft = Draft(world, session, random.Random(seed), "2026-01-15")
            scene = await open_scene(draft, VERTICALS[0], subject)
            await scene.use_records(lambda t, rows: t.key == ("billing", "invoice"))
            second = await scene.use_records(lambda t, rows: True)
            return second.table.service

    assert {asyncio.run(second_listing(seed)) for seed in range(12)} == {"calendar"}


def test_a_repeatable_workflow_runs_again_on_another_table_never_on_the_same_one(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    made, report = generate_tasks(
        runtimes, GenerateOptions(n=16, seed=8, archetypes=["report"], chain_rate=1)
    )
    assert report.produced == 16, report.failures
    repeated = 0
    for task in made:
        counted = [s.tool for s in task.meta.walk[1:] if s.operation == "list" and s.service != "crm"]
        assert len(counted) == len(set(counted)) == task.meta.scenario.count("report"), task.id
        repeated += len(counted) >= 2
        # each listing is asked about (a count, or a total where the count equals an earlier one)
        assert task.instruction.count("how many") + task.instruction.count("adds up to") >= len(counted)
    assert repeated >= 8  # people with records in two or three tables have each counted


def test_the_report_never_asks_for_two_equal_values_of_one_type() -> None:
    """A grader reading the answer by value cannot tell '2 orders and 2 bundles' from one value off, so the
    second equal value is not asked for (and a report that would ask nothing else is not made)."""
    draft = Draft(world=None, session=None, rng=random.Random(0), today="2026-01-15")  # type: ignore[arg-type]
    assert draft.answer("number of orders", 2)
    assert not draft.answer("number of bundles", 2.0)
    assert draft.answer("total amount", 2.5) and draft.answer("latest date", "2026-01-02", semantic="date")
    assert not draft.answer("date of the payment", "2026-01-02", semantic="date")
    assert [a.what for a in draft.answers] == ["number of orders", "total amount", "latest date"]
