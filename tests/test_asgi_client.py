"""The verifier's in-process ASGI client hands an app exactly what ``httpx.ASGITransport`` would.

The whole verification of a service is run twice, once through the in-process client and once
through ``httpx.AsyncClient(transport=ASGITransport(app))``, recording every ASGI scope and body
the app receives: both runs must send the same requests, byte for byte, and give the same report.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings, bundled_library
from compoworld.synth import verify
from compoworld.synth.asgi_client import AsgiClient

LIBRARY = bundled_library()


def _recording(app: Any, log: list[Any]) -> Any:
    async def recorder(scope: dict[str, Any], receive: Any, send: Any) -> None:
        messages: list[Any] = []

        async def spy() -> Any:
            message = await receive()
            messages.append(dict(message))
            return message

        log.append(({k: list(v) if k == "headers" else v for k, v in scope.items()}, messages))
        await app(scope, spy, send)

    return recorder


def _verify(
    folder: Path, use_httpx: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], list[Any]]:
    log: list[Any] = []
    create = verify.create_service_app
    monkeypatch.setattr(verify, "create_service_app", lambda rt, s: _recording(create(rt, s), log))
    if use_httpx:
        monkeypatch.setattr(
            verify,
            "AsgiClient",
            lambda app, base_url: httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url=base_url
            ),
        )
    runtime = ServiceRuntime.from_folder(folder, Settings.defaults())
    report = asyncio.run(
        verify.verify_runtime(runtime, ServiceRuntime.from_folder(folder, Settings.defaults()))
    )
    monkeypatch.undo()
    return report.model_dump(mode="json"), log


@pytest.mark.parametrize("service", ["crm", "google_calendar", "govuk_pay"])
def test_a_verification_sends_what_httpx_sends(service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ours, ours_log = _verify(LIBRARY / service, False, monkeypatch)
    theirs, theirs_log = _verify(LIBRARY / service, True, monkeypatch)
    assert len(ours_log) == len(theirs_log) > 20
    for (scope, body), (want_scope, want_body) in zip(ours_log, theirs_log, strict=True):
        assert scope == want_scope
        assert body == want_body
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    payload = json.dumps({"scope": {k: repr(v) for k, v in scope.items()}, "body": body.decode("latin-1")})
    headers = [(b"content-type", b"text/plain; charset=latin-1")]
    await send({"type": "http.response.start", "status": 207, "headers": headers})
    await send({"type": "http.response.body", "body": payload.encode("latin-1")})


@pytest.mark.parametrize(
    ("method", "url", "kwargs"),
    [
        ("GET", "/health", {}),
        ("POST", "/tools/x", {"json": {"a": "é", "b": [1, None]}}),
        ("POST", "/tools/x", {"json": {}, "headers": {"X-Episode-Id": "e-1"}}),
        ("POST", "/empty", {"content": b""}),
        ("PUT", "/items/a%20b/c?x=1&y=%C3%A9&z", {"content": "ü", "headers": {"Content-Type": "text/plain"}}),
        ("DELETE", "/items/1?q=a b", {"headers": {"Authorization": "Bearer t", "Host": "other"}}),
        ("patch", "//double/slash", {}),
    ],
)
def test_a_request_reaches_the_app_as_over_httpx(method: str, url: str, kwargs: dict[str, Any]) -> None:
    async def both() -> tuple[Any, Any]:
        ours = await AsgiClient(_echo, "http://verify").request(method, url, **kwargs)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=_echo), base_url="http://verify"
        ) as client:
            theirs = await client.request(method, url, **kwargs)
        return ours, theirs

    ours, theirs = asyncio.run(both())
    assert (ours.status_code, ours.content, ours.text) == (theirs.status_code, theirs.content, theirs.text)
    assert ours.json() == theirs.json()


def test_an_app_exception_propagates() -> None:
    async def broken(scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(AsgiClient(broken, "http://verify").get("/"))


def test_json_that_httpx_refuses_is_refused_the_same_way() -> None:
    with pytest.raises(ValueError) as ours:
        asyncio.run(AsgiClient(_echo, "http://verify").post("/", json={"x": float("nan")}))
    with pytest.raises(ValueError) as theirs:
        httpx.Request("POST", "http://verify/", json={"x": float("nan")})
    assert str(ours.value) == str(theirs.value)
