"""The seed fidelity checker over the whole starter library: typed values valid, coherent, one population."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.manifest import library_folders
from compoworld.settings import bundled_library
from compoworld.synth.fidelity import FidelityReport, check_library, field_kind
from compoworld.synth.fidelity_checks import is_filler, valid


@pytest.fixture(scope="module")
def report() -> FidelityReport:
    return check_library(library_folders(bundled_library()))


def test_typed_seed_fields_of_the_starter_library_are_valid(report: FidelityReport) -> None:
    assert report.services >= 19 and report.rows > 2000
    assert {"email", "phone", "iban", "bic", "currency", "country", "language", "url", "date"} <= set(
        report.typed
    )
    failures = {k: t.examples for k, t in report.typed.items() if t.failed}
    assert report.typed_valid_share >= 0.99, failures
    assert not report.fillers.failed, report.fillers.examples


def test_dates_counts_totals_and_countries_agree(report: FidelityReport) -> None:
    assert report.date_order.checked > 500 and not report.date_order.failed, report.date_order.examples
    assert report.integer_counts.checked and not report.integer_counts.failed, report.integer_counts.examples
    assert report.line_totals.checked and not report.line_totals.failed, report.line_totals.examples
    for kind in ("phone", "postcode", "currency"):
        tally = report.coherence[kind]
        assert tally.checked and tally.share >= 0.99, (kind, tally.examples)


def test_the_same_people_and_organisations_recur_across_services(report: FidelityReport) -> None:
    assert report.shared_keys == 0
    assert report.people_in_2plus >= 30 and report.orgs_in_2plus >= 10
    assert report.emails_in_2plus >= 30


def test_the_checker_fails_what_the_old_seeds_held() -> None:
    """The values issue 10 found in the old seeds are caught, by the libraries' validators."""
    assert not valid("iban", "Plan urgent") and is_filler("Plan urgent")
    assert not valid("currency", "CAD-4") and not valid("country", "PT-12")
    assert not valid("email", "Report request") and not valid("date", "2025-10-02T17:45:00Zxxxx")
    assert valid("iban", "DE89370400440532013000") and valid("bic", "DEUTDEFF")
    assert valid("phone", "+447400123456") and not valid("phone", "+1-555-123-4567-9")
    assert field_kind("billing_iban", {"type": "string"}) == "iban"
    assert field_kind("created", {"type": "string", "format": "date-time"}) == "date"


def test_a_library_with_a_bad_value_is_reported(tmp_path: Path) -> None:
    import json
    import shutil

    source = bundled_library() / "mailsquad"
    folder = tmp_path / "mailsquad"
    shutil.copytree(source, folder)
    seed = json.loads((folder / "seed.json").read_text())
    table = next(t for t, rows in seed.items() if rows and "email" in rows[0])
    seed[table][0]["email"] = "Report request"
    (folder / "seed.json").write_text(json.dumps(seed))
    broken = check_library([folder])
    assert broken.typed["email"].failed == 1
    assert broken.fillers.failed == 1
    assert "Report request" in broken.typed["email"].examples[0]
