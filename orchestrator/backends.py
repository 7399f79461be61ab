"""Where the runner's episodes live: in-process (the ``Orchestrator`` itself) or a remote orchestrator.

Both expose the same coroutine methods (open, step, finish, abort, trajectory, delete), so
the runner never knows which it drives. The remote one is the shared ``OrchestratorClient``
(the trainer's too) with HTTP statuses mapped back to the orchestrator's exception tree.
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from compoworld.errors import CompoWorldError, ServiceUnavailable
from compoworld.runtime.pool import ServicePool
from compoworld.sanitize import Limits
from compoworld.settings import Settings
from orchestrator.api import (
    FinishResponse,
    OpenRequest,
    OpenResponse,
    StepRequest,
    StepResponse,
)
from orchestrator.budget import TrajectoryBudget
from orchestrator.client import OrchestratorClient, OrchestratorError
from orchestrator.discovery import ServiceDirectory
from orchestrator.episodes import Orchestrator
from orchestrator.errors import EpisodeConflict, EpisodeNotFound, InvalidRequest
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.models import Trajectory

__all__ = ["EpisodeBackend", "RemoteBackend", "embedded_backend", "remote_services_backend"]

T = TypeVar("T")


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
    """The services of ``library`` in this process, each loaded when an episode first needs it (a folder
    that does not load fails only the episodes that use it), driven without HTTP (the default, and the fastest)."""
    pool = ServicePool(library, settings)
    return Orchestrator.embedded(pool, settings, None, **({"config": config} if config else {}))


def remote_services_backend(
    settings: Settings, urls: dict[str, list[str]] | None = None, config: OrchestratorConfig | None = None
) -> Orchestrator:
    """An in-process orchestrator over services reached by URL (a map file or the URL template)."""
    return Orchestrator(
        ServiceDirectory.remote(settings, urls),
        config=config,
        limits=Limits.from_settings(settings),
        budget=TrajectoryBudget.from_settings(settings),
    )


class RemoteBackend:
    """An orchestrator at ``base_url`` (``compoworld up`` or ``compoworld orchestrator``), over the shared client."""

    def __init__(self, base_url: str, timeout_s: float = 120.0, max_connections: int = 256) -> None:
        self.base_url = base_url.rstrip("/")
        self.client = OrchestratorClient(
            self.base_url, timeout_s=timeout_s, connect_timeout_s=10.0, max_connections=max_connections
        )

    async def _mapped(self, call: Awaitable[T]) -> T:
        """The client's answer; its failures as the orchestrator's own exceptions (what the runner catches)."""
        try:
            return await call
        except OrchestratorError as exc:
            raise _as_orchestrator_error(exc) from exc

    async def open(self, req: OpenRequest) -> OpenResponse:
        return await self._mapped(self.client.open(req))

    async def step(self, episode_id: str, req: StepRequest) -> StepResponse:
        return await self._mapped(self.client.step_request(episode_id, req))

    async def finish(self, episode_id: str, answer: str) -> FinishResponse:
        return await self._mapped(self.client.finish(episode_id, answer))

    async def abort(self, episode_id: str, reason: str = "aborted") -> FinishResponse:
        return await self._mapped(self.client.abort(episode_id, reason))

    async def trajectory(self, episode_id: str) -> Trajectory:
        return await self._mapped(self.client.trajectory(episode_id))

    async def delete(self, episode_id: str) -> dict[str, Any]:
        return await self._mapped(self.client.release(episode_id))

    async def aclose(self) -> None:
        await self.client.aclose()


def _as_orchestrator_error(exc: OrchestratorError) -> CompoWorldError:
    """404 unknown episode, 409 its state forbids the request, 422 invalid, none or 5xx unavailable."""
    message = str(exc)
    if exc.status == 404:
        return EpisodeNotFound(message)
    if exc.status == 409:
        return EpisodeConflict(message)
    if exc.status == 422:
        return InvalidRequest(message)
    if exc.status is None or exc.status >= 500:
        return ServiceUnavailable("orchestrator", message)
    return exc
