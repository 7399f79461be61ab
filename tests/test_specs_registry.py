"""Ingesters are data: registered by name, sniffed in priority order, swappable per call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compoworld.specs as specs
from compoworld.registry import RegistryError
from compoworld.specs import (
    INGESTERS,
    Ingester,
    IngesterRegistry,
    ServiceSpec,
    SpecError,
    ToolSpec,
    load_spec,
)


def _detect_csv_tools(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == "tool-table"


def _ingest_csv_tools(doc: Any, source_file: str) -> ServiceSpec:
    tools = [ToolSpec(name=row, description=f"tool {row}") for row in doc["rows"]]
    return ServiceSpec(name="table", source_kind="functions", source_file=source_file, tools=tools)


TABLE = Ingester(name="tool-table", detect=_detect_csv_tools, ingest=_ingest_csv_tools, priority=5)


def test_builtin_ingesters_are_registered_in_detection_order() -> None:
    assert INGESTERS.names() == ["openapi3", "swagger2", "mcp", "functions"]
    assert {i.name for i in specs.BUILTIN_INGESTERS} == set(INGESTERS.names())


def test_a_private_registry_can_add_a_format(tmp_path: Path) -> None:
    registry = IngesterRegistry((*specs.BUILTIN_INGESTERS, TABLE))
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"format": "tool-table", "rows": ["a", "b"]}))
    spec = load_spec(path, registry=registry)
    assert [t.name for t in spec.tools] == ["a", "b"]
    assert specs.detect_kind({"format": "tool-table"}, registry=registry) == "tool-table"
    with pytest.raises(SpecError, match="unrecognised"):
        load_spec(path)
    assert "tool-table" not in INGESTERS


def test_kind_can_be_forced(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "ping", "description": "Ping", "parameters": {"type": "object"}}]))
    assert load_spec(path, kind="functions").tools[0].name == "ping"
    with pytest.raises(SpecError, match="must be an object"):
        load_spec(path, kind="openapi3")


def test_a_taken_name_is_refused_for_a_different_ingester() -> None:
    registry = IngesterRegistry((TABLE,))
    registry.register(TABLE)  # the same ingester again: harmless
    other = Ingester(name="tool-table", detect=_detect_csv_tools, ingest=_ingest_csv_tools, priority=1)
    with pytest.raises(RegistryError, match="already registered"):
        registry.register(other)
    assert registry.get("tool-table") is TABLE
    with pytest.raises(RegistryError, match="unknown ingester 'nope'"):
        registry.get("nope")


def test_public_api_is_curated() -> None:
    for name in specs.__all__:
        assert hasattr(specs, name), name
    assert {"load_spec", "detect_kind", "SpecError", "entity_name", "INGESTERS", "register"} <= set(
        specs.__all__
    )
