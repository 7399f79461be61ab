"""Build service folders from spec files: ingest -> synthesize -> render -> verify.

A tool that fails verification is switched to the simulated backend (its reason starts with
``VERIFY_PREFIX``) and the folder is rendered again, until no implemented tool fails: what is
served as implemented is what was checked. A simulated tool that fails keeps its backend and
gets the failure as its reason; the report lists every tool still failing (``failed_checks``),
so a service is never served as if verified. A bad spec never stops a batch: it is listed in
the report with its SpecError (file + JSON pointer), and a defective operation inside a good
document is left out and listed in ``defects``. ``check_rendered`` re-renders a folder from its
``spec.json`` and names every file that differs (STYLE #1: rendered files are never edited by hand).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from compoworld.manifest import ServiceManifest
from compoworld.specs import SpecError, load_spec, read_document
from compoworld.specs.model import ServiceSpec
from compoworld.synth.pipeline import Synthesis, synthesize
from compoworld.synth.render import RENDERED_FILES, dumps_json, render_files, write_files
from compoworld.synth.verify import verify_service

__all__ = [
    "VERIFY_PREFIX",
    "BuildReport",
    "ServiceBuildResult",
    "SpecFailure",
    "build_library",
    "build_service",
    "check_rendered",
]

#: Start of ``simulated_reason`` for tools switched to simulated because verification failed.
VERIFY_PREFIX = "verification failed: "
_MAX_REASON = 300
_OWN_FILES = (*RENDERED_FILES, "spec.json", "verify.json")


class ServiceBuildResult(BaseModel):
    """What building one spec produced."""

    name: str = Field(description="Service slug (folder name).")
    spec_path: str = Field(description="The input document.")
    folder: str = Field(description="The generated service folder.")
    source_kind: str = Field(description="openapi3 | swagger2 | mcp | functions.")
    tools: int = Field(description="Number of tools.")
    implemented: int = Field(description="Tools served by typed state.")
    implemented_share: float = Field(description="implemented / tools (0 when there are no tools).")
    entities: int = Field(description="Typed entities.")
    rows: int = Field(description="Seed rows over all entities.")
    verified: bool | None = Field(description="Whether verification passed; None when it could not run.")
    switched_to_simulated: dict[str, str] = Field(
        default_factory=dict, description="Tools verification switched to simulated, with the reason."
    )
    failed_checks: dict[str, str] = Field(
        default_factory=dict,
        description="Tools whose checks still fail as served (all simulated, the failure their reason).",
    )
    defects: list[str] = Field(
        default_factory=list, description="Operations left out as defective ('file#pointer: message')."
    )
    errors: list[str] = Field(default_factory=list, description="Problems met (verification errors...).")
    warnings: list[str] = Field(default_factory=list, description="Non-fatal ingestion warnings.")


class SpecFailure(BaseModel):
    """A spec that could not be built."""

    spec_path: str = Field(description="The input document.")
    error: str = Field(description="The SpecError (file#pointer: message) or other failure.")


class BuildReport(BaseModel):
    """The outcome of a batch build."""

    services: list[ServiceBuildResult] = Field(default_factory=list, description="Built services, by name.")
    failures: list[SpecFailure] = Field(default_factory=list, description="Specs that could not be built.")
    tools: int = Field(default=0, description="Tools over all built services.")
    implemented: int = Field(default=0, description="Implemented tools over all built services.")
    implemented_share: float = Field(default=0.0, description="Library-wide implemented / tools.")


def _spec_bytes(spec_path: Path) -> bytes:
    """The source document as JSON: a JSON file byte-exact, anything else re-serialised (key order kept)."""
    raw = spec_path.read_bytes()
    if spec_path.suffix.lower() == ".json":
        return raw
    doc = read_document(spec_path)
    return (json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n").encode()


def _load(folder: Path, name: str) -> ServiceSpec:
    """The spec of a service folder: what both a build and a re-render synthesize from.

    A document without a title gets its title from the file name, which here is always
    ``spec``; the service name stands in for it instead.
    """
    spec = load_spec(folder / "spec.json", name=name)
    if spec.title in ("", "spec"):
        spec = spec.model_copy(update={"title": name})
    return spec


def _verify_overrides(manifest: ServiceManifest) -> dict[str, str]:
    """Tools verification switched to simulated, with their full reasons."""
    return {
        t.name: t.simulated_reason
        for t in manifest.tools
        if t.simulated_reason and t.simulated_reason.startswith(VERIFY_PREFIX)
    }


def _overrides(folder: Path) -> dict[str, str]:
    """The verification overrides recorded in an existing folder's manifest.json."""
    path = folder / "manifest.json"
    if not path.exists():
        return {}
    return _verify_overrides(ServiceManifest.model_validate_json(path.read_text(encoding="utf-8")))


def _failed_tools(report: Any) -> dict[str, str]:
    failed = getattr(report, "failed_tools", None)
    return dict(failed) if isinstance(failed, dict) else {}


def _verify(folder: Path, synthesis: Synthesis, result: ServiceBuildResult, spec: ServiceSpec) -> Synthesis:
    verify = verify_service
    try:
        report = verify(folder)
        # Switching a tool can expose another (a reader it relied on); every round marks at least
        # one more tool as failed, so this ends within one round per tool.
        for _ in range(len(synthesis.manifest.tools) + 1):
            failed = {k: v[:_MAX_REASON] for k, v in _failed_tools(report).items()}
            fresh = {k: _failed_reason(synthesis, k, v) for k, v in failed.items() if _unmarked(synthesis, k)}
            if not fresh:
                break
            overrides = {**_verify_overrides(synthesis.manifest), **fresh}
            switched = {k: v for k, v in failed.items() if _implemented(synthesis, k)}
            synthesis = synthesize(spec, result.name, overrides)
            write_files(folder, render_files(synthesis))
            result.switched_to_simulated = dict(sorted({**result.switched_to_simulated, **switched}.items()))
            report = verify(folder)
        result.failed_checks = dict(sorted(_failed_tools(report).items()))
        result.verified = bool(getattr(report, "passed", False))
        payload = report.model_dump(mode="json") if isinstance(report, BaseModel) else dict(report)
        (folder / "verify.json").write_text(dumps_json(payload), encoding="utf-8")
    except Exception as exc:  # a verifier crash is reported, never fatal to the batch
        result.verified = False
        result.errors.append(f"verification crashed: {type(exc).__name__}: {exc}")
        _unverified(folder, result.name, result.errors[-1], passed=False)
    return synthesis


def _unverified(folder: Path, service: str, reason: str, passed: bool | None = None) -> None:
    """A verify.json for a folder the checks did not (fully) run on, saying why."""
    report = {"service": service, "passed": passed, "reason": reason}
    (folder / "verify.json").write_text(dumps_json(report), encoding="utf-8")


def _unmarked(synthesis: Synthesis, tool: str) -> bool:
    """A failing tool not yet served as failed: implemented, or simulated for another reason."""
    found = synthesis.manifest.tool(tool)
    reason = found.simulated_reason if found is not None else None
    return found is not None and not (
        found.backend == "simulated" and (reason or "").startswith(VERIFY_PREFIX)
    )


def _failed_reason(synthesis: Synthesis, tool: str, failure: str) -> str:
    """The simulated reason of a tool that failed its checks (keeping why it was simulated before)."""
    found = synthesis.manifest.tool(tool)
    before = found.simulated_reason if found is not None and found.backend == "simulated" else None
    return VERIFY_PREFIX + failure + (f" (simulated before: {before})" if before else "")


def _implemented(synthesis: Synthesis, tool: str) -> bool:
    found = synthesis.manifest.tool(tool)
    return found is not None and found.backend == "implemented"


def build_service(
    spec_path: Path,
    out_dir: Path,
    name: str | None = None,
    *,
    verify: bool = True,
    taken: dict[str, str] | None = None,
) -> ServiceBuildResult:
    """Build one service folder ``out_dir/<name>``; raises SpecError for a bad spec.

    ``taken`` maps service names already built in this batch to their spec paths: a second
    document with the same name is refused rather than silently overwriting the first.
    """
    spec_path = Path(spec_path)
    first = load_spec(spec_path, name=name)
    if taken is not None:
        if first.name in taken:
            raise SpecError(
                str(spec_path),
                "",
                f"service name '{first.name}' is already used by {taken[first.name]} in this build; "
                "pass a distinct --name",
            )
        taken[first.name] = str(spec_path)
    folder = Path(out_dir) / first.name
    folder.mkdir(parents=True, exist_ok=True)
    for own in _OWN_FILES:
        (folder / own).unlink(missing_ok=True)
    (folder / "spec.json").write_bytes(_spec_bytes(spec_path))
    spec = _load(folder, first.name)
    synthesis = synthesize(spec, first.name)
    write_files(folder, render_files(synthesis))
    result = ServiceBuildResult(
        name=first.name,
        spec_path=str(spec_path),
        folder=str(folder),
        source_kind=spec.source_kind,
        tools=0,
        implemented=0,
        implemented_share=0.0,
        entities=0,
        rows=0,
        verified=None,
        warnings=list(spec.warnings),
        defects=list(first.defects),  # located in the input document, not the copy
    )
    if verify:
        synthesis = _verify(folder, synthesis, result, spec)
    else:
        _unverified(folder, result.name, "verification skipped (--no-verify)")
    manifest = synthesis.manifest
    result.tools = len(manifest.tools)
    result.implemented = sum(1 for t in manifest.tools if t.backend == "implemented")
    result.implemented_share = round(result.implemented / result.tools, 4) if result.tools else 0.0
    result.entities = len(manifest.entities)
    result.rows = sum(len(rows) for rows in synthesis.seed.values())
    return result


def build_library(
    paths: Iterable[Path],
    out_dir: Path,
    progress: bool = True,
    *,
    verify: bool = True,
    names: dict[str, str] | None = None,
) -> BuildReport:
    """Build every spec into ``out_dir``; bad specs are reported, the rest are built."""
    from rich.progress import Progress

    specs = sorted({Path(p) for p in paths}, key=str)
    report = BuildReport()
    taken: dict[str, str] = {}
    with Progress(disable=not progress, transient=False) as bar:
        task = bar.add_task("building services", total=len(specs))
        for path in specs:
            bar.update(task, description=f"building {path.name}")
            try:
                result = build_service(
                    path, out_dir, (names or {}).get(str(path)), verify=verify, taken=taken
                )
                report.services.append(result)
            except SpecError as exc:
                report.failures.append(SpecFailure(spec_path=str(path), error=str(exc)))
            except Exception as exc:  # one broken service must not stop the batch
                report.failures.append(SpecFailure(spec_path=str(path), error=f"{type(exc).__name__}: {exc}"))
            bar.advance(task)
    report.services.sort(key=lambda r: r.name)
    report.tools = sum(r.tools for r in report.services)
    report.implemented = sum(r.implemented for r in report.services)
    report.implemented_share = round(report.implemented / report.tools, 4) if report.tools else 0.0
    return report


def check_rendered(folder: Path) -> list[str]:
    """Re-render a service folder from its ``spec.json``; the names of files that differ (empty: clean)."""
    folder = Path(folder)
    if not (folder / "spec.json").exists():
        return ["spec.json (missing)"]
    spec = _load(folder, folder.name)
    synthesis = synthesize(spec, folder.name, _overrides(folder))
    differences = []
    for name, text in render_files(synthesis).items():
        path = folder / name
        if not path.exists():
            differences.append(f"{name} (missing)")
        elif path.read_text(encoding="utf-8") != text:
            differences.append(name)
    return differences
