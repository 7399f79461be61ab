"""The one HTTP client of the orchestrator's episode API, shared by the runner and the trainer.

It speaks the orchestrator's own request and response models (``orchestrator.api``,
``orchestrator.groups``), so a field added there is read here with no mirror to update. Every
failure (unreachable, timed out, an HTTP error status, an answer that does not parse) raises
``OrchestratorError`` with the HTTP status when there was one; ``RemoteBackend`` maps those
statuses back onto the orchestrator's own exception tree for the runner.
"""

from __future__ import annotations

import asyncio
import secrets
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from compoworld.errors import CompoWorldError
from orchestrator.api import (
    AbortRequest,
    FinishRequest,
    FinishResponse,
    OpenRequest,
    OpenResponse,
    StepRequest,
    StepResponse,
)
from orchestrator.groups_api import GroupRewardRequest, GroupRewardResponse
from orchestrator.models import Trajectory

__all__ = ["OrchestratorClient", "OrchestratorError"]

M = TypeVar("M", bound=BaseModel)


RETRIES = 2  # extra attempts after a dropped connection
BACKOFF_S = 0.05  # then 0.2 s


class OrchestratorError(CompoWorldError):
    """The orchestrator could not be reached, timed out, refused a request or answered nonsense."""

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class OrchestratorClient:
    """Typed calls to ``/episodes`` and ``/groups`` of one orchestrator; an async context manager."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 5.0,
        max_connections: int = 256,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self._timeout_s = timeout_s
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, timeout=self._timeout, limits=limits, transport=transport
        )

    async def __aenter__(self) -> OrchestratorClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        body: BaseModel | None = None,
        timeout_s: float | None = None,
        *,
        idempotent: bool | None = None,
    ) -> Any:
        """The JSON answer of one call; ``OrchestratorError`` on any failure.

        A connection that was never made is retried for any request; one dropped after the
        request went out (a pooled keep-alive connection the server closed: ``ReadError``,
        ``RemoteProtocolError``) only for an idempotent one (GET and DELETE by default; finish,
        and a step carrying its ``step_id``, say so). A timeout is never retried.
        """
        timeout = (
            self._timeout if timeout_s is None else httpx.Timeout(timeout_s, connect=self._timeout.connect)
        )
        payload = body.model_dump(mode="json", exclude_none=True) if body is not None else None
        safe = method in ("GET", "HEAD", "DELETE") if idempotent is None else idempotent
        for attempt in range(RETRIES + 1):
            try:
                resp = await self._http.request(method, path, json=payload, timeout=timeout)
                break
            except httpx.TimeoutException as exc:
                raise OrchestratorError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
            except (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
                unsent = isinstance(exc, httpx.ConnectError)
                if attempt == RETRIES or not (unsent or safe):
                    raise OrchestratorError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
                await asyncio.sleep(BACKOFF_S * (4**attempt))
            except httpx.HTTPError as exc:
                raise OrchestratorError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 300:
            try:
                detail = str(resp.json().get("detail", resp.text))
            except (ValueError, AttributeError):
                detail = resp.text
            message = f"{method} {path}: HTTP {resp.status_code}: {detail[:500]}"
            raise OrchestratorError(message, resp.status_code, detail)
        try:
            return resp.json()
        except ValueError as exc:
            raise OrchestratorError(f"{method} {path}: the answer is not JSON", resp.status_code) from exc

    async def _call(
        self,
        model: type[M],
        method: str,
        path: str,
        body: BaseModel | None = None,
        timeout_s: float | None = None,
        *,
        idempotent: bool | None = None,
    ) -> M:
        data = await self.request(method, path, body, timeout_s, idempotent=idempotent)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise OrchestratorError(f"{method} {path}: unexpected answer: {exc}") from exc

    async def open(self, req: OpenRequest) -> OpenResponse:
        return await self._call(OpenResponse, "POST", "/episodes", req)

    async def open_episode(
        self, task_id: str, *, mode: str = "direct", group_id: str | None = None, rollout_idx: int = 0
    ) -> OpenResponse:
        """Open an episode of a loaded task (the trainer's form of ``open``)."""
        try:
            req = OpenRequest.model_validate(
                {"task_id": task_id, "mode": mode, "group_id": group_id, "rollout_idx": rollout_idx}
            )
        except ValidationError as exc:
            raise OrchestratorError(f"POST /episodes: invalid request: {exc}") from exc
        return await self.open(req)

    async def step_request(self, episode_id: str, req: StepRequest) -> StepResponse:
        """One turn; it gets a ``step_id`` if it has none, so a retry is answered, never run twice."""
        if req.step_id is None:
            req = req.model_copy(update={"step_id": secrets.token_urlsafe(12)})
        return await self._call(StepResponse, "POST", f"/episodes/{episode_id}/step", req, idempotent=True)

    async def step(
        self, episode_id: str, tool_calls: list[dict[str, Any]], assistant_content: str | None = None
    ) -> StepResponse:
        """Run one assistant turn's calls ``[{id, name, arguments}]`` in order.

        ``arguments`` is the JSON string the model wrote (the orchestrator records it byte for
        byte and answers a malformed one with an ``invalid_arguments`` tool result);
        ``assistant_content`` is the turn's text besides the calls, kept in the trajectory.
        """
        assistant = {"content": assistant_content} if assistant_content else None
        try:
            req = StepRequest.model_validate({"tool_calls": tool_calls, "assistant": assistant})
        except ValidationError as exc:
            raise OrchestratorError(f"POST /episodes/{episode_id}/step: invalid request: {exc}") from exc
        return await self.step_request(episode_id, req)

    async def finish(self, episode_id: str, answer: str) -> FinishResponse:
        body = FinishRequest(answer=answer)  # a second finish answers the first result: idempotent
        return await self._call(
            FinishResponse, "POST", f"/episodes/{episode_id}/finish", body, idempotent=True
        )

    async def abort(self, episode_id: str, reason: str = "aborted") -> FinishResponse:
        """Give the episode up (every criterion counts as failed)."""
        body = AbortRequest(reason=reason[:500])
        return await self._call(FinishResponse, "POST", f"/episodes/{episode_id}/abort", body)

    async def trajectory(self, episode_id: str) -> Trajectory:
        return await self._call(Trajectory, "GET", f"/episodes/{episode_id}")

    async def task_ids(self) -> list[str]:
        """``GET /tasks``: the ids of the tasks the orchestrator serves."""
        data = await self.request("GET", "/tasks")
        tasks = data.get("tasks") if isinstance(data, dict) else None
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
            raise OrchestratorError("GET /tasks: unexpected answer: no list of task ids under 'tasks'")
        return tasks

    async def release(self, episode_id: str) -> dict[str, Any]:
        """``DELETE /episodes/{id}``: free the episode's forks (a live episode is aborted first)."""
        return dict(await self.request("DELETE", f"/episodes/{episode_id}"))

    async def group_reward(
        self,
        group_id: str,
        episode_id: str,
        verdicts: list[bool],
        *,
        expected_n: int,
        timeout_s: float,
        importance: list[float] | None = None,
        aborted: bool = False,
    ) -> GroupRewardResponse:
        """Report to the group board and wait (up to ``timeout_s`` plus the request timeout)."""
        try:
            body = GroupRewardRequest(
                episode_id=episode_id,
                verdicts=verdicts,
                importance=importance,
                expected_n=expected_n,
                timeout_s=timeout_s,
                aborted=aborted,
            )
        except ValidationError as exc:
            raise OrchestratorError(f"POST /groups/{group_id}/reward: invalid request: {exc}") from exc
        path = f"/groups/{group_id}/reward"
        return await self._call(
            GroupRewardResponse, "POST", path, body, timeout_s=timeout_s + self._timeout_s
        )
