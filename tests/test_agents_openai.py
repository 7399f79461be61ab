"""The openai agent against a scripted OpenAI-compatible server.

The server below stands in for a model (vLLM, SGLang, a hosted API): it implements
``POST /v1/chat/completions`` on 127.0.0.1 and replays scripted assistant turns with tool
calls, chosen by how many assistant turns the conversation already has. No real model runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from compoworld.settings import Settings
from orchestrator.agents import create_agent
from orchestrator.episodes import Orchestrator
from orchestrator.runner import RunConfig, run_episode, run_tasks
from tests.orchestrator_fixture import runtimes, serving, task_create
from tests.scripted_llm import chat_server

CREATE_ARGS = json.dumps({"name": "Ann Lee", "email": "ann@example.com", "company_id": 2})
SCRIPT: list[dict[str, Any]] = [
    {
        "content": "",
        "tool_calls": [("crm__listContacts", '{"limit": 1}'), ("crm__createContact", CREATE_ARGS)],
    },
    {"content": "Created Ann Lee: her id is con_000031.", "tool_calls": []},
]


def scripted_model(script: list[dict[str, Any]], seen: list[dict[str, Any]], fail: bool = False) -> FastAPI:
    """A stand-in for an OpenAI-compatible model server: replays ``script`` turn by turn."""

    def reply(body: dict[str, Any]) -> dict[str, Any] | int:
        if fail:
            return 503
        turn = script[min(sum(m["role"] == "assistant" for m in body["messages"]), len(script) - 1)]
        calls = [
            {
                "id": f"call_{len(body['messages'])}_{i}",
                "type": "function",
                "function": {"name": n, "arguments": a},
            }
            for i, (n, a) in enumerate(turn["tool_calls"])
        ]
        message: dict[str, Any] = {"content": turn["content"] or None, "reasoning_content": "thinking..."}
        if calls:
            message["tool_calls"] = calls
        return message

    return chat_server(reply, seen)


async def test_the_openai_agent_solves_a_task_through_a_scripted_endpoint(tmp_path: Path) -> None:
    orch = Orchestrator.embedded(runtimes(tmp_path / "lib"), Settings())
    seen: list[dict[str, Any]] = []
    async with serving(scripted_model(SCRIPT, seen)) as url:
        agent = create_agent("openai", model="qwen3", base_url=f"{url}/v1", concurrency=4, retries=0)
        summary = await run_tasks(
            orch,
            agent,
            [task_create()],
            RunConfig(rollouts=3, concurrency=3),
            tmp_path / "t.jsonl",
            progress=False,
        )
        await agent.aclose()
    assert summary.episodes == 3 and summary.complete == 3
    row = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])
    assert row["source"] == "compoworld/openai/qwen3"
    meta = row["meta"]
    assert meta["prompt_tokens"] == 20 and meta["completion_tokens"] == 20 and meta["llm_requests"] == 2
    assert meta["n_tool_calls"] == 2 and meta["finish_reason"] == "answered"
    assistant = row["messages"][2]
    assert assistant["reasoning_content"] == "thinking..."
    assert assistant["tool_calls"][1]["function"]["arguments"] == CREATE_ARGS  # as the model wrote it
    first = seen[0]
    assert first["model"] == "qwen3" and {t["function"]["name"] for t in first["tools"]} >= {
        "crm__createContact"
    }
    replay = next(s for s in seen if len(s["messages"]) > 2)["messages"]
    assert [m["role"] for m in replay] == ["system", "user", "assistant", "tool", "tool"]
    assert isinstance(replay[2]["tool_calls"][0]["function"]["arguments"], str)
    assert json.loads(replay[4]["content"])["data"]["id"] == "con_000031"


async def test_a_failing_endpoint_aborts_the_episode_with_its_reason(tmp_path: Path) -> None:
    orch = Orchestrator.embedded(runtimes(tmp_path / "lib"), Settings())
    seen: list[dict[str, Any]] = []
    async with serving(scripted_model(SCRIPT, seen, fail=True)) as url:
        agent = create_agent("openai", model="m", base_url=f"{url}/v1", retries=1, timeout_s=5)
        traj = await run_episode(orch, agent, task_create(), 0, RunConfig())
        await agent.aclose()
    assert len(seen) == 2  # one try and one retry
    assert traj.meta.model_extra is not None and traj.meta.model_extra["state"] == "aborted"
    assert traj.meta.finish_reason.startswith("error: LLMError") and traj.meta.score == 0.0
    assert all(not v.passed for v in traj.meta.criteria)
