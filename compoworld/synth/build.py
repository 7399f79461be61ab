"""Build one service folder from one document: ingest -> synthesize -> render -> verify -> commit.

A tool that fails verification, or whose check crashes the verifier, is switched to the simulated
backend (its reason starts with ``VERIFY_PREFIX``) and the folder is rendered again, until no
implemented tool fails: what is served as implemented is what was checked. A simulated tool that
fails keeps its backend and gets the failure as its reason; the report lists every tool still
failing (``failed_checks``), so a service is never served as if verified. A defective operation
inside a good document is left out and listed in ``defects``. A folder is built in a work directory
and moved into the library in one rename, and only once it loads: a library never holds a
half-written or unloadable service.
``check_rendered`` re-renders a folder from its ``spec.json`` and names every file that differs
(STYLE #1: rendered files are never edited by hand). Batches are ``compoworld.synth.batch``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

from compoworld.errors import LibraryError
from compoworld.manifest import EntityDef, ServiceManifest, ToolDef, parse_manifest
from compoworld.runtime.service import SCHEMA_FILE, ServiceRuntime, sqlmodel_ddl
from compoworld.settings import Settings
from compoworld.specs import SpecError, ingest_document, load_spec, read_document
from compoworld.specs.model import ServiceSpec
from compoworld.synth.ddl import entity_ddl
from compoworld.synth.pipeline import Synthesis, synthesize, with_overrides
from compoworld.synth.provenance import RECORD_FILE, BuildRecord, read_record, tool_signature
from compoworld.synth.render import RENDERED_FILES, dumps_json, render_files, write_files
from compoworld.synth.reports import BuildReport, ServiceBuildResult, SpecFailure
from compoworld.synth.reverify import Verdicts

__all__ = [
    "VERIFY_PREFIX",
    "BuildError",
    "BuildReport",
    "ServiceBuildResult",
    "SpecFailure",
    "build_library",
    "build_service",
    "build_work_folder",
    "check_rendered",
    "commit_folder",
    "release_caches",
    "work_folder",
]

#: Start of ``simulated_reason`` for tools switched to simulated because verification failed.
VERIFY_PREFIX = "verification failed: "
_MAX_REASON = 300
_OWN_FILES = (*RENDERED_FILES, "spec.json", "verify.json", SCHEMA_FILE, RECORD_FILE)
#: Build state of a library (work folders, journal, caches): never part of the library itself.
STATE_DIR = ".build"


class BuildError(LibraryError):
    """A document was read but its service could not be built into a folder that loads."""


def _spec_bytes(spec_path: Path) -> bytes:
    """The source document as JSON: a JSON file byte-exact, anything else re-serialised (key order kept)."""
    raw = spec_path.read_bytes()
    if spec_path.suffix.lower() == ".json":
        return raw
    doc = read_document(spec_path)
    return (json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n").encode()


def _load(folder: Path, name: str) -> ServiceSpec:
    """The spec of a service folder: what both a build and a re-render synthesize from.

    It is read as ``<name>/spec.json`` wherever the folder is, so messages never carry a
    work folder's path. A document without a title gets its title from the file name, which
    here is always ``spec``; the service name stands in for it instead.
    """
    spec = ingest_document(read_document(folder / "spec.json"), f"{name}/spec.json", name=name)
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
    return _verify_overrides(parse_manifest(path.read_bytes()))


#: ``schema.sql`` of the last few ``models.py`` texts: verification renders a folder again each
#: time it switches tools to simulated, which leaves ``models.py`` as it was, and importing it
#: (SQLModel class creation) is most of what a render costs.
_SCHEMAS: dict[tuple[str, str], str | None] = {}
_SCHEMAS_KEPT = 8


def _schema_text(folder: Path, name: str, entities: list[EntityDef]) -> str | None:
    """``schema.sql`` of the folder's ``models.py`` (rendered from ``entities``): compiled from the
    entities where ``entity_ddl`` can, else by importing it."""
    try:
        key = (name, (folder / "models.py").read_text(encoding="utf-8"))
    except FileNotFoundError:
        key = None
    if key is not None and key in _SCHEMAS:
        return _SCHEMAS[key]
    ddl = entity_ddl(entities, key[1]) if key is not None else None
    if ddl is None:
        ddl = sqlmodel_ddl(folder, name)
    text = None if ddl is None else "".join(f"{statement};\n\n" for statement in ddl)
    if key is not None:
        while len(_SCHEMAS) >= _SCHEMAS_KEPT:
            del _SCHEMAS[next(iter(_SCHEMAS))]
        _SCHEMAS[key] = text
    return text


def _render(folder: Path, synthesis: Synthesis) -> None:
    """Write the rendered files and ``schema.sql`` (the DDL of the models just written)."""
    write_files(folder, render_files(synthesis))
    schema = _schema_text(folder, synthesis.manifest.name, synthesis.manifest.entities)
    if schema is None:
        (folder / SCHEMA_FILE).unlink(missing_ok=True)
    else:
        (folder / SCHEMA_FILE).write_text(schema, encoding="utf-8", newline="\n")


def _implemented(synthesis: Synthesis) -> list[str]:
    return [t.name for t in synthesis.manifest.tools if t.backend in ("implemented", "action")]


def _failed_reason(base: Synthesis, tool: str, failure: str) -> str:
    """The simulated reason of a tool that failed its checks (keeping why it was simulated before)."""
    found = base.manifest.tool(tool)
    before = found.simulated_reason if found is not None and found.backend == "simulated" else None
    return VERIFY_PREFIX + failure + (f" (simulated before: {before})" if before else "")


def _verify(folder: Path, base: Synthesis, result: ServiceBuildResult) -> Synthesis:
    """Verify, marking failed tools simulated (with the failure as reason) until no implemented tool fails.

    Switching a tool can expose another (a reader it relied on); every round marks at least one
    more tool, so this ends within one round per tool. A crash of the whole verifier (not of one
    tool's check, which fails just that tool) marks every implemented tool with the crash as the
    reason and verifies again; if it crashes with nothing left to mark, the build fails. The
    determinism check (a second load seeds the same state) counts only in the last round's report,
    so the folder is loaded a second time only then. A later round runs again only the checks a
    switched tool can change and keeps the other verdicts (``compoworld.synth.reverify``): in the
    round after a switch, most tools meet none of the switched ones.
    """
    from compoworld.synth.verify import verify_round, with_determinism

    marked: dict[str, str] = {}
    synthesis = base
    report = None
    kept = None
    for _ in range(len(base.manifest.tools) + 2):
        first = _check_loads(folder, result.name)
        try:
            report, verdicts = asyncio.run(verify_round(first, kept=kept))
        except Exception as exc:
            verdicts = None
            reason = f"verifier crashed: {type(exc).__name__}: {exc}"[:_MAX_REASON]
            if not _implemented(synthesis):
                raise BuildError(f"{result.name}: {reason}") from exc
            result.errors.append(reason)
            failed = dict.fromkeys(_implemented(synthesis), reason)
        else:
            failed = {k: v[:_MAX_REASON] for k, v in report.failed_tools.items() if k not in marked}
        if not failed:
            assert report is not None  # a crash marks every implemented tool, or raised above
            report = with_determinism(report, first, _check_loads(folder, result.name))
            break
        marked |= {k: _failed_reason(base, k, v) for k, v in failed.items()}
        switched = {k: v for k, v in failed.items() if k in _implemented(synthesis)}
        result.switched_to_simulated = dict(sorted({**result.switched_to_simulated, **switched}.items()))
        before, synthesis = synthesis, with_overrides(base, marked)
        kept = _kept(verdicts, before, synthesis)
        _render(folder, synthesis)
        report = None
    if report is None:
        raise BuildError(f"{result.name}: verification did not settle")
    result.failed_checks = dict(sorted(report.failed_tools.items()))
    result.verified = report.passed
    (folder / "verify.json").write_text(dumps_json(report.model_dump(mode="json")), encoding="utf-8")
    return synthesis


def _kept(verdicts: Verdicts | None, before: Synthesis, after: Synthesis) -> Verdicts | None:
    """The verdicts of the round just run that the next round keeps: those no tool whose definition
    changed can reach (``compoworld.synth.reverify``); none where anything else changed. A simulated
    tool that failed again changes only its ``simulated_reason``, which nothing that serves or checks
    a tool reads: it is served as before and counts as unchanged."""
    if (
        verdicts is None
        or before.seed is not after.seed
        or before.manifest.entities != after.manifest.entities
    ):
        return None
    old = {t.name: t for t in before.manifest.tools}
    new = {t.name: t for t in after.manifest.tools}
    if old.keys() != new.keys():
        return None
    changed = [name for name in new if _served(old[name]) != _served(new[name])]
    return verdicts.kept([old[n] for n in changed], [new[n] for n in changed])


def _served(tool: ToolDef) -> ToolDef:
    """The definition as the runtime and the checks see it (without the reason it is simulated)."""
    return tool.model_copy(update={"simulated_reason": None}) if tool.simulated_reason else tool


def _unverified(folder: Path, service: str, reason: str) -> None:
    """A verify.json for a folder the checks did not run on, saying why."""
    report = {"service": service, "passed": None, "reason": reason}
    (folder / "verify.json").write_text(dumps_json(report), encoding="utf-8")


def _check_loads(folder: Path, name: str) -> ServiceRuntime:
    """The folder must load as a service: a build never reports as built what cannot be served."""
    try:
        return ServiceRuntime.from_folder(folder, Settings.defaults())
    except Exception as exc:
        raise BuildError(f"{name}: the built service does not load: {type(exc).__name__}: {exc}") from exc


def work_folder(out_dir: Path, name: str) -> Path:
    """Where a service is built before it is moved into the library (one per process)."""
    return Path(out_dir) / STATE_DIR / "work" / f"{name}.{os.getpid()}"


def build_work_folder(
    spec_path: Path,
    work: Path,
    name: str,
    *,
    verify: bool = True,
    source: str | None = None,
) -> ServiceBuildResult:
    """Build the service ``name`` from ``spec_path`` into the (fresh) folder ``work``.

    Raises SpecError for a document that cannot be ingested and BuildError for a service
    that cannot be built into a folder that loads.
    """
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "spec.json").write_bytes(_spec_bytes(Path(spec_path)))
    spec = _load(work, name)
    base = synthesize(spec, name)
    _render(work, base)
    label = source or str(spec_path)
    copy = f"{name}/spec.json"  # what messages of the ingester call the document: the input, rather
    result = ServiceBuildResult(
        name=name,
        spec_path=label,
        folder=str(work),
        source_kind=spec.source_kind,
        warnings=[w.replace(copy, label) for w in spec.warnings],
        defects=[d.replace(copy, label) for d in spec.defects],
    )
    if verify:
        synthesis = _verify(work, base, result)  # the last thing it did was load the folder
    else:
        synthesis = base
        _unverified(work, name, "verification skipped (--no-verify)")
        _check_loads(work, name)
    manifest = synthesis.manifest
    result.tools = len(manifest.tools)
    result.implemented = sum(1 for t in manifest.tools if t.backend == "implemented")
    result.implemented_share = round(result.implemented / result.tools, 4) if result.tools else 0.0
    result.actions = sum(1 for t in manifest.tools if t.backend == "action")
    stateful = result.implemented + result.actions
    result.stateful_share = round(stateful / result.tools, 4) if result.tools else 0.0
    result.entities = len(manifest.entities)
    result.rows = sum(len(rows) for rows in synthesis.seed.values())
    result.tool_signature = tool_signature(manifest)
    result.title, result.domain = manifest.title, manifest.domain
    result.description = " ".join(manifest.description.split())[:300]
    return result


def _into_trash(folder: Path) -> Path:
    """Move a library folder into the build's trash in one rename; where it now lies."""
    trash = folder.parent / STATE_DIR / "trash" / f"{folder.name}.{os.getpid()}"
    trash.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(trash, ignore_errors=True)
    os.rename(folder, trash)
    return trash


def discard_folder(folder: Path) -> None:
    """Remove a library folder so that no kill leaves half of it in place: it is renamed into the
    build's trash first (one step), then deleted there. A half-deleted folder that still held its
    ``build.json`` would pass for up to date on the next run."""
    if folder.exists():
        shutil.rmtree(_into_trash(folder), ignore_errors=True)


def commit_folder(work: Path, final: Path) -> None:
    """Move a finished work folder into place in one rename (the old folder goes first).

    A crash between the two renames leaves no folder at all, which the next build redoes;
    it never leaves a mixture of two builds.
    """
    trash = _into_trash(final) if final.exists() else None
    os.rename(work, final)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def release_caches() -> None:
    """Drop what FastAPI caches per route handler (``lru_cache(maxsize=4096)`` in
    ``fastapi.dependencies.models``): each entry keeps a built service's runtime alive, so a
    process that builds or loads thousands of services would otherwise hold on to all of them."""
    from fastapi import routing
    from fastapi.dependencies import models

    for value in vars(models).values():
        clear = getattr(value, "cache_clear", None)
        if callable(clear):
            clear()
    contexts = getattr(routing, "_endpoint_context_cache", None)  # keyed by id(endpoint): grows per app
    if isinstance(contexts, dict):
        contexts.clear()


def _guard_existing(final: Path, source: str) -> None:
    """Refuse to replace a folder that holds a service built from another document."""
    record = read_record(final)
    if record is not None and record.source != source:
        raise BuildError(
            f"{final} holds the service built from {record.source}; "
            f"building {source} there would overwrite it (choose another --name)"
        )


def build_service(
    spec_path: Path,
    out_dir: Path,
    name: str | None = None,
    *,
    verify: bool = True,
    taken: dict[str, str] | None = None,
    record: dict[str, Any] | None = None,
) -> ServiceBuildResult:
    """Build one service folder ``out_dir/<name>``; raises SpecError for a bad spec.

    ``taken`` maps service names already built in this batch to their spec paths: a second
    document with the same name is refused rather than silently overwriting the first.
    ``record`` (BuildRecord fields but ``result`` and ``tool_signature``) is written as
    ``build.json`` when given.
    """
    spec_path = Path(spec_path)
    name = name or load_spec(spec_path).name
    if taken is not None:
        if name in taken:
            raise SpecError(
                str(spec_path),
                "",
                f"service name '{name}' is already used by {taken[name]} in this build; pass a distinct --name",
            )
        taken[name] = str(spec_path)
    final = Path(out_dir) / name
    source = record["source"] if record else str(spec_path)
    _guard_existing(final, source)
    work = work_folder(Path(out_dir), name)
    try:
        result = build_work_folder(spec_path, work, name, verify=verify, source=source)
        if record is not None:
            write_record(work, record, result)
        commit_folder(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        release_caches()
    result.folder = str(final)
    return result


def write_record(folder: Path, record: dict[str, Any], result: ServiceBuildResult) -> None:
    """Write ``build.json`` (paths in it are relative: the record is the same wherever the library is)."""
    stored = result.model_copy(update={"folder": result.name})
    full = BuildRecord(**record, tool_signature=result.tool_signature, result=stored.model_dump(mode="json"))
    (folder / RECORD_FILE).write_text(dumps_json(full.model_dump(mode="json")), encoding="utf-8")


def build_library(
    paths: list[Path] | tuple[Path, ...],
    out_dir: Path,
    progress: bool = True,
    *,
    verify: bool = True,
    names: dict[str, str] | None = None,
) -> BuildReport:
    """Build every spec into ``out_dir``, one after the other; bad specs are reported, the rest built.

    The simple path for a handful of files (the starter library, tests); whole corpora go
    through ``compoworld.synth.batch``, which adds parallelism, selection and resumption.
    """
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
            except (SpecError, BuildError) as exc:
                report.failures.append(SpecFailure(spec_path=str(path), error=str(exc)))
            except Exception as exc:  # one broken service must not stop the batch
                report.failures.append(SpecFailure(spec_path=str(path), error=f"{type(exc).__name__}: {exc}"))
            bar.advance(task)
    report.finish()
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
    schema = folder / SCHEMA_FILE
    stale = schema.exists() and schema.read_text(encoding="utf-8") != _schema_text(
        folder, folder.name, synthesis.manifest.entities
    )
    if not differences and stale:  # an optional cache, but never a stale one
        differences.append(SCHEMA_FILE)
    return differences
