"""An in-process ASGI client for the verifier: the requests ``httpx.ASGITransport`` would send, without httpx.

The verifier makes thousands of calls per service through the service's own app; through
``httpx.AsyncClient`` a fifth of that time went to the client (request building, URL parsing,
header objects, cookies, redirects, auth hooks) rather than to the app under test. This client
hands the app the same ASGI scope and body messages httpx's transport does, byte for byte
(the same default headers in the same order, the same URL merging and encoding, the same JSON
body), so the app answers exactly as before; ``tests/test_asgi_client.py`` compares both.
App exceptions propagate, as they do with ``ASGITransport`` (``raise_app_exceptions``).
"""

from __future__ import annotations

import asyncio
import functools
import json as jsonlib
from collections.abc import Mapping
from typing import Any

import httpx

__all__ = ["AsgiClient", "AsgiResponse"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class AsgiResponse:
    """What the app answered: the status, the headers and the body (the parts the verifier reads)."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: list[tuple[bytes, bytes]], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        """The body decoded as ``httpx.Response.text`` decodes it (the declared charset, else UTF-8)."""
        return httpx.Response(self.status_code, headers=self.headers, content=self.content).text

    def json(self) -> Any:
        return jsonlib.loads(self.content)


class AsgiClient:
    """Calls one ASGI app in-process, as ``httpx.AsyncClient(transport=ASGITransport(app), base_url=...)``."""

    def __init__(self, app: Any, base_url: str) -> None:
        self.app = app
        self.base, self.client_headers = _client_basics(base_url)
        self.server = (self.base.host, self.base.port)
        self._targets: dict[str, tuple[str, str, bytes, bytes, bytes]] = {}

    def _target(self, url: str) -> tuple[str, str, bytes, bytes, bytes]:
        """(scheme, path, raw path, query, netloc) of ``url`` merged onto the base URL as httpx merges it."""
        found = self._targets.get(url)
        if found is None:
            merged = httpx.URL(url)
            if merged.is_relative_url:
                merged = self.base.copy_with(raw_path=self.base.raw_path + merged.raw_path.lstrip(b"/"))
            found = (merged.scheme, merged.path, merged.raw_path.split(b"?")[0], merged.query, merged.netloc)
            if len(self._targets) < 4096:
                self._targets[url] = found
        return found

    async def get(self, url: str, *, headers: Mapping[str, str] | None = None) -> AsgiResponse:
        return await self.request("GET", url, headers=headers)

    async def post(
        self,
        url: str,
        *,
        json: Any = None,
        content: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsgiResponse:
        return await self.request("POST", url, json=json, content=content, headers=headers)

    async def request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        content: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsgiResponse:
        method = method.upper()
        body, body_headers = _encode(json, content)
        scheme, path, raw_path, query, netloc = self._target(url)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "headers": self._headers(method, netloc, headers, body_headers),
            "scheme": scheme,
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "server": self.server,
            "client": ("127.0.0.1", 123),
            "root_path": "",
        }
        return await _call(self.app, scope, method, body)

    def _headers(
        self, method: str, netloc: bytes, given: Mapping[str, str] | None, body: dict[str, str]
    ) -> list[tuple[bytes, bytes]]:
        """The request's headers as ``httpx.Request._prepare`` orders them: Host (and an empty
        body's Content-Length), the client's defaults updated by the caller's, the body's."""
        merged = httpx.Headers(self.client_headers)
        merged.update(given)
        for key, value in body.items():
            if key.lower() == "transfer-encoding" and "Content-Length" in merged:
                continue
            merged.setdefault(key, value)
        auto: list[tuple[bytes, bytes]] = []
        if "Host" not in merged and netloc:
            auto.append((b"Host", netloc))
        if "Content-Length" not in merged and "Transfer-Encoding" not in merged and method in _BODY_METHODS:
            auto.append((b"Content-Length", b"0"))
        return [(k.lower(), v) for k, v in auto + merged.raw]


@functools.lru_cache(maxsize=8)
def _client_basics(base_url: str) -> tuple[httpx.URL, httpx.Headers]:
    """The base URL (with httpx's trailing slash) and default headers of ``httpx.AsyncClient(base_url=...)``."""
    client = httpx.AsyncClient(
        base_url=base_url, transport=httpx.ASGITransport(app=_no_app)
    )  # never sent through
    return client.base_url, httpx.Headers(client.headers)


async def _no_app(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("not an app: only the client's defaults are read")


def _encode(json: Any, content: bytes | str | None) -> tuple[bytes, dict[str, str]]:
    """The body and its headers, as ``httpx``'s ``encode_request`` makes them (content wins over json)."""
    if content is not None:
        raw = content.encode("utf-8") if isinstance(content, str) else content
        return raw, {"Content-Length": str(len(raw))} if raw else {}
    if json is not None:
        raw = jsonlib.dumps(json, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        return raw, {"Content-Length": str(len(raw)), "Content-Type": "application/json"}
    return b"", {}


async def _call(app: Any, scope: dict[str, Any], method: str, body: bytes) -> AsgiResponse:
    """Run the app on one request, as ``httpx.ASGITransport.handle_async_request`` does."""
    chunks = iter((body,))
    request_complete = False
    status: int | None = None
    headers: list[tuple[bytes, bytes]] | None = None
    parts: list[bytes] = []
    started = False
    complete = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal request_complete
        if request_complete:
            await complete.wait()
            return {"type": "http.disconnect"}
        try:
            chunk = next(chunks)
        except StopIteration:
            request_complete = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status, headers, started
        if message["type"] == "http.response.start":
            assert not started
            status = message["status"]
            headers = list(message.get("headers", []))
            started = True
        elif message["type"] == "http.response.body":
            assert not complete.is_set()
            chunk = message.get("body", b"")
            if chunk and method != "HEAD":
                parts.append(chunk)
            if not message.get("more_body", False):
                complete.set()

    await app(scope, receive, send)
    assert complete.is_set() and status is not None and headers is not None
    return AsgiResponse(status, headers, b"".join(parts))
