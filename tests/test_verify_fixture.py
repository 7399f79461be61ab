"""The conformance checker on the hand-written fixture service, and on a broken one."""

from __future__ import annotations

import json
from pathlib import Path

from compoworld.synth.verify import verify_service
from tests.runtime_fixture import write_crm_service


def test_fixture_service_passes_every_check(tmp_path: Path) -> None:
    report = verify_service(write_crm_service(tmp_path))
    assert report.passed, report.failed_tools
    assert report.deterministic and report.implemented == 5 and report.simulated == 2
    checks = {t.tool: t.checks for t in report.tools}
    assert "create -> read" in checks["createContact"]
    assert "update visible" in checks["updateContact"]
    assert "delete -> not found" in checks["deleteContact"]


def test_a_tool_whose_response_breaks_its_schema_fails(tmp_path: Path) -> None:
    folder = write_crm_service(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    read = next(t for t in manifest["tools"] if t["name"] == "getContact")
    read["output_schema"] = {"type": "array", "items": {"type": "string"}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    report = verify_service(folder)
    assert not report.passed
    assert "getContact" in report.failed_tools and "output schema" in report.failed_tools["getContact"]
