"""Shared helpers of the orchestrator tests: a small library of hand-written services and tasks.

The services are copies of the runtime's hand-written CRM (tests/runtime_fixture.py) under
other names; the tasks are written by hand with the rubric's built-in kinds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from orchestrator.models import CriterionSpec, GoldCall, Task, TaskMeta
from tests.runtime_fixture import crm_manifest, crm_seed

__all__ = ["free_port", "runtimes", "serving", "task_create", "task_update", "tool_content", "write_library"]


def write_library(root: Path, names: tuple[str, ...] = ("crm", "desk", "mail")) -> Path:
    """A library folder with one CRM-shaped service per name."""
    for name in names:
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        manifest = crm_manifest().model_copy(update={"name": name, "title": f"Test {name}", "domain": "crm"})
        (folder / "manifest.json").write_text(manifest.model_dump_json(indent=2))
        (folder / "seed.json").write_text(json.dumps(crm_seed(), sort_keys=True))
    return root


def runtimes(root: Path, names: tuple[str, ...] = ("crm", "desk", "mail")) -> dict[str, ServiceRuntime]:
    write_library(root, names)
    return {n: ServiceRuntime.from_folder(root / n, Settings()) for n in names}


def task_create(task_id: str = "t-create", distractors: tuple[str, ...] = ("desk",)) -> Task:
    """Create a contact in crm and report its id; a guard keeps another contact untouched."""
    return Task(
        id=task_id,
        instruction="Add Ann Lee (ann@example.com, company 2) as a contact in the CRM and tell me her new id.",
        services=["crm"],
        distractors=list(distractors),
        today="2026-03-04",
        gold_calls=[
            GoldCall(
                service="crm",
                tool="createContact",
                arguments={"name": "Ann Lee", "email": "ann@example.com", "company_id": 2},
            )
        ],
        rubric=[
            CriterionSpec(
                id="c0",
                kind="row_exists",
                label="no_op_fail",
                service="crm",
                params={"table": "contact", "where": {"name": "Ann Lee", "email": "ann@example.com"}},
            ),
            CriterionSpec(
                id="c1",
                kind="row_unchanged",
                label="no_op_pass",
                service="crm",
                params={
                    "table": "contact",
                    "pk": "id",
                    "key": "con_000001",
                    "expected": {"name": "Person 1"},
                },
            ),
            CriterionSpec(
                id="c2", kind="answer_contains", label="no_op_fail", params={"value": "con_000031"}
            ),
        ],
        answer_keys=["con_000031"],
        meta=TaskMeta(capabilities=["create"], domain="crm", seed=1),
    )


def task_update(task_id: str = "t-update") -> Task:
    """Two services: read a contact in crm, then mark the same person a customer in desk."""
    return Task(
        id=task_id,
        instruction="Look up contact con_000005 in the CRM and mark the same contact as a customer in the desk.",
        services=["crm", "desk"],
        distractors=["mail"],
        today="2026-03-04",
        gold_calls=[
            GoldCall(service="crm", tool="getContact", arguments={"id": "con_000005"}),
            GoldCall(
                service="desk", tool="updateContact", arguments={"id": "con_000005", "status": "customer"}
            ),
        ],
        rubric=[
            CriterionSpec(
                id="c0",
                kind="field_equals",
                label="no_op_fail",
                service="desk",
                params={
                    "table": "contact",
                    "pk": "id",
                    "key": "con_000005",
                    "field": "status",
                    "value": "customer",
                },
            ),
        ],
        meta=TaskMeta(capabilities=["lookup", "update"], domain="support", seed=2),
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def tool_content(result: Any) -> dict[str, Any]:
    """The envelope of a tool message (or of its dict form)."""
    content = result["content"] if isinstance(result, dict) else result.content
    value: dict[str, Any] = json.loads(content)
    return value


@contextlib.asynccontextmanager
async def serving(app: Any, keep_alive_s: int = 5, port: int | None = None) -> AsyncIterator[str]:
    """Run ``app`` with uvicorn on 127.0.0.1 and ``port`` (a free one if None); yields its base URL."""
    port = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_keep_alive=keep_alive_s
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
