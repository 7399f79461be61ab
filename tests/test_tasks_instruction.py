"""Instructions, branches and aggregates; LLM paraphrases are checked before they replace the template.

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
from orchestrator.models import Task
from orchestrator.tasks.execute import Session
from orchestrator.tasks.generate import GenerateOptions, TaskGenerator, generate_tasks
from orchestrator.tasks.instruction import Instruction, Paraphraser, leaks, missing
from orchestrator.tasks.paths import resolve_source
from orchestrator.tasks.replay import replay
from orchestrator.tasks.verify import task_steps
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
    return load_library(write_library(tmp_path_factory.mktemp("lib")))


@pytest.fixture(scope="module")
def tasks(runtimes: dict[str, ServiceRuntime]) -> list[Task]:
    return generate_tasks(runtimes, GenerateOptions(n=120, seed=21, conditional_rate=0.5))[0]


def test_generation_uses_an_accepted_paraphrase_and_the_template_otherwise(
    runtimes: dict[str, ServiceRuntime],
) -> None:
    llm = ScriptedLLM(["I need this done: " + "x" * 10, LLMError("down")])
    generator = TaskGenerator(runtimes, GenerateOptions(n=2, seed=4), paraphraser=Paraphraser(llm))  # type: ignore[arg-type]
    produced, report = asyncio.run(generator.run())
    templates = generate_tasks(runtimes, GenerateOptions(n=2, seed=4))[0]
    assert len(llm.prompts) >= 2 and report.paraphrased == 0  # the first reply lost every stated value
    assert [t.instruction for t in produced] == [t.instruction for t in templates]


def test_branches_state_their_condition_and_a_skipped_write_is_guarded(tasks: list[Task]) -> None:
    branched = [t for t in tasks if "conditional-branch" in t.meta.capabilities]
    assert {s.condition.taken for t in branched for s in t.meta.walk if s.condition} == {True, False}
    for task in branched:
        step = next(s for s in task.meta.walk if s.condition)
        assert task.instruction.count("If ") + task.instruction.count(" if ") >= 1
        assert "otherwise leave it as it is" in task.instruction
        if not step.condition.taken:  # type: ignore[union-attr]
            assert len(task.gold_calls) == len(task.meta.walk) - 1
            assert any(
                c.label == "no_op_pass" and c.kind in ("row_unchanged", "row_absent", "action_absent")
                for c in task.rubric
            )


def test_aggregate_answers_match_the_rows_they_count(
    tasks: list[Task], runtimes: dict[str, ServiceRuntime]
) -> None:
    aggregated = [t for t in tasks if "aggregation" in t.meta.capabilities]
    assert aggregated
    for task in aggregated:
        crit = next(c for c in task.rubric if str(c.params.get("source", "")).startswith(("count:", "sum:")))
        assert (
            resolve_source(crit.params["source"], [g.result for g in task.gold_calls]) == crit.params["value"]
        )
        last = task_steps(task)[-1]
        tool = runtimes[last.service].manifest.tool(last.tool)
        assert tool is not None and tool.entity is not None
        if tool.search_arg in last.arguments:
            continue
        where = {tool.arg_columns[a]: v for a, v in last.arguments.items()}
        with Session(runtimes, f"agg:{task.id}", task.today) as session:
            asyncio.run(replay(task_steps(task), session))
            rows = session.select(last.service, tool.entity, where)
        expected = (
            len(rows)
            if crit.params["source"].startswith("count:")
            else round(sum(r[crit.params["source"].rsplit(":", 1)[1]] for r in rows), 2)
        )
        assert crit.params["value"] == expected


def test_template_names_services_by_title_and_asks_for_answers_last(tasks: list[Task]) -> None:
    titles = {
        "crm": "Acme CRM",
        "billing": "Ledger Billing",
        "calendar": "Team Calendar",
        "mailer": "Postbox Mailer",
    }
    for task in tasks:
        assert all(titles[s] in task.instruction for s in task.services)
        if task.answer_keys:
            assert "Finally, tell me" in task.instruction


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
