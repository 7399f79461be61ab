"""Scenario instructions, rules and aggregates; LLM paraphrases are checked before they replace the template.

The LLM is mocked here (a scripted stand-in for ``compoworld.llm.LLMClient.chat``): only its
reply matters to the check, and CI has no model endpoint.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi import FastAPI

from compoworld.errors import LLMError
from compoworld.llm import ChatResult, LLMClient
from compoworld.runtime import ServiceRuntime, load_library
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.tasks.generate import GenerateOptions, TaskGenerator, generate_tasks
from orchestrator.tasks.paths import resolve_source
from orchestrator.tasks.scenario.text import Instruction, Paraphraser, leaks, missing
from tests.orchestrator_fixture import serving
from tests.scripted_llm import chat_server
from tests.tasks_library import write_library


class ScriptedLLM:
    """Mocked LLM: returns the next scripted reply (an exception is raised instead of returned)."""

    def __init__(self, replies: list[str | Exception]) -> None:
        self.replies = replies
        self.prompts: list[str] = []

    async def chat(self, messages: list[dict[str, str]], **_: object) -> ChatResult:
        self.prompts.append(messages[-1]["content"])
        reply = self.replies[len(self.prompts) - 1] if len(self.prompts) <= len(self.replies) else ""
        if isinstance(reply, Exception):
            raise reply
        return ChatResult(content=reply)


TEMPLATE = Instruction(
    text="Find the contact whose email is 'ada.chen@example.com' in Acme CRM. Then create a new invoice with "
    "customer email set to the contact's email and amount set to 250. Finally, tell me the contact's phone.",
    required=["ada.chen@example.com", 250],
    hidden=["+15550000000"],
)


@pytest.mark.parametrize(
    ("reply", "accepted"),
    [
        (
            "Please look up ada.chen@example.com in the CRM, bill them 250 and tell me their phone number.",
            True,
        ),
        ("Look up ada.chen@example.com, bill 250 and confirm the phone is +15550000000.", False),  # leaks
        ("Look up Ada in the CRM and bill her, then tell me her phone.", False),  # drops stated values
        (LLMError("endpoint down"), False),
        ("", False),
    ],
)
def test_a_paraphrase_replaces_the_template_only_if_it_keeps_values_and_hides_lookups(
    reply: str | Exception, accepted: bool
) -> None:
    paraphraser = Paraphraser(ScriptedLLM([reply]))  # type: ignore[arg-type]
    text = asyncio.run(paraphraser(TEMPLATE, seed=1))
    assert (text != TEMPLATE.text) is accepted
    assert not missing(text, TEMPLATE.required) and not leaks(text, TEMPLATE.hidden)


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ServiceRuntime]:
    return load_library(write_library(tmp_path_factory.mktemp("lib")), Settings())


@pytest.fixture(scope="module")
def tasks(runtimes: dict[str, ServiceRuntime]) -> list[Task]:
    return generate_tasks(runtimes, GenerateOptions(n=60, seed=21))[0]


def test_generation_uses_an_accepted_paraphrase_and_the_template_otherwise(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    llm = ScriptedLLM(["I need this done: " + "x" * 10, LLMError("down")])
    generator = TaskGenerator(runtimes, GenerateOptions(n=2, seed=4), paraphraser=Paraphraser(llm))  # type: ignore[arg-type]
    produced, report = asyncio.run(generator.run())
    templates = generate_tasks(runtimes, GenerateOptions(n=2, seed=4))[0]
    assert len(llm.prompts) >= 2 and report.paraphrased == 0  # the first reply lost every stated value
    assert [t.instruction for t in produced] == [t.instruction for t in templates]


def test_a_rule_leads_to_one_of_two_checkable_writes_and_the_other_is_guarded(tasks: list[Task]) -> None:
    branched = [t for t in tasks if any(s.condition for s in t.meta.walk)]
    assert {s.condition.taken for t in branched for s in t.meta.walk if s.condition} == {True, False}
    for task in branched:
        steps = [s for s in task.meta.walk if s.condition]
        assert len(steps) == 2 and sorted(s.executed for s in steps) == [False, True]
        assert "If the rule applies" in task.instruction and "or more" in task.instruction
        assert any(
            c.label == "no_op_pass" and c.kind in ("row_unchanged", "row_absent", "action_absent")
            for c in task.rubric
        )


def test_the_rule_threshold_and_the_reported_total_agree_with_the_listed_rows(tasks: list[Task]) -> None:
    for task in tasks:
        step = next((s for s in task.meta.walk if s.condition and s.condition.taken), None)
        if step is None or step.condition is None:
            continue
        executed = [s for s in task.meta.walk]
        results = [
            task.gold_calls[[x for x in executed if x.executed].index(s)].result if s.executed else None
            for s in executed
        ]
        total = resolve_source(step.condition.source, results)
        answers = [c.params["value"] for c in task.rubric if c.kind == "answer_value"]
        assert total in answers, (total, answers)
        assert (total > step.condition.value) == (step.condition.op == "gt")


def test_template_names_services_by_title_and_asks_for_answers_last(tasks: list[Task]) -> None:
    titles = {
        "crm": "Acme CRM",
        "billing": "Ledger Billing",
        "calendar": "Team Calendar",
        "mailer": "Postbox Mailer",
    }
    leads = ("When you're done, reply with", "Finish by telling me", "In your reply, give me")
    for task in tasks:
        assert all(titles[s] in task.instruction for s in task.services), task.instruction
        if task.answer_keys:
            last = task.instruction.rsplit(". ", 1)[-1]
            assert last.startswith(leads), task.instruction


def paraphrasing_model(prefix: str, seen: list[str]) -> FastAPI:
    """A scripted OpenAI-compatible model server (stands in for vLLM/SGLang; CI has no model):
    it "paraphrases" by prefixing the request, so every stated value survives."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        text = body["messages"][-1]["content"]
        seen.append(text)
        return {"content": prefix + text}

    return chat_server(reply)


async def test_paraphrases_come_through_the_llm_client_from_a_model_endpoint(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    seen: list[str] = []
    async with serving(paraphrasing_model("Hi! Could you help? ", seen)) as url:
        client = LLMClient(f"{url}/v1", "scripted", timeout_s=5, retries=0)
        generator = TaskGenerator(runtimes, GenerateOptions(n=3, seed=4), paraphraser=Paraphraser(client))
        produced, report = await generator.run()
        await client.close()
    assert report.paraphrased == 3 and len(seen) == 3
    assert all(t.instruction.startswith("Hi! Could you help? ") for t in produced)
