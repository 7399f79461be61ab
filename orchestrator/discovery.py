"""Service discovery: one place that maps a service name to a client.

Two kinds of client, one interface (``orchestrator.service_client.ServiceClient``).
``LocalService`` wraps an in-process ``ServiceRuntime`` (the embedded deployment: plain Python
calls, no HTTP). ``HttpService`` (``orchestrator.remote``) talks to a service's base URL(s)
through one pooled client with timeouts. ``ServiceDirectory`` maps names to clients;
``EpisodeReader`` is what the grader reads an episode's state through.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from compoworld.contracts import ToolResult
from compoworld.errors import CompoWorldError, EpisodeError, EpisodeStateLost
from compoworld.runtime.pool import ServicePool
from compoworld.runtime.service import ServiceRuntime
from compoworld.sanitize import Limits
from compoworld.settings import Settings
from orchestrator.errors import InvalidRequest
from orchestrator.hop import Hop
from orchestrator.remote import HttpService, load_url_map, resolve_host
from orchestrator.rubric.readers import RuntimeStateReader, SeedCache
from orchestrator.service_client import SEED_VIEW, ServiceClient, unavailable

__all__ = ["EpisodeReader", "LocalService", "ServiceDirectory", "StateLookupError"]

log = logging.getLogger(__name__)


class LocalService:
    """An in-process runtime: direct calls, the fastest path."""

    local = True

    def __init__(self, runtime: ServiceRuntime, timeout_s: float) -> None:
        self.runtime = runtime
        self.name = runtime.name
        self.timeout_s = timeout_s
        self._schemas = runtime.tool_schemas()
        self.seed_cache = SeedCache()

    async def tool_schemas(self) -> list[dict[str, Any]]:
        return self._schemas

    async def fork(self, episode_id: str, today: str | None) -> str:
        self.runtime.fork(episode_id, None, today)
        return ""

    def adopt(self, episode_id: str, base: str) -> None:
        return None

    async def delete(self, episode_id: str) -> None:
        self.runtime.delete(episode_id)

    async def freeze(self, episode_id: str) -> None:
        self.runtime.freeze(episode_id)

    async def touch(self, episode_ids: list[str]) -> list[str]:
        return self.runtime.touch(episode_ids)

    def _held(self, episode_id: str) -> str | None:
        """The runtime's id for a read (None: the seed view); ``EpisodeStateLost`` if it holds none."""
        if episode_id == SEED_VIEW:
            return None
        if not self.runtime.has_episode(episode_id):
            raise EpisodeStateLost(f"episode state lost: '{self.name}' holds no state for this episode")
        return episode_id

    async def call(
        self, episode_id: str, tool: str, args: dict[str, Any], call_id: str | None = None
    ) -> ToolResult:
        result = self.runtime.dispatch(episode_id, tool, args, call_id)
        if isinstance(result, ToolResult):
            return result
        try:  # simulated tools may wait on a model endpoint: bound them
            return await asyncio.wait_for(result.run(), self.timeout_s)
        except TimeoutError:
            return unavailable(self.name, f"no answer within {self.timeout_s:g} s")

    def _reader(self, episode_id: str) -> RuntimeStateReader:
        return RuntimeStateReader({self.name: self.runtime}, self._held(episode_id), self.seed_cache)

    async def select(self, episode_id: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        return self.runtime.select(self._held(episode_id), table, where)

    async def dump(self, episode_id: str) -> dict[str, Any]:
        return self.runtime.dump(self._held(episode_id))

    async def state_hash(self, episode_id: str) -> str:
        """Re-reads only the tables the episode's writes touched (the rest is the cached seed)."""
        return await self._reader(episode_id).state_hash(self.name)

    async def tables(self, episode_id: str) -> dict[str, list[dict[str, Any]]]:
        return await self._reader(episode_id).tables(self.name)

    def summary(self) -> dict[str, Any]:
        m = self.runtime.manifest
        tools = self.runtime.tools.values()
        return {
            "name": self.name,
            "title": m.title,
            "description": m.description[:300],
            "domain": m.domain,
            "tools": len(self.runtime.tools),
            "implemented": sum(1 for b in tools if b.backend == "implemented"),
            "location": "embedded",
        }


class ServiceDirectory:
    """Service name -> client; owns the pooled HTTP client when any service is remote."""

    def __init__(
        self,
        clients: dict[str, ServiceClient],
        *,
        factory: Callable[[str], ServiceClient] | None = None,
        http: Hop | None = None,
        version: str = "",
    ) -> None:
        self._clients = dict(sorted(clients.items()))
        self._factory = factory
        self._http = http
        self.version = version

    @classmethod
    def embedded(cls, runtimes: Mapping[str, ServiceRuntime], settings: Settings) -> ServiceDirectory:
        if isinstance(runtimes, ServicePool):  # loaded on first use: nothing is loaded to list them
            from orchestrator.pooled import pooled_clients

            return cls(
                pooled_clients(runtimes, settings.service_timeout_s), version=runtimes.catalog.fingerprint()
            )
        clients: dict[str, ServiceClient] = {
            n: LocalService(r, settings.service_timeout_s) for n, r in runtimes.items()
        }
        digest = hashlib.sha256()
        for name in sorted(runtimes):
            digest.update(runtimes[name].manifest.model_dump_json().encode())
        return cls(clients, version=digest.hexdigest()[:16] if runtimes else "")

    @classmethod
    def remote(
        cls,
        settings: Settings,
        urls: dict[str, list[str]] | None = None,
    ) -> ServiceDirectory:
        """Services behind URLs: an explicit map, else ``settings.service_urls_file``, plus the template."""
        client = Hop(settings.service_timeout_s, connect_s=min(5.0, settings.service_timeout_s))
        if urls is None and settings.service_urls_file is not None:
            urls = load_url_map(settings.service_urls_file)
        token = settings.admin_token
        resolver = resolve_host if settings.resolve_replicas else None
        results = Limits(settings.max_result_bytes, settings.max_json_depth)
        clients: dict[str, ServiceClient] = {
            n: HttpService(n, u, client, token, resolver, results) for n, u in (urls or {}).items()
        }
        factory: Callable[[str], ServiceClient] | None = None
        template = settings.service_url_template
        if template:
            namespace = settings.namespace

            def factory(name: str) -> ServiceClient:
                url = template.format(service=name, namespace=namespace)
                return HttpService(name, [url], client, token, resolver, results)

        return cls(clients, factory=factory, http=client)

    def names(self) -> list[str]:
        return list(self._clients)

    def closed(self) -> bool:
        """Whether ``names()`` is every service that can be named (no URL template beyond them)."""
        return self._factory is None

    def has(self, name: str) -> bool:
        return name in self._clients or self._factory is not None

    def get(self, name: str) -> ServiceClient:
        client = self._clients.get(name)
        if client is None:
            if self._factory is None:
                raise InvalidRequest(
                    f"unknown service '{name}' (known: {', '.join(self._clients) or 'none'})"
                )
            client = self._clients[name] = self._factory(name)
        return client

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()


class StateLookupError(CompoWorldError, LookupError):
    """A read the grader cannot make as written (unknown service, table or column, or a released fork).

    A ``LookupError``, so the rubric turns it into a failed verdict with the reason; an
    unreachable service stays ``ServiceUnavailable`` (an infrastructure failure).
    """


class EpisodeReader:
    """The grader's view of one episode: targeted reads over the admin routes (or in-process)."""

    #: The whole-state guard compares hashes before it asks for tables.
    remote = True

    def __init__(self, directory: ServiceDirectory, episode_id: str) -> None:
        self.directory = directory
        self.episode_id = episode_id

    async def select(
        self, service: str, table: str, where: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        return await self._read(service, "select", self.episode_id, table, dict(where or {}))

    async def _read(self, service: str, method: str, *args: Any) -> Any:
        try:
            return await getattr(self.directory.get(service), method)(*args)
        except EpisodeStateLost:  # not a failed verdict: the episode cannot be graded at all
            raise
        except (EpisodeError, InvalidRequest) as exc:
            raise StateLookupError(str(exc)) from exc

    async def seed_select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of the seed view: what "a new row" and "unchanged" are relative to."""
        return list(await self._read(service, "select", SEED_VIEW, table, dict(where)))

    async def state_hash(self, service: str) -> str:
        return str(await self._read(service, "state_hash", self.episode_id))

    async def tables(self, service: str) -> dict[str, list[dict[str, Any]]]:
        return dict(await self._read(service, "tables", self.episode_id))

    async def seed_tables(self, service: str) -> dict[str, list[dict[str, Any]]]:
        return dict(await self._read(service, "tables", SEED_VIEW))
