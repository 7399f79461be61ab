"""Requests in the spec's own wire format, over real HTTP (ASGI): raw bytes, text, a file part, a form.

A whole body declared ``application/octet-stream`` (or ``image/png``, ``text/plain``) is sent as
those bytes with that ``Content-Type``, never as JSON, and the REST route binds it to the body
argument; Swagger 2's ``type: file`` as a converted document spells it (``{type: object, format:
file}``) is a binary string, so a file part or a raw body passes the argument check; a converter's
file schema under ``multipart/form-data`` beside ``application/octet-stream`` is the raw body.
A path numeral is the integer where the parameter may be a string or an integer and the string
form breaks its length or pattern (lgtm's 40-character analysis id or a numeric one).
The conformance checker's client (``compoworld.runtime.wire.encode``) sends every one of them the
way a client of the real API does, and the REST route accepts what the uniform route accepts.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from compoworld.contracts import ToolResult
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.app import create_service_app
from compoworld.runtime.wire import encode
from compoworld.settings import Settings
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline

_OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
_FILE = {"type": "object", "format": "file"}  # Swagger 2's ``type: file``, as converters write it


def _op(op_id: str, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = {"required": True, "content": content}
    return {"post": {"operationId": op_id, "requestBody": body, "responses": _OK, **extra}}


def _doc() -> dict[str, Any]:
    width = {"name": "width", "in": "query", "required": True, "schema": {"type": "integer"}}
    upload = {
        "type": "object",
        "required": ["file"],
        "properties": {"file": _FILE, "title": {"type": "string"}},
    }
    sha_or_id = {"type": ["string", "integer"], "minLength": 40, "maxLength": 40}  # lgtm's analysis id
    line = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}
    batch = {"type": "object", "properties": {"lines": {"type": "array", "items": line}}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Media", "version": "1"},
        "paths": {
            "/thumbnails": _op(
                "MakeThumbnail",
                {
                    "application/json": {
                        "schema": {"type": "object", "properties": {"url": {"type": "string"}}}
                    }
                },
                parameters=[width],
            ),
            "/thumbnails#overload=stream": _op(  # Azure's spelling of a second operation on a path
                "MakeThumbnailInStream",
                {"application/octet-stream": {"schema": _FILE}, "multipart/form-data": {"schema": _FILE}},
                parameters=[width],
            ),
            "/logos": _op("PutLogo", {"image/png": {"schema": {"type": "string", "format": "binary"}}}),
            "/notes": _op("PostNote", {"text/plain": {"schema": {"type": "string"}}}),
            "/counts": _op("PostCount", {"text/plain": {"schema": {"type": "integer"}}}),
            "/uploads": _op("UploadFile", {"multipart/form-data": {"schema": upload}}),
            "/analyses/{analysis_id}": {
                "get": {
                    "operationId": "GetAnalysis",
                    "parameters": [
                        {"name": "analysis_id", "in": "path", "required": True, "schema": sha_or_id}
                    ],
                    "responses": _OK,
                }
            },
            "/batches": _op("PostBatch", {"application/x-www-form-urlencoded": {"schema": batch}}),
            "/labels": _op(
                "SetLabels",
                {
                    "application/x-www-form-urlencoded": {
                        "schema": {"type": "object", "additionalProperties": {"type": "string"}}
                    }
                },
            ),
        },
    }


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("media"), "media", _doc(), verify=False)
    return ServiceRuntime.from_folder(folder, Settings())


def _send(runtime: ServiceRuntime, method: str, url: str, **kwargs: Any) -> tuple[httpx.Response, list[Any]]:
    """One REST request; the response and the arguments each tool call received."""
    if not runtime.has_episode("ep-1"):
        runtime.fork("ep-1")
    seen: list[Any] = []
    real = runtime.call_tool

    async def spy(episode: str | None, name: str, args: Any, call_id: str | None = None) -> ToolResult:
        seen.append(args)
        return await real(episode, name, args, call_id)

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_service_app(runtime, Settings()))
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            headers = {"X-Episode-Id": "ep-1", **kwargs.pop("headers", {})}
            return await client.request(method, url, headers=headers, **kwargs)

    runtime.call_tool = spy  # type: ignore[method-assign]
    try:
        return asyncio.run(send()), seen
    finally:
        del runtime.call_tool


def test_a_converted_file_schema_is_a_binary_string(runtime: ServiceRuntime) -> None:
    thumb = runtime.manifest.tool("MakeThumbnailInStream")
    upload = runtime.manifest.tool("UploadFile")
    assert thumb is not None and upload is not None
    assert thumb.input_schema["properties"][thumb.body_whole or ""]["type"] == "string"
    assert thumb.body_media == "application/octet-stream"  # not the file schema under multipart
    assert upload.input_schema["properties"]["file"] == {"type": "string", "format": "binary"}


def test_raw_bytes_reach_the_octet_stream_body(runtime: ServiceRuntime) -> None:
    resp, seen = _send(
        runtime,
        "POST",
        "/thumbnails?width=64",
        content=b"\x89PNG image bytes",
        headers={"content-type": "application/octet-stream"},
    )
    assert resp.status_code == 200, resp.text
    assert seen == [{"width": 64, "body": "\ufffdPNG image bytes"}]  # bytes as text; undecodable replaced


def test_a_text_body_is_its_text_and_a_typed_text_body_its_value(runtime: ServiceRuntime) -> None:
    resp, seen = _send(runtime, "POST", "/notes", content="buy milk", headers={"content-type": "text/plain"})
    assert resp.status_code == 200, resp.text
    assert seen == [{"body": "buy milk"}]
    resp, seen = _send(runtime, "POST", "/counts", content="42", headers={"content-type": "text/plain"})
    assert resp.status_code == 200, resp.text
    assert seen == [{"body": 42}]


def test_a_file_part_passes_the_argument_check(runtime: ServiceRuntime) -> None:
    resp, seen = _send(
        runtime, "POST", "/uploads", files={"file": ("a.txt", b"hello", "text/plain")}, data={"title": "A"}
    )
    assert resp.status_code == 200, resp.text
    assert seen == [{"file": "hello", "title": "A"}]


def test_a_form_whole_body_is_the_object_of_its_fields(runtime: ServiceRuntime) -> None:
    resp, seen = _send(runtime, "POST", "/labels", data={"colour": "red", "size": "L"})
    assert resp.status_code == 200, resp.text
    assert seen == [{"body": {"colour": "red", "size": "L"}}]


def test_a_form_array_of_objects_is_read_from_json_fields_and_from_indexed_brackets(
    runtime: ServiceRuntime,
) -> None:
    lines = [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}]
    as_json = [("lines", '{"sku":"A-1","qty":2}'), ("lines", '{"sku":"B-2","qty":1}')]
    resp, seen = _send(runtime, "POST", "/batches", data=dict(as_json[:1]))
    assert resp.status_code == 200, resp.text
    assert seen == [{"lines": lines[:1]}]
    form = "&".join(f"{k}={v}" for k, v in as_json).encode()
    resp, seen = _send(
        runtime,
        "POST",
        "/batches",
        content=form,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert seen == [{"lines": lines}], resp.text
    brackets = b"lines[0][sku]=A-1&lines[0][qty]=2&lines[1][sku]=B-2&lines[1][qty]=1"  # Stripe's style
    resp, seen = _send(
        runtime,
        "POST",
        "/batches",
        content=brackets,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert resp.status_code == 200, resp.text
    assert seen == [{"lines": lines}]


def test_a_numeral_in_the_path_is_the_integer_where_the_string_form_cannot_be(
    runtime: ServiceRuntime,
) -> None:
    resp, seen = _send(runtime, "GET", "/analyses/744756001")
    assert seen == [{"analysis_id": 744756001}], resp.text
    sha = "a" * 40
    resp, seen = _send(runtime, "GET", f"/analyses/{sha}")
    assert seen == [{"analysis_id": sha}], resp.text


def test_the_client_encoder_sends_each_body_in_its_declared_media(runtime: ServiceRuntime) -> None:
    def sent(name: str, args: dict[str, Any]) -> tuple[str, bytes]:
        tool = runtime.manifest.tool(name)
        assert tool is not None
        request = encode(tool, args)
        return request.headers["content-type"], request.content or b""

    assert sent("MakeThumbnailInStream", {"width": 8, "body": "raw"}) == ("application/octet-stream", b"raw")
    tool = runtime.manifest.tool("MakeThumbnailInStream")
    assert tool is not None and encode(tool, {"width": 8, "body": "raw"}).url == "/thumbnails?width=8"
    assert sent("PutLogo", {"body": "png"}) == ("image/png", b"png")
    assert sent("PostCount", {"body": 7}) == ("text/plain", b"7")
    assert sent("SetLabels", {"body": {"a": "1"}}) == ("application/x-www-form-urlencoded", b"a=1")
    media, content = sent("UploadFile", {"file": "hi", "title": "T"})
    assert media.startswith("multipart/form-data; boundary=")
    assert b'name="file"; filename="file"' in content and b'name="title"\r\n' in content


def test_the_checker_finds_no_wire_format_refusal(runtime: ServiceRuntime) -> None:
    """Every operation called over both routes, the REST one as a client of the real API calls it
    (the stream overload's raw bytes reach it, not the JSON operation on the same path)."""
    report = asyncio.run(verify_runtime(runtime))
    refused = [t.failure for t in report.tools if "REST refused" in (t.failure or "")]
    assert refused == []
    checked = {
        "MakeThumbnail",
        "MakeThumbnailInStream",
        "UploadFile",
        "PostNote",
        "PostCount",
        "SetLabels",
        "PostBatch",
        "GetAnalysis",
    }
    assert {t.tool for t in report.tools} >= checked
