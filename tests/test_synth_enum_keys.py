"""Keys that a path parameter's ``enum`` fixes are drawn from it, so every seeded row can be named.

Oxford Dictionaries' ``/domains/{source_language}`` takes ``en|es|de`` only: seed keys outside the
enum could never be sent, so the read failed its own argument check. The keys are the enum's
values (one row each), and where two reads of one entity allow different subsets
(``/v2/lexicalcategories/{language}`` takes ``en`` alone) the checker reads a row the narrower one can
name. Built from an inline document, called on real SQLite, and conformance-checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.verify import verify_service
from tests.inline_service import build_inline
from tests.runtime_call import call

_LANGS = ["en", "es", "de"]
_RESULT = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "label": {"type": "string"}, "total": {"type": "integer"}},
}


def _read(op: str, param: str, enum: list[str]) -> dict[str, Any]:
    schema = {"type": "string", "enum": enum}
    return {
        "get": {
            "operationId": op,
            "parameters": [{"name": param, "in": "path", "required": True, "schema": schema}],
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": _RESULT}}}},
        }
    }


def _doc() -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "Dictionary", "version": "1"},
        "paths": {
            "/domains/{source_language}": _read("getDomains", "source_language", _LANGS),
            "/lexicalcategories/{source_language}": _read("getCategories", "source_language", _LANGS),
            "/v2/lexicalcategories/{language}": _read("getBasicCategories", "language", ["en"]),
        },
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("enum_keys"), "dictionary", _doc())


@pytest.fixture()
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def test_the_seeded_keys_are_the_enum_values(rt: ServiceRuntime) -> None:
    assert sorted(r["id"] for r in rt.select(None, "domain")) == sorted(_LANGS)


def test_every_seeded_row_is_read_by_its_key(rt: ServiceRuntime) -> None:
    for lang in _LANGS:
        out = call(rt, None, "getDomains", {"source_language": lang})
        assert out["success"] and out["data"]["id"] == lang
    refused = call(rt, None, "getDomains", {"source_language": "fr"})
    assert not refused["success"] and refused["error"]["code"] == "invalid_arguments"


def test_the_checker_reads_a_row_the_narrower_enum_names(folder: Path) -> None:
    report = verify_service(folder)
    assert report.passed, report.failed_tools
    checks = {t.tool: (t.backend, t.passed) for t in report.tools}
    for tool in ("getDomains", "getCategories", "getBasicCategories"):
        assert checks[tool] == ("implemented", True), tool


def _closed_key_doc() -> dict[str, Any]:
    """trakt.tv's shape: comments listed at ``/comments/{sort}`` (an enum), created at ``/comments``."""
    comment = {"type": "object", "properties": {"id": {"type": "string"}, "comment": {"type": "string"}}}
    body = {"content": {"application/json": {"schema": comment}}}
    created = {"201": {"description": "created", **body}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Comments", "version": "1"},
        "paths": {
            "/comments": {"post": {"operationId": "postComment", "requestBody": body, "responses": created}},
            "/comments/{sort}": _read("getComments", "sort", ["newest", "oldest"]),
        },
    }


def test_a_create_with_no_key_left_is_refused_as_a_conflict(tmp_path: Path) -> None:
    """Every key the enum allows is seeded: a create answers 409 with the reason, never a tool error."""
    folder = build_inline(tmp_path, "comments", _closed_key_doc(), verify=False)
    rt = ServiceRuntime.from_folder(folder, Settings())
    assert sorted(r["id"] for r in rt.select(None, "comment")) == ["newest", "oldest"]
    out = call(rt, "ep-closed", "postComment", {"comment": "Great film"})
    assert not out["success"]
    assert out["error"]["code"] == "conflict", out
    assert "key" in out["error"]["message"]
    assert sorted(r["id"] for r in rt.select("ep-closed", "comment")) == ["newest", "oldest"]
