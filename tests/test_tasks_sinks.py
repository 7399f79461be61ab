"""Where a scenario's title goes when it adds a row: a text column meant for a title, a name or a
description (by type and by what its name says), never a date, a number, a key, a code or an address."""

from __future__ import annotations

import pytest

from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.tasks.generate import GenerateOptions, generate_tasks
from orchestrator.tasks.scenario.sinks import is_title_column, name_words, sink_for
from orchestrator.tasks.scenario.world import World
from tests.tasks_library import _col

LIBRARY = Settings().library
#: how every sink title the archetypes write begins
TITLES = ("Statement for ", "Follow up with ", "Review ", "Escalation: ", "Routine review: ", "Call with ")


def test_column_names_split_into_words_whatever_their_case() -> None:
    assert name_words("customer_memo") == ["customer", "memo"]
    assert name_words("FriendlyName") == ["friendly", "name"]
    assert name_words("accounts_receivable_account_id") == ["accounts", "receivable", "account", "id"]


@pytest.mark.parametrize(
    ("column", "entity", "expected"),
    [
        (_col("customer_memo", semantic="text"), "invoice", True),
        (_col("notes", semantic="text"), "bill", True),
        (_col("subject", semantic="title"), "ticket", True),
        (_col("FriendlyName"), "bundle", True),
        (_col("name", semantic="title"), "department", True),
        (_col("bill_date", format="date", semantic="date"), "bill", False),
        (_col("channel"), "invoice", False),
        (_col("accounts_receivable_account_id"), "payment", False),
        (_col("Rule", format="email", semantic="email"), "inboundrule", False),
        (_col("department_name"), "employee", False),
        (_col("display_name", semantic="person_name"), "employee", False),
        (_col("note_count", "integer"), "contact", False),
        (_col("title", enum=["mr", "ms"]), "contact", False),
        (_col("status_message", semantic="status"), "payment", False),
    ],
)
def test_a_title_column_is_free_text_named_for_a_title_name_or_description(
    column: object, entity: str, expected: bool
) -> None:
    assert is_title_column(column, entity) is expected  # type: ignore[arg-type]


@pytest.mark.skipif(not any(LIBRARY.glob("*/manifest.json")), reason="the starter library is not built")
def test_titles_the_starter_tasks_write_land_only_in_title_columns() -> None:
    """The starter's bills once got "Statement for ..." in their bill date and invoices in their channel."""
    runtimes: dict[str, ServiceRuntime] = load_library(LIBRARY, Settings(library=LIBRARY, llm_base_url=None))
    options = GenerateOptions(n=12, seed=2, archetypes=["bill", "follow_up"], chain_rate=0)
    tasks = generate_tasks(runtimes, options)[0]
    written: list[tuple[str, str]] = []
    for task in tasks:
        for call in task.gold_calls:
            tool = runtimes[call.service].manifest.tool(call.tool)
            assert tool is not None
            entity = runtimes[call.service].manifest.entity(tool.entity or "")
            for arg, value in (call.arguments or {}).items():
                if not (isinstance(value, str) and value.startswith(TITLES)) or entity is None:
                    continue
                column = entity.column(tool.arg_columns.get(arg, arg))
                assert column is not None, (call.tool, arg)
                assert is_title_column(column, entity.name), (call.tool, arg)
                written.append((call.service, column.name))
    assert any(svc == "accounting" for svc, _ in written)  # the money sinks are among them


@pytest.mark.skipif(not any(LIBRARY.glob("*/manifest.json")), reason="the starter library is not built")
def test_every_starter_sink_plan_puts_its_title_in_a_title_column_and_its_day_in_a_due_date() -> None:
    runtimes = load_library(LIBRARY, Settings(library=LIBRARY, llm_base_url=None))
    world = World(runtimes)
    plans = [p for p in (sink_for(world, t) for t in world.sinks()) if p is not None]
    assert len(plans) >= 10
    for plan in plans:
        column = plan.table.entity.column(plan.title)
        assert column is not None and is_title_column(column, plan.table.entity.name), plan.table.key
        if plan.date is not None:  # a new row's day is when it is due, never when it was completed
            assert not {"completed", "created", "paid"} & set(name_words(plan.date.name)), plan.table.key
    money = {p.table.entity.name: p.title for p in plans if p.table.service == "accounting"}
    assert money.get("bill") == "notes" and money.get("invoice") == "customer_memo"
