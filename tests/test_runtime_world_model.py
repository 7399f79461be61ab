"""The world model with an LLM endpoint configured: validated responses, retries, offline fallback.

The model is a scripted OpenAI-compatible server on 127.0.0.1 (tests/scripted_llm.py); no model runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compoworld.llm import LLMClient, llm_from_settings
from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from tests.orchestrator_fixture import free_port, serving
from tests.runtime_fixture import write_crm_service
from tests.scripted_llm import chat_server

SENT = {"message_id": "msg_42", "to": "ann@example.com", "status": "sent"}


def crm(tmp_path: Path, llm: LLMClient | None) -> ServiceRuntime:
    runtime = ServiceRuntime.from_folder(write_crm_service(tmp_path), Settings(llm_retries=1), llm)
    runtime.fork("e1")
    return runtime


async def test_a_valid_model_response_is_the_simulated_result_and_is_logged(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    async with serving(chat_server(lambda body: {"content": json.dumps(SENT)}, seen)) as url:
        rt = crm(tmp_path, LLMClient(f"{url}/v1", "scripted", timeout_s=5, retries=0))
        out = await rt.call_tool("e1", "sendEmail", {"to": "ann@example.com", "subject": "Hi"})
    assert out.envelope() == {"success": True, "data": SENT, "backend": "simulated"}
    prompt = json.loads(seen[0]["messages"][-1]["content"])
    assert prompt["tool"] == "sendEmail" and prompt["output_schema"]["required"] == [
        "message_id",
        "to",
        "status",
    ]
    assert rt.dump("e1")["tables"]["action_log"][0]["response"] == SENT


async def test_invalid_model_output_is_retried_then_replaced_by_the_offline_generator(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    bad = {"content": json.dumps({"message_id": 5})}  # wrong type, missing fields
    async with serving(chat_server(lambda body: bad, seen)) as url:
        rt = crm(tmp_path, LLMClient(f"{url}/v1", "scripted", timeout_s=5, retries=0))
        out = await rt.call_tool("e1", "sendEmail", {"to": "ann@example.com", "subject": "Hi"})
    offline = await crm(tmp_path / "offline", None).call_tool(
        "e1", "sendEmail", {"to": "ann@example.com", "subject": "Hi"}
    )
    assert len(seen) == 2  # the first answer and one retry (llm_retries=1)
    assert out == offline and out.success and isinstance(out.data["message_id"], str)


async def test_a_dead_endpoint_falls_back_offline_without_failing_the_call(tmp_path: Path) -> None:
    client = LLMClient(f"http://127.0.0.1:{free_port()}/v1", "scripted", timeout_s=2, retries=0)
    rt = crm(tmp_path, client)
    out = await rt.call_tool("e1", "sendEmail", {"to": "ann@example.com", "subject": "Hi"})
    assert out.success and out.backend == "simulated"
    assert client.usage.failures == 1


def test_no_base_url_means_no_client() -> None:
    assert llm_from_settings(Settings()) is None
    client = llm_from_settings(Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m"))
    assert client is not None and client.model == "m"
