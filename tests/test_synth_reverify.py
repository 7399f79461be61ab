"""A verification round after a switch keeps the verdicts no switched tool can change, and the report
it writes is the one a full verification of the finished folder gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compoworld.manifest import load_manifest
from compoworld.settings import bundled_library
from compoworld.synth import verify
from compoworld.synth.build import build_service
from compoworld.synth.pipeline import simulate
from compoworld.synth.reverify import Verdicts, found_by, looks_up
from compoworld.synth.verify import ToolCheck


@pytest.mark.parametrize("service", ["conversation"])  # a starter service one of whose tools fails a check
def test_kept_verdicts_are_what_a_full_verification_gives(
    service: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds: list[tuple[int, int]] = []  # (verdicts kept, tools) per round
    run_round = verify.verify_round

    async def spy(runtime: Any, rebuilt: Any = None, kept: Verdicts | None = None) -> Any:
        rounds.append((len(kept.checks) if kept else 0, len(runtime.manifest.tools)))
        return await run_round(runtime, rebuilt, kept)

    monkeypatch.setattr(verify, "verify_round", spy)
    spec = tmp_path / f"{service}.json"
    spec.write_bytes((bundled_library() / service / "spec.json").read_bytes())
    result = build_service(spec, tmp_path / "lib")
    assert result.switched_to_simulated  # a tool failed, so there was a second round
    assert len(rounds) >= 2 and rounds[0][0] == 0
    assert all(0 < kept < tools for kept, tools in rounds[1:])  # some kept, the switched ones not
    folder = Path(result.folder)
    monkeypatch.setattr(verify, "verify_round", run_round)
    full = verify.verify_service(folder)  # every check again, on two loads of the finished folder
    written = json.loads((folder / "verify.json").read_text(encoding="utf-8"))
    assert written == full.model_dump(mode="json")


def test_switching_a_read_tool_reruns_the_checks_that_read_its_entity_back() -> None:
    manifest = load_manifest(bundled_library() / "crm")
    read = next(t for t in manifest.tools if t.operation == "read" and t.backend == "implemented")
    create = next(t for t in manifest.tools if t.operation == "create" and t.entity == read.entity)
    other = next(t for t in manifest.tools if t.entity not in (None, read.entity))
    verdicts = Verdicts()
    for tool in (read, create, other):
        check = ToolCheck(tool=tool.name, operation=tool.operation, backend=tool.backend, passed=True)
        verdicts.add(check, looks_up(tool, tool.backend))
    kept = verdicts.kept([read], [simulate(read, "verification failed: test")])
    assert set(kept.checks) == {other.name}  # the read itself, and the create that reads back through it
    assert f"reader:{read.entity}" in found_by(read) and f"reader:{read.entity}" not in found_by(create)
