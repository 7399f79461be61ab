"""Where the runner's episodes live: in-process (the ``Orchestrator`` itself) or a remote orchestrator.

Both expose the same coroutine methods (open, step, finish, abort, trajectory, delete), so
the runner never knows which it drives. The remote one maps HTTP statuses back to the
orchestrator's exception tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import httpx

from compoworld.errors import CompoWorldError, ServiceUnavailable
from compoworld.runtime.service import load_library
from compoworld.settings import Settings
from orchestrator.api import (
    AbortRequest,
    FinishResponse,
    OpenRequest,
    OpenResponse,
    StepRequest,
    StepResponse,
)
from orchestrator.discovery import ServiceDirectory
from orchestrator.episodes import Orchestrator
from orchestrator.errors import EpisodeConflict, EpisodeNotFound, InvalidRequest
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.models import Trajectory

__all__ = ["EpisodeBackend", "RemoteBackend", "embedded_backend", "remote_services_backend"]


class EpisodeBackend(Protocol):
    """The episode API as coroutines."""

    async def open(self, req: OpenRequest) -> OpenResponse: ...
    async def step(self, episode_id: str, req: StepRequest) -> StepResponse: ...
    async def finish(self, episode_id: str, answer: str) -> FinishResponse: ...
    async def abort(self, episode_id: str, reason: str = "aborted") -> FinishResponse: ...
    async def trajectory(self, episode_id: str) -> Trajectory: ...
    async def delete(self, episode_id: str) -> dict[str, Any]: ...
    async def aclose(self) -> None: ...


def embedded_backend(
    library: Path, settings: Settings, config: OrchestratorConfig | None = None
) -> Orchestrator:
    """Every service of ``library`` in this process, driven without HTTP (the default, and the fastest)."""
    runtimes = load_library(library, settings)
    return Orchestrator.embedded(runtimes, settings, None, **({"config": config} if config else {}))


def remote_services_backend(
    settings: Settings, urls: dict[str, list[str]] | None = None, config: OrchestratorConfig | None = None
) -> Orchestrator:
    """An in-process orchestrator over services reached by URL (a map file or the URL template)."""
    return Orchestrator(ServiceDirectory.remote(settings, urls), config=config)


class RemoteBackend:
    """An orchestrator at ``base_url`` (``compoworld up`` or ``compoworld orchestrator``)."""

    def __init__(self, base_url: str, timeout_s: float = 120.0, max_connections: int = 256) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    async def _send(self, method: str, path: str, body: Any = None) -> Any:
        try:
            resp = await self.http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ServiceUnavailable("orchestrator", f"{self.base_url}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code < 300:
            return resp.json()
        try:
            detail = resp.json().get("detail", resp.text)
        except ValueError:
            detail = resp.text
        message = f"{method} {path}: HTTP {resp.status_code}: {detail}"
        if resp.status_code == 404:
            raise EpisodeNotFound(message)
        if resp.status_code == 409:
            raise EpisodeConflict(message)
        if resp.status_code == 422:
            raise InvalidRequest(message)
        if resp.status_code >= 500:
            raise ServiceUnavailable("orchestrator", message)
        raise CompoWorldError(message)

    async def open(self, req: OpenRequest) -> OpenResponse:
        body = req.model_dump(mode="json", exclude_none=True)
        return OpenResponse.model_validate(await self._send("POST", "/episodes", body))

    async def step(self, episode_id: str, req: StepRequest) -> StepResponse:
        body = req.model_dump(mode="json", exclude_none=True)
        return StepResponse.model_validate(await self._send("POST", f"/episodes/{episode_id}/step", body))

    async def finish(self, episode_id: str, answer: str) -> FinishResponse:
        data = await self._send("POST", f"/episodes/{episode_id}/finish", {"answer": answer})
        return FinishResponse.model_validate(data)

    async def abort(self, episode_id: str, reason: str = "aborted") -> FinishResponse:
        body = AbortRequest(reason=reason[:500]).model_dump()
        return FinishResponse.model_validate(await self._send("POST", f"/episodes/{episode_id}/abort", body))

    async def trajectory(self, episode_id: str) -> Trajectory:
        return Trajectory.model_validate(await self._send("GET", f"/episodes/{episode_id}"))

    async def delete(self, episode_id: str) -> dict[str, Any]:
        return dict(await self._send("DELETE", f"/episodes/{episode_id}"))

    async def aclose(self) -> None:
        await self.http.aclose()
