"""Synthesis over the ingestion fixtures: every source format builds, re-renders cleanly and binds."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.manifest import load_manifest
from compoworld.synth.build import build_library, check_rendered

FIXTURES = Path(__file__).parent / "fixtures" / "specs"
SPECS = (
    sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))
    if FIXTURES.is_dir()
    else []
)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SPECS:
        pytest.skip("no ingestion fixtures under tests/fixtures/specs")
    out = tmp_path_factory.mktemp("fixture_library")
    names = {str(p): p.stem.lower().replace("-", "_") for p in SPECS}  # two fixtures describe "petstore"
    report = build_library(SPECS, out, progress=False, verify=False, names=names)
    assert not report.failures, report.failures
    return out


def test_every_fixture_builds_and_re_renders_byte_for_byte(library: Path) -> None:
    folders = sorted(p.parent for p in library.glob("*/manifest.json"))
    assert len(folders) >= 2
    for folder in folders:
        assert check_rendered(folder) == [], folder.name


def test_each_source_format_binds_crud_tools(library: Path) -> None:
    kinds: dict[str, int] = {}
    for folder in sorted(p.parent for p in library.glob("*/manifest.json")):
        manifest = load_manifest(folder)
        implemented = [t for t in manifest.tools if t.backend == "implemented"]
        kinds[manifest.source_kind] = kinds.get(manifest.source_kind, 0) + len(implemented)
        for tool in implemented:
            assert tool.entity is not None and manifest.entity(tool.entity) is not None
            if tool.operation in ("read", "update", "delete"):
                assert tool.pk_arg in tool.input_schema["properties"]
        for tool in manifest.tools:
            if tool.backend == "simulated":
                assert tool.simulated_reason
    assert all(count > 0 for count in kinds.values()), kinds


def test_every_input_kind_passes_conformance(library: Path) -> None:
    """The conformance checker on the project's own fixtures: OpenAPI 3.0/3.1, Swagger 2.0, MCP, functions."""
    from compoworld.synth.verify import verify_service

    kinds: set[str] = set()
    for folder in sorted(p.parent for p in library.glob("*/manifest.json")):
        report = verify_service(folder)
        assert report.deterministic, folder.name
        assert report.passed, (folder.name, report.failed_tools)
        kinds.add(load_manifest(folder).source_kind)
    assert kinds == {"openapi3", "swagger2", "mcp", "functions"}
