"""The orchestrator client retries what is safe to retry after a dropped connection, and only that."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from compoworld.cli import build_embedded_app
from compoworld.settings import Settings
from orchestrator.client import OrchestratorClient, OrchestratorError
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import task_create, write_library


class DropsAfterServing(httpx.AsyncBaseTransport):
    """Serves each request, then loses the answer of the first ``drops`` on the way back (ReadError)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, drops: int, paths: tuple[str, ...]) -> None:
        self.inner = inner
        self.drops = drops
        self.paths = paths
        self.seen: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}")
        response = await self.inner.handle_async_request(request)
        if self.drops and request.url.path.endswith(self.paths):
            self.drops -= 1
            await response.aread()
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    built, _ = build_embedded_app(tmp_path / "lib", Settings(admin_token="s3cret"), tmp_path / "tasks.jsonl")
    return built


async def test_a_step_whose_answer_was_lost_is_answered_again_not_run_twice(app) -> None:  # type: ignore[no-untyped-def]
    flaky = DropsAfterServing(httpx.ASGITransport(app=app), drops=2, paths=("/step", "/finish"))
    async with OrchestratorClient("http://cw", transport=flaky) as client:
        opened = await client.open_episode("t-create")
        call = {
            "id": "c1",
            "name": "crm__createContact",
            "arguments": '{"name": "Ann Lee", "email": "ann@example.com", "company_id": 2}',
        }
        out = await client.step(opened.episode_id, [call])
        assert '"success":true' in out.results[0].content.replace(" ", "")
        finished = await client.finish(opened.episode_id, "con_000031")
        assert finished.state == "finished"
        rows = app.state.runtimes["crm"].select(opened.episode_id, "contact", {"name": "Ann Lee"})
        assert len(rows) == 1  # the retried turn did not create a second contact
    assert flaky.seen.count(f"POST /episodes/{opened.episode_id}/step") == 3  # two answers lost


async def test_a_dropped_open_is_not_retried(app) -> None:  # type: ignore[no-untyped-def]
    flaky = DropsAfterServing(httpx.ASGITransport(app=app), drops=1, paths=("/episodes",))
    async with OrchestratorClient("http://cw", transport=flaky) as client:
        with pytest.raises(OrchestratorError, match="ReadError"):
            await client.open_episode("t-create")
    assert flaky.seen == ["POST /episodes"]
