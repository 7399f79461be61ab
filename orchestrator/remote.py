"""Services behind URLs: ``HttpService`` and how it picks a replica.

``HttpService`` talks to a service's base URL(s) through one pooled client with timeouts
(``orchestrator.hop``): a local process, a compose service ``http://<svc>:8000``, or cluster DNS.
With several replicas an episode is pinned at fork time to the replica that wins a rendezvous
hash of its id (``pick_replica``), so adding a replica never moves a live episode; a headless
Service's addresses are found by ``resolve_host`` and kept fresh by ``ReplicaSet``. A dead or slow
service turns a tool call into a ``service_unavailable`` failure result; forks and grader reads
raise ``ServiceUnavailable``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from compoworld.contracts import ToolResult
from compoworld.errors import EpisodeError, EpisodeStateLost, ServiceUnavailable
from compoworld.runtime.rest import RESERVED_PREFIX
from compoworld.sanitize import InputRefused, Limits, load_json
from orchestrator.errors import InvalidRequest
from orchestrator.hop import Hop, HopError, HopResponse, HopTimeout, HopTooLarge
from orchestrator.service_client import SEED_VIEW, unavailable

__all__ = ["HttpService", "ReplicaSet", "load_url_map", "pick_replica", "resolve_host"]

log = logging.getLogger(__name__)
MAX_PINS = 100_000  # per service and process; a record's pins are re-adopted on every turn


def pick_replica(episode_id: str, urls: list[str]) -> str:
    """Rendezvous hashing: the replica with the highest sha256(episode, url) score wins."""
    return max(urls, key=lambda u: hashlib.sha256(f"{episode_id}|{u}".encode()).digest())


Resolver = Callable[[str, int], Awaitable[list[str]]]


async def resolve_host(host: str, port: int) -> list[str]:
    """Every address a host name resolves to (a headless Kubernetes Service: one per ready pod)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


class ReplicaSet:
    """The replicas behind a service's base URLs.

    Without a resolver they are the URLs as given. With one, each URL's host is resolved and
    every address becomes a replica URL (same scheme, port and path), re-resolved after
    ``ttl_s``; a failed lookup keeps the last answer (or the URLs as given), so a DNS hiccup
    never stops new episodes.
    """

    def __init__(self, urls: list[str], resolver: Resolver | None = None, ttl_s: float = 5.0) -> None:
        self.urls = urls
        self.resolver = resolver
        self.ttl_s = ttl_s
        self._cached: list[str] = []
        self._at = -1e9

    async def candidates(self) -> list[str]:
        if self.resolver is None:
            return self.urls
        now = time.monotonic()
        if self._cached and now - self._at < self.ttl_s:
            return self._cached
        found: list[str] = []
        try:
            for url in self.urls:
                parsed = httpx.URL(url)
                port = parsed.port or (443 if parsed.scheme == "https" else 80)
                for address in await self.resolver(parsed.host, port):
                    found.append(str(parsed.copy_with(host=address)).rstrip("/"))
        except OSError as exc:
            log.warning("could not resolve replicas of %s: %s", self.urls, exc)
        if found:
            self._cached, self._at = sorted(set(found)), now
        return self._cached or self.urls


class HttpService:
    """A service behind one or more base URLs (replicas), reached with the shared pooled client.

    ``http`` is the directory's ``Hop`` (aiohttp); an ``httpx.AsyncClient`` works too (tests
    reach an app in-process through ``httpx.ASGITransport``).
    """

    local = False

    def __init__(
        self,
        name: str,
        urls: list[str],
        http: Hop | httpx.AsyncClient,
        admin_token: str,
        resolver: Resolver | None = None,
        result_limits: Limits | None = None,
    ) -> None:
        if not urls:
            raise InvalidRequest(f"service '{name}' has no base URL")
        self.name = name
        self.urls = [u.rstrip("/") for u in urls]
        self.replicas = ReplicaSet(self.urls, resolver)
        self.http = http
        self.result_limits = result_limits or Limits(4 * 1024 * 1024)
        self._admin = {"Authorization": f"Bearer {admin_token}"}
        # episode -> replica base: a cache of the records' pins (re-adopted on every turn), bounded
        self._pins: OrderedDict[str, str] = OrderedDict()
        self._schemas: list[dict[str, Any]] | None = None
        self._seed_tables: dict[str, list[dict[str, Any]]] | None = None

    def base(self, episode_id: str | None) -> str:
        if episode_id is None:
            return self.urls[0]
        pinned = self._pins.get(episode_id)
        return pinned if pinned is not None else pick_replica(episode_id, self.urls)

    async def _request(self, method: str, url: str, **kwargs: Any) -> HopResponse | httpx.Response:
        try:
            resp = await self.http.request(method, url, **kwargs)
        except (HopTimeout, httpx.TimeoutException) as exc:
            raise ServiceUnavailable(self.name, f"timed out ({type(exc).__name__}: {exc})") from exc
        except (HopError, httpx.HTTPError) as exc:
            raise ServiceUnavailable(self.name, f"{type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 500:
            raise ServiceUnavailable(self.name, f"HTTP {resp.status_code} from {url}")
        if resp.status_code == 401:
            raise ServiceUnavailable(self.name, "admin token rejected (COMPOWORLD_ADMIN_TOKEN differs)")
        return resp

    async def _call(self, url: str, args: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        """POST a tool call and read its answer, at most ``result_limits.max_bytes`` of it."""
        limit = self.result_limits.max_bytes
        if isinstance(self.http, Hop):
            try:
                answer = await self.http.request("POST", url, json=args, headers=headers, max_bytes=limit)
            except HopTooLarge as exc:
                raise ServiceUnavailable(self.name, str(exc)) from exc
            except HopTimeout as exc:
                raise ServiceUnavailable(self.name, f"timed out ({exc})") from exc
            except HopError as exc:
                raise ServiceUnavailable(self.name, str(exc)) from exc
            if answer.status_code >= 500:
                raise ServiceUnavailable(self.name, f"HTTP {answer.status_code} from {url}")
            return answer.status_code, answer.content
        try:
            async with self.http.stream("POST", url, json=args, headers=headers) as resp:
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise ServiceUnavailable(
                        self.name, f"a result of {declared} bytes (the limit is {limit})"
                    )
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise ServiceUnavailable(self.name, f"a result over {limit} bytes (the limit)")
                    chunks.append(chunk)
        except httpx.TimeoutException as exc:
            raise ServiceUnavailable(self.name, f"timed out ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise ServiceUnavailable(self.name, f"{type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 500:
            raise ServiceUnavailable(self.name, f"HTTP {resp.status_code} from {url}")
        return resp.status_code, b"".join(chunks)

    def _answer(self, resp: HopResponse | httpx.Response, what: str) -> Any:
        """A JSON answer of an admin or listing route; garbage is the service's failure, never a 500."""
        try:
            return load_json(
                resp.content, Limits(max(len(resp.content), 1), self.result_limits.max_depth), what
            )
        except InputRefused as exc:
            raise ServiceUnavailable(self.name, f"{what} is unusable: {exc}") from exc

    async def tool_schemas(self) -> list[dict[str, Any]]:
        if self._schemas is None:
            resp = await self._request("GET", f"{self.urls[0]}{RESERVED_PREFIX}/tools")
            if resp.status_code != 200:
                raise ServiceUnavailable(self.name, f"GET /tools answered HTTP {resp.status_code}")
            schemas = self._answer(resp, "GET /tools")
            if not isinstance(schemas, list) or not all(_is_tool_schema(t) for t in schemas):
                raise ServiceUnavailable(self.name, "GET /tools did not answer a list of function schemas")
            self._schemas = schemas
        return self._schemas

    async def fork(self, episode_id: str, today: str | None) -> str:
        base = pick_replica(episode_id, await self.replicas.candidates())
        body = {"episode_id": episode_id, "today": today}
        resp = await self._request(
            "POST", f"{base}{RESERVED_PREFIX}/admin/episodes", json=body, headers=self._admin
        )
        if resp.status_code >= 300:
            raise ServiceUnavailable(self.name, f"fork answered HTTP {resp.status_code}: {resp.text[:200]}")
        self.adopt(episode_id, base)
        return base

    def adopt(self, episode_id: str, base: str) -> None:
        """Route this episode to ``base`` (the replica its record says it was forked on)."""
        if base:
            self._pins[episode_id] = base
            self._pins.move_to_end(episode_id)
            while len(self._pins) > MAX_PINS:
                self._pins.popitem(last=False)

    async def delete(self, episode_id: str) -> None:
        base = self._pins.pop(episode_id, None) or pick_replica(episode_id, self.urls)
        await self._request(
            "DELETE", f"{base}{RESERVED_PREFIX}/admin/episodes/{episode_id}", headers=self._admin
        )

    async def freeze(self, episode_id: str) -> None:
        url = f"{self.base(episode_id)}{RESERVED_PREFIX}/admin/episodes/{episode_id}/freeze"
        await self._request("POST", url, headers=self._admin)

    async def touch(self, episode_ids: list[str]) -> list[str]:
        """Keep the states of these episodes alive on their replicas; the ids a replica no longer holds."""
        by_base: dict[str, list[str]] = {}
        for eid in episode_ids:
            by_base.setdefault(self.base(eid), []).append(eid)
        missing: list[str] = []
        for base, ids in by_base.items():
            for start in range(0, len(ids), 5000):
                body = {"episode_ids": ids[start : start + 5000]}
                resp = await self._request(
                    "POST", f"{base}{RESERVED_PREFIX}/admin/touch", json=body, headers=self._admin
                )
                answer = self._answer(resp, "a touch") if resp.status_code == 200 else None
                if isinstance(answer, dict) and isinstance(answer.get("missing"), list):
                    missing += [str(m) for m in answer["missing"]]
        return missing

    def _lost(self, resp: HopResponse | httpx.Response, what: str) -> None:
        """An admin read answered 404: the replica holds no state for the episode."""
        if resp.status_code == 404:
            raise EpisodeStateLost(f"episode state lost: '{self.name}' answered {what} with HTTP 404")

    async def call(
        self, episode_id: str, tool: str, args: dict[str, Any], call_id: str | None = None
    ) -> ToolResult:
        url = f"{self.base(episode_id)}{RESERVED_PREFIX}/tools/{tool}"
        headers = {"X-Episode-Id": episode_id} | ({"X-Call-Id": call_id} if call_id else {})
        try:
            status, body = await self._call(url, args, headers)
        except ServiceUnavailable as exc:
            return unavailable(self.name, exc.reason)
        try:  # a result is sanitised like anything an agent sends (compoworld.sanitize)
            return ToolResult.from_envelope(load_json(body, self.result_limits, "the result"))
        except ValueError as exc:  # not clean JSON, or JSON that is not an envelope
            return unavailable(self.name, f"HTTP {status} without a usable tool-result envelope ({exc})")

    async def select(self, episode_id: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        url = f"{self.base(episode_id)}{RESERVED_PREFIX}/admin/episodes/{episode_id}/select"
        body = {"queries": [{"table": table, "where": where}]}
        resp = await self._request("POST", url, json=body, headers=self._admin)
        self._lost(resp, "a select")
        if resp.status_code != 200:
            detail = resp.text[:300]
            raise EpisodeError(f"{self.name}: select on '{table}' answered HTTP {resp.status_code}: {detail}")
        answer = self._answer(resp, "a select")
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list) or not results or not isinstance(results[0], list):
            raise ServiceUnavailable(self.name, "a select answered no list of results")
        return list(results[0])

    async def dump(self, episode_id: str) -> dict[str, Any]:
        url = f"{self.base(episode_id)}{RESERVED_PREFIX}/admin/episodes/{episode_id}/state"
        resp = await self._request("GET", url, headers=self._admin)
        self._lost(resp, "a state dump")
        if resp.status_code != 200:
            raise EpisodeError(f"{self.name}: state dump answered HTTP {resp.status_code}")
        dump = self._answer(resp, "a state dump")
        if not isinstance(dump, dict) or not isinstance(dump.get("tables"), dict):
            raise ServiceUnavailable(self.name, "a state dump answered no tables")
        return dump

    async def state_hash(self, episode_id: str) -> str:
        url = f"{self.base(episode_id)}{RESERVED_PREFIX}/admin/episodes/{episode_id}/hash"
        resp = await self._request("GET", url, headers=self._admin)
        self._lost(resp, "a state hash")
        if resp.status_code != 200:
            raise EpisodeError(f"{self.name}: state hash answered HTTP {resp.status_code}")
        answer = self._answer(resp, "a state hash")
        if not isinstance(answer, dict) or not isinstance(answer.get("hash"), str):
            raise ServiceUnavailable(self.name, "a state hash answered no hash")
        return str(answer["hash"])

    async def tables(self, episode_id: str) -> dict[str, list[dict[str, Any]]]:
        """Every table of a state; the seed's is fetched once (it never changes while the service runs)."""
        if episode_id == SEED_VIEW and self._seed_tables is not None:
            return self._seed_tables
        tables = dict((await self.dump(episode_id))["tables"])
        if episode_id == SEED_VIEW:
            self._seed_tables = tables
        return tables

    def summary(self) -> dict[str, Any]:
        tools = self._schemas or []
        return {
            "name": self.name,
            "tools": len(tools),
            "implemented": sum(1 for t in tools if t.get("x-backend") == "implemented"),
            "location": self.urls[0] if len(self.urls) == 1 else self.urls,
        }


def _is_tool_schema(value: Any) -> bool:
    fn = value.get("function") if isinstance(value, dict) else None
    return isinstance(fn, dict) and isinstance(fn.get("name"), str)


def load_url_map(path: Path) -> dict[str, list[str]]:
    """Read a JSON map service -> base URL (or list of replica URLs)."""
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InvalidRequest(f"{path}: cannot read the service URL map: {exc}") from exc
    if not isinstance(raw, dict):
        raise InvalidRequest(f"{path}: the service URL map must be a JSON object service -> URL")
    out: dict[str, list[str]] = {}
    for name, value in sorted(raw.items()):
        urls = [value] if isinstance(value, str) else value
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
            raise InvalidRequest(f"{path}: '{name}' must map to a URL or a non-empty list of URLs")
        out[str(name)] = urls
    return out
