"""Twin calls: every checked call runs twice, over the uniform route and over the spec's REST route.

The two calls run in two episodes forked from the seed (or both on the seed view), so a
deterministic service answers both the same way. A call is held to: the REST route accepts the
request in the spec's own wire format whenever the uniform route accepts the arguments; it
answers the declared status; its body is the uniform route's ``data``; and a success body
conforms strictly to the declared schema (``compoworld.runtime.conform``). Every call leaves a
``CallRecord``, which the conformance report and the fidelity sample count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from compoworld.contracts import ERROR_STATUS, ToolResult
from compoworld.manifest import ToolDef
from compoworld.runtime.conform import StrictChecker
from compoworld.runtime.rest import RESERVED_PREFIX
from compoworld.runtime.service import ServiceRuntime
from compoworld.runtime.wire import encode
from compoworld.synth.asgi_client import AsgiClient
from compoworld.synth.twin_xml import xml_body_problems

__all__ = ["CallRecord", "Twin", "TwinFailure"]


class TwinFailure(Exception):
    """A call whose two routes disagree, or whose body is not what the spec declares."""


@dataclass
class CallRecord:
    """What one twin call showed."""

    tool: str
    backend: str
    success: bool
    declared: bool
    rest: bool = False
    status_ok: bool = True
    conforms: bool = True
    same_body: bool = True
    wire_rejected: bool = False
    problems: list[str] = field(default_factory=list)


class Twin:
    """Makes twin calls against one service app.

    Episodes are forked from the seed the first time a call runs in them, the REST twin only
    when a REST call does. With the app's ``runtime`` at hand, the first fork goes over the admin
    route (which must answer 201) and the rest call the runtime's own fork, which that route calls:
    a fork is the same for every service, and thousands of them over HTTP were a twentieth of a
    build; ``release`` deletes the episodes forked so far.
    """

    def __init__(
        self,
        client: AsgiClient | httpx.AsyncClient,
        token: str,
        rest_tools: set[str],
        runtime: ServiceRuntime | None = None,
    ) -> None:
        self.client = client
        self.admin = {"Authorization": f"Bearer {token}"}
        self.rest_tools = rest_tools
        self.records: list[CallRecord] = []
        self._checkers: dict[str, StrictChecker] = {}
        self._forked: set[str] = set()
        self.runtime = runtime
        self._admin_answered = False
        self._held: list[str] = []

    @staticmethod
    def rest_twin(episode: str) -> str:
        """The id of the episode the REST half of a twin call runs in."""
        return f"{episode}-rest"

    async def ensure(self, episode: str | None) -> None:
        """Fork ``episode`` from the seed, the first time a call names it."""
        if episode is None or episode in self._forked:
            return
        self._forked.add(episode)
        self._held.append(episode)
        if self.runtime is not None and self._admin_answered:
            self.runtime.fork(episode)
            return
        resp = await self.client.post(
            f"{RESERVED_PREFIX}/admin/episodes", json={"episode_id": episode}, headers=self.admin
        )
        if resp.status_code != 201:
            raise TwinFailure(f"fork answered HTTP {resp.status_code}: {resp.text[:200]}")
        self._admin_answered = True

    def release(self) -> None:
        """Delete the episodes forked since the last release (a copy of the seed each): no later call
        may name them. A verification kept hundreds of copies of the seed alive until its end."""
        if self.runtime is not None:
            for episode in self._held:
                self.runtime.delete(episode)
        self._held.clear()

    async def uniform(self, episode: str | None, tool: str, args: Any) -> ToolResult:
        """One call over the uniform route only."""
        await self.ensure(episode)
        return await self._uniform(episode, tool, args)

    async def refused(self, episode: str, tool: str, args: Any) -> ToolResult:
        """``uniform(episode, tool, args)`` for arguments the service should refuse, forking
        ``episode`` only once a call needs it.

        A service refuses bad arguments before it looks for the episode, and a call that finds no
        episode changes nothing, so it is tried unforked first; only one that got as far as the
        episode (``episode_gone``) is run again on a fresh fork, as ``uniform`` runs it. Every
        tool's check begins with such a call: a fork each was two fifths of a build's forks.
        """
        if episode not in self._forked:
            first = await self._uniform(episode, tool, args)
            if first.success or first.code != "episode_gone":
                return first
        return await self.uniform(episode, tool, args)

    async def _uniform(self, episode: str | None, tool: str, args: Any) -> ToolResult:
        headers = {"X-Episode-Id": episode} if episode else {}
        resp = await self.client.post(f"{RESERVED_PREFIX}/tools/{tool}", json=args, headers=headers)
        if resp.status_code >= 500:
            raise TwinFailure(f"HTTP {resp.status_code} from /tools/{tool}")
        try:
            return ToolResult.from_envelope(resp.json())
        except ValueError as exc:
            raise TwinFailure(f"/tools/{tool} did not answer a tool-result envelope: {exc}") from exc

    def checker(self, tool: ToolDef, backend: str) -> StrictChecker:
        """Strict for typed state; the world model's answers (simulated) are held to the plain schema."""
        if tool.name not in self._checkers:
            self._checkers[tool.name] = StrictChecker(tool.output_schema or {}, strict=backend != "simulated")
        return self._checkers[tool.name]

    async def call(
        self, episode: str | None, tool: ToolDef, args: dict[str, Any], backend: str
    ) -> ToolResult:
        """The call over both routes (the REST half in ``episode``'s twin); the uniform result.

        Raises TwinFailure where the two part ways or the body is not what the spec declares.
        """
        result = await self.uniform(episode, tool.name, args)
        record = CallRecord(tool.name, backend, result.success, tool.shape.declared)
        self.records.append(record)
        if result.success and (tool.shape.declared or tool.output_schema):
            problems = self.checker(tool, backend).errors(result.data) if tool.shape.body else []
            if result.data is not None and not tool.shape.body:
                problems = ["a body where the spec declares none"]
            if problems:
                record.conforms = False
                record.problems += [
                    f"the body does not conform to the output schema at {p}" for p in problems
                ]
        if tool.name in self.rest_tools and _rest_safe(tool, args):
            await self._rest(episode, tool, args, result, record)
        if record.problems:
            raise TwinFailure(f"{tool.name}: " + "; ".join(record.problems[:3]))
        return result

    async def _rest(
        self, episode: str | None, tool: ToolDef, args: dict[str, Any], result: ToolResult, record: CallRecord
    ) -> None:
        record.rest = True
        request = encode(tool, args)
        headers = dict(request.headers)
        if episode is not None:
            headers["X-Episode-Id"] = self.rest_twin(episode)
            await self.ensure(headers["X-Episode-Id"])
        resp = await self.client.request(
            request.method, request.url, headers=headers, content=request.content
        )
        if resp.status_code >= 500:
            raise TwinFailure(f"{tool.method} {request.path} answered HTTP {resp.status_code}")
        if result.success and resp.status_code >= 400:
            record.wire_rejected = True
            record.problems.append(
                f"REST refused what the uniform route accepted: HTTP {resp.status_code} {resp.text[:160]}"
            )
            return
        wanted = tool.shape.status if result.success else _error_status(tool, result)
        if resp.status_code != wanted:
            record.status_ok = False
            record.problems.append(f"REST answered HTTP {resp.status_code}, the spec declares {wanted}")
        if tool.shape.xml is not None and tool.method != "HEAD":
            self._xml(tool, resp, result, record, backend=record.backend)
            return
        if not result.success or tool.method == "HEAD":  # a HEAD answer has no body to compare
            return
        body = resp.json() if resp.content else None
        if _canonical(body) != _canonical(result.data):
            record.same_body = False
            record.problems.append("the REST body differs from the uniform route's data")

    def _xml(self, tool: ToolDef, resp: Any, result: ToolResult, record: CallRecord, backend: str) -> None:
        """An XML body: its layout and content (``twin_xml``), then the strict check of what it carries."""
        problems, parsed = xml_body_problems(tool, resp.content, _content_type(resp.headers), result)
        if problems:
            record.same_body = False
            record.problems += problems
        if result.success and parsed is not None and tool.shape.declared and tool.shape.body:
            strict = self.checker(tool, backend).errors(parsed)
            if strict:
                record.conforms = False
                record.problems += [
                    f"the XML body does not conform to the output schema at {p}" for p in strict
                ]


def _content_type(headers: Any) -> str | None:
    """The Content-Type of an answer (an httpx header mapping, or the in-process client's pairs)."""
    if isinstance(headers, list):
        return next((v.decode("latin-1") for k, v in headers if k.lower() == b"content-type"), None)
    found = headers.get("content-type")
    return str(found) if found is not None else None


def _error_status(tool: ToolDef, result: ToolResult) -> int:
    return tool.shape.errors.get(result.code, ERROR_STATUS.get(result.code, 400))


def _rest_safe(tool: ToolDef, args: dict[str, Any]) -> bool:
    """Whether ``args`` can travel over the REST route as they are (no slash in a path value)."""
    for arg, value in args.items():
        if tool.arg_locations.get(arg) == "path" and ("/" in str(value) or str(value) in ("", ".", "..")):
            return False
    return True


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
