"""The ``act`` archetype on a hand-written library: find one of a person's records by a rule, then act on it.

The library is the test CRM plus a billing service whose invoices can be voided (an ``action``-backend
transition that refuses an invoice already void) and credited (a credit note references the invoice and
carries its amount). Tasks are generated with only the ``act`` archetype; each is kept only after its
gold run, a do-nothing run and every solution variant were graded, so these tests look at *what* the
gold solution does: the record picked is the one the rule names among the person's rows, its key and
amount come from the listing (bindings), and a void invoice is never voided again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.manifest import ActionDef, ServiceManifest, ToolDef
from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.tasks.generate import GenerateOptions, generate_tasks
from orchestrator.tasks.paths import parse_step_ref
from orchestrator.tasks.scenario.acts import acts_for
from orchestrator.tasks.scenario.recipes import a_or_an
from orchestrator.tasks.scenario.scene import plain_title
from orchestrator.tasks.scenario.world import World
from orchestrator.tasks.seeds import SeedIndex
from tests.tasks_library import PEOPLE, _col, _entity, crm, crud_tools, write_service


def billing() -> tuple[ServiceManifest, dict[str, list[dict[str, Any]]]]:
    invoice = _entity(
        "invoice",
        "string",
        "inv",
        [
            _col("customer_email", format="email", nullable=False, semantic="email"),
            _col("amount", "number", nullable=False, semantic="money"),
            _col("due_date", format="date", semantic="date"),
            _col("status", enum=["open", "paid", "void"], semantic="status"),
            _col("description", semantic="text"),
        ],
        "description",
    )
    credit = _entity(
        "credit_note",
        "string",
        "crn",
        [
            _col("invoice_id", nullable=False, ref="invoice", semantic="id:invoice"),
            _col("amount", "number", nullable=False, semantic="money"),
        ],
        "invoice_id",
    )
    tools = crud_tools(invoice, "/invoices", ["customer_email", "status"]) + [
        t for t in crud_tools(credit, "/credit_notes", ["invoice_id"]) if t.operation in ("create", "list")
    ]
    tools.append(
        ToolDef(
            name="voidInvoice",
            kind="write",
            operation="action",
            backend="action",
            entity="invoice",
            method="POST",
            path="/invoices/{id}/void",
            pk_arg="id",
            input_schema={
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
                "additionalProperties": False,
            },
            arg_semantics={"id": "id:invoice"},
            arg_locations={"id": "path"},
            action=ActionDef(
                kind="transition",
                verb="void",
                target="invoice",
                sets={"status": "void"},
                refuses={"status": ["void"]},
            ),
            description="Void an invoice.",
        )
    )
    manifest = ServiceManifest(
        name="billing",
        title="The Ledger Billing RESTful API",
        domain="finance",
        entities=[invoice, credit],
        tools=tools,
    )
    rows = [
        {
            "id": f"inv_{i + 1:06d}",
            "customer_email": PEOPLE[i % 4][1],
            "amount": round(120 + i * 41.5, 2),
            "due_date": f"2026-0{1 + i % 5}-{3 + i:02d}",
            "status": ["open", "void", "paid"][i % 3],
            "description": f"Services batch {i + 1}",
        }
        for i in range(16)
    ]
    return manifest, {
        "invoice": rows,
        "credit_note": [{"id": "crn_000001", "invoice_id": "inv_000001", "amount": 1.0}],
    }


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServiceRuntime]:
    root: Path = tmp_path_factory.mktemp("acts")
    write_service(root, *crm())
    write_service(root, *billing())
    return load_library(root, Settings())


@pytest.fixture(scope="module")
def tasks(runtimes: dict[str, ServiceRuntime]) -> list[Task]:
    made, report = generate_tasks(runtimes, GenerateOptions(n=24, seed=3, archetypes=["act"], chain_rate=0))
    assert report.produced == 24, report.failures
    return made


def test_the_world_offers_the_transition_and_the_anchored_create_of_a_record_table(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    world = World(runtimes)
    acts = {a.tool.name: a for a in acts_for(world, world.tables[("billing", "invoice")])}
    assert set(acts) == {"voidInvoice", "createCreditNote"}
    assert acts["voidInvoice"].child is None and acts["voidInvoice"].refuses == {"status": ("void",)}
    assert (
        acts["createCreditNote"].carry == {"amount": "amount"}
        and acts["createCreditNote"].ref_column == "invoice_id"
    )
    assert not acts_for(world, world.tables[("crm", "contact")])  # nothing acts on a contact


def _acted(task: Task) -> tuple[int, Any]:
    index, step = next(
        (i, s) for i, s in enumerate(task.meta.walk) if s.tool in ("voidInvoice", "createCreditNote")
    )
    return index, step


def test_the_record_acted_on_is_the_one_the_rule_names_among_the_persons_rows(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    seed = {r["id"]: r for r in SeedIndex(runtimes).rows("billing", "invoice")}
    kinds = set()
    for task in tasks:
        _, step = _acted(task)
        key = step.arguments.get("id") or step.arguments.get("invoice_id")
        row = seed[key]
        mine = [r for r in seed.values() if r["customer_email"] == row["customer_email"]]
        if "largest amount" in task.instruction:
            assert row["amount"] == max(r["amount"] for r in mine)
            kinds.add("largest")
        else:
            assert "most recent one" in task.instruction
            assert row["due_date"] == max(r["due_date"] for r in mine)
            kinds.add("latest")
        (answer,) = task.answer_keys
        if "largest" in task.instruction:
            assert float(answer) == row["amount"]
        else:
            assert answer == row["due_date"]
        if step.tool == "voidInvoice":
            assert row["status"] != "void"  # a transition the record's state refuses is never asked for
            kinds.add("void")
        else:
            assert step.arguments["amount"] == row["amount"]  # the full amount, carried over
            assert "for its full amount" in task.instruction
            kinds.add("credit")
    assert kinds == {"largest", "latest", "void", "credit"}


def test_the_key_and_the_amount_are_bound_to_the_listing_that_found_them(tasks: list[Task]) -> None:
    for task in tasks:
        index, step = _acted(task)
        assert step.bindings, task.id
        for ref in step.bindings.values():
            parsed = parse_step_ref(ref)
            assert parsed is not None and parsed[0] < index
            assert task.meta.walk[parsed[0]].operation == "list"
        assert "inv_" not in task.instruction and "Ledger Billing" in task.instruction


def test_titles_and_articles_read_as_a_person_writes_them() -> None:
    assert plain_title("The Ledger Billing RESTful API") == "Ledger Billing"
    assert (
        plain_title("API for the COVID-19 Tracking QR Code Signin Server.")
        == "COVID-19 Tracking QR Code Signin Server"
    )
    assert plain_title("Twilio - Numbers") == "Twilio Numbers"
    assert plain_title("GOV.UK Pay API") == "GOV.UK Pay"
    assert [a_or_an(w) for w in ("user", "invoice", "unit", "order", "euro")] == [
        "a user",
        "an invoice",
        "a unit",
        "an order",
        "a euro",
    ]


def test_a_house_rule_on_the_amount_decides_which_of_two_acts_the_record_gets(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    made, report = generate_tasks(
        runtimes, GenerateOptions(n=16, seed=4, archetypes=["act_by_rule"], chain_rate=0)
    )
    assert report.produced == 16, report.failures
    seed = {r["id"]: r for r in SeedIndex(runtimes).rows("billing", "invoice")}
    taken = set()
    for task in made:
        branches = [s for s in task.meta.walk if s.condition is not None]
        assert len(branches) == 2 and {s.tool for s in branches} == {"voidInvoice", "createCreditNote"}
        assert sum(s.executed for s in branches) == 1 and "conditional" in task.meta.capabilities
        threshold = branches[0].condition.value + 0.005  # type: ignore[union-attr]
        key = branches[0].arguments.get("id") or branches[0].arguments.get("invoice_id")
        assert all((s.arguments.get("id") or s.arguments.get("invoice_id")) == key for s in branches)
        high = next(s for s in branches if s.condition.op == "gt")  # type: ignore[union-attr]
        assert high.executed == (seed[key]["amount"] >= threshold)  # the branch the row's amount earns
        assert f"{threshold:,.0f}" in task.instruction and "If the rule applies" in task.instruction
        taken.add(high.executed)
        done = next(s for s in branches if s.executed)
        assert [c.tool for c in task.gold_calls].count(done.tool) == 1
        assert not any(c.tool == next(s for s in branches if not s.executed).tool for c in task.gold_calls)
    assert taken == {True, False}  # both sides of the rule occur


def test_the_record_is_opened_before_the_act_and_again_after_a_transition(tasks: list[Task]) -> None:
    """A person opens the record they picked before acting on it, and after a change to the record itself
    opens it again to see it took (the gold run's read shows the new state)."""
    checked = 0
    for task in tasks:
        index, step = _acted(task)
        walk = task.meta.walk
        key = step.arguments.get("id") or step.arguments.get("invoice_id")
        before = walk[index - 1]
        assert (before.service, before.operation) == ("billing", "read") and key in before.arguments.values()
        if step.tool == "voidInvoice":
            after = walk[index + 1]
            assert after.operation == "read" and key in after.arguments.values()
            assert "open it again to check that it now shows as voided" in task.instruction
            assert '"void"' in str(task.gold_calls[index + 1].result).replace("'", '"')
            checked += 1
        else:  # a credit note is a new record: the invoice itself does not change
            assert "open it again" not in task.instruction
    assert checked
