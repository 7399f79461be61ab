"""Build a whole corpus into a library: parallel, incremental, resumable, and the same every time.

    survey (hash, identity, parts of huge documents; cached by content hash)
      -> plan (``select``: which documents, which names)
      -> build every unit whose folder is missing or out of date, one process per core
      -> commit each finished folder in one rename, de-duplicating identical tool sets
      -> prune folders no longer planned; write ``build-report.json`` and ``index.json``

Workers are recycled after ``recycle`` units, or as soon as one has grown past ``recycle_rss_mb``,
and clear FastAPI's per-handler caches after each, so memory stays bounded however many services
are built. Folders the build drops are renamed into ``.build/trash`` before they are deleted. The
parent is the only writer of the library: it appends each outcome to ``.build/journal.jsonl`` as
it happens, so a run killed at any point continues where it stopped, and the library it finishes
with is the same, byte for byte, as an uninterrupted run's (``.build/`` holds the build's own state, never part of the library).
"""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from compoworld.catalog import INDEX_FILE, index_rows
from compoworld.errors import LibraryError
from compoworld.specs import SpecError
from compoworld.synth.build import (
    STATE_DIR,
    BuildError,
    build_work_folder,
    commit_folder,
    discard_folder,
    release_caches,
    work_folder,
    write_record,
)
from compoworld.synth.provenance import RECORD_FILE, file_sha256, generator_fingerprint, read_record
from compoworld.synth.reports import BuildReport, DocumentOutcome, ServiceBuildResult, SpecFailure
from compoworld.synth.select import BuildUnit, DocumentFacts, Plan, plan_units, survey_document
from compoworld.synth.split import DEFAULT_MAX_TOOLS

__all__ = ["INDEX_FILE", "REPORT_FILE", "BatchOptions", "RunStats", "build_corpus", "list_documents"]

REPORT_FILE = "build-report.json"
_SUFFIXES = (".json", ".yaml", ".yml")
_SURVEY_FILE = "survey.json"
_JOURNAL = "journal.jsonl"


@dataclass(frozen=True)
class BatchOptions:
    """How to run a build."""

    workers: int = 0
    verify: bool = True
    max_tools: int = DEFAULT_MAX_TOOLS
    recycle: int = 25
    # a worker whose peak RSS passed this after a unit is retired with its pool (0: never)
    recycle_rss_mb: float = 2500.0
    progress: bool = True


@dataclass
class RunStats:
    """What this run did (unlike the report, this depends on what earlier runs left)."""

    documents: int = 0
    units: int = 0
    built: int = 0
    up_to_date: int = 0
    failed: int = 0
    duplicates: int = 0
    removed: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    worker_cpu_s: float = 0.0
    peak_worker_rss_mb: float = 0.0
    pool_renewals: int = 0  # worker pools retired (by unit count, RSS budget or a killed worker)
    failures: list[str] = field(default_factory=list)


def list_documents(root: Path) -> list[tuple[Path, str]]:
    """(path, path relative to ``root``) of every JSON/YAML document under ``root``, sorted."""
    if root.is_file():
        return [(root, root.name)]
    found = [p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in _SUFFIXES]
    return sorted(((p, p.relative_to(root).as_posix()) for p in found), key=lambda t: t[1])


@contextmanager
def _locked(state: Path) -> Iterator[None]:
    state.mkdir(parents=True, exist_ok=True)
    with (state / "lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise LibraryError(f"another build is writing {state.parent}") from exc
        yield


# -- survey ---------------------------------------------------------------------------------------


def _survey_version(max_tools: int) -> str:
    from compoworld.synth import select, split

    return file_sha256(Path(select.__file__))[:12] + file_sha256(Path(split.__file__))[:12] + f":{max_tools}"


def _process_cpu() -> float:
    times = os.times()
    return times.user + times.system


def _survey_one(path: str, rel: str, stage: str, max_tools: int) -> dict[str, Any]:
    start = _process_cpu()
    facts = survey_document(Path(path), rel, Path(stage), max_tools).to_json()
    return {"facts": facts, "cpu_s": _process_cpu() - start}


def _survey(
    docs: list[tuple[Path, str]],
    state: Path,
    options: BatchOptions,
    pool: _Workers | None,
    bar: Any,
    stats: RunStats,
) -> list[DocumentFacts]:
    """Facts of every document, reusing the cache for documents whose bytes did not change."""
    cache_path = state / _SURVEY_FILE
    version = _survey_version(options.max_tools)
    try:
        cached = json.loads(cache_path.read_text())
        entries: dict[str, Any] = cached["docs"] if cached.get("version") == version else {}
    except (OSError, ValueError, KeyError):
        entries = {}
    stage = state / "parts"
    facts: dict[str, DocumentFacts] = {}
    todo: list[tuple[Path, str, str]] = []
    task = bar.add_task("surveying documents", total=len(docs))
    for path, rel in docs:
        key = f"{file_sha256(path)}:{rel}"
        hit = entries.get(key)
        if hit is not None and _parts_present(hit, stage):
            facts[rel] = DocumentFacts.from_json(hit)
            bar.advance(task)
        else:
            todo.append((path, rel, key))
    args = [(str(p), rel, str(stage), options.max_tools) for p, rel, _ in todo]
    if pool is not None and args:
        results: Iterator[dict[str, Any]] = pool.pool.map(_survey_one, *zip(*args, strict=True), chunksize=4)
    else:
        results = (_survey_one(*a) for a in args)
    for (_, rel, key), data in zip(todo, results, strict=True):
        entries[key] = data["facts"]
        facts[rel] = DocumentFacts.from_json(data["facts"])
        stats.worker_cpu_s += data["cpu_s"] if pool is not None else 0.0
        bar.advance(task)
    live = {f"{f.sha256}:{f.rel}" for f in facts.values()}
    _write_json(
        cache_path, {"version": version, "docs": {k: v for k, v in sorted(entries.items()) if k in live}}
    )
    return [facts[rel] for _, rel in docs]


def _parts_present(entry: dict[str, Any], stage: Path) -> bool:
    return all((stage / p["path"]).exists() for p in entry.get("parts") or [])


# -- building ------------------------------------------------------------------------------------


def _record_fields(unit: BuildUnit, generator: str) -> dict[str, Any]:
    return {
        "source": unit.source,
        "source_sha256": unit.source_sha256,
        "input_sha256": unit.input_sha256,
        "part": unit.part,
        "generator": generator,
    }


def _build_unit(unit: BuildUnit, out: str, verify: bool, generator: str) -> dict[str, Any]:
    """Worker: build one unit into its work folder (the parent commits it)."""
    import resource

    start = _process_cpu()
    work = work_folder(Path(out), unit.name)
    try:
        result = build_work_folder(Path(unit.input_path), work, unit.name, verify=verify, source=unit.source)
        result.part = unit.part
        write_record(work, _record_fields(unit, generator), result)
        outcome: dict[str, Any] = {"ok": True, "work": str(work), "result": result.model_dump(mode="json")}
    except (SpecError, BuildError) as exc:
        outcome = {"ok": False, "error": str(exc)}
    except Exception as exc:  # a bug on one document must not stop the batch: it is reported
        outcome = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        release_caches()
    if not outcome["ok"]:
        shutil.rmtree(work, ignore_errors=True)
    outcome["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    outcome["cpu_s"] = _process_cpu() - start
    return outcome


def _up_to_date(out: Path, unit: BuildUnit, generator: str) -> bool:
    record = read_record(out / unit.name)
    return record is not None and (
        record.input_sha256,
        record.source,
        record.part,
        record.generator,
    ) == (unit.input_sha256, unit.source, unit.part, generator)


class _Committer:
    """The single writer of the library: commits folders, de-duplicates, journals every outcome."""

    def __init__(self, out: Path, state: Path, generator: str, stats: RunStats) -> None:
        self.out = out
        self.generator = generator
        self.stats = stats
        self.journal_path = state / _JOURNAL
        self.previous = self._read_journal()
        self.journal = self.journal_path.open("a", encoding="utf-8")
        self.owner: dict[str, str] = {}

    def _read_journal(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        try:
            lines = self.journal_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return out
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:  # a line cut short by a kill
                continue
            out[entry["name"]] = entry
        return out

    def remembered(self, unit: BuildUnit) -> dict[str, Any] | None:
        """A failure or duplicate verdict of an earlier run on exactly this input and generator
        (a duplicate only while the folder it duplicates still holds the same tool set)."""
        entry = self.previous.get(unit.name)
        if entry is None or (entry.get("input_sha256"), entry.get("generator")) != (
            unit.input_sha256,
            self.generator,
        ):
            return None
        if entry.get("status") == "failed":
            return entry
        if entry.get("status") == "duplicate":
            holder = read_record(self.out / str(entry.get("duplicate_of")))
            return entry if holder is not None and holder.tool_signature == entry.get("signature") else None
        return None

    def log(self, unit: BuildUnit, status: str, **extra: Any) -> None:
        entry = {"name": unit.name, "source": unit.source, "part": unit.part, "status": status}
        entry |= {"input_sha256": unit.input_sha256, "generator": self.generator, **extra}
        self._write(entry)

    def _write(self, entry: dict[str, Any]) -> None:
        self.journal.write(json.dumps(entry, sort_keys=True) + "\n")
        self.journal.flush()
        os.fsync(self.journal.fileno())
        self.previous[entry["name"]] = entry

    def claim(self, unit: BuildUnit, signature: str) -> str | None:
        """Who keeps this tool set: None if ``unit`` does (a larger name holding it is removed),
        else the smaller name that holds it already."""
        holder = self.owner.get(signature)
        if holder is not None and holder != unit.name and holder < unit.name:
            return holder
        self.owner[signature] = unit.name
        if holder is not None and holder != unit.name:
            discard_folder(self.out / holder)
            entry = dict(self.previous.get(holder, {"name": holder}))
            self._write({**entry, "status": "duplicate", "duplicate_of": unit.name, "signature": signature})
            self.stats.duplicates += 1
        return None

    def commit(self, unit: BuildUnit, outcome: dict[str, Any]) -> None:
        if not outcome["ok"]:
            self.stats.failed += 1
            self.stats.failures.append(f"{unit.name}: {outcome['error'][:200]}")
            self.log(unit, "failed", error=outcome["error"])
            return
        work = Path(outcome["work"])
        signature = outcome["result"]["tool_signature"]
        holder = self.claim(unit, signature)
        if holder is not None:
            shutil.rmtree(work, ignore_errors=True)
            self.stats.duplicates += 1
            self.log(unit, "duplicate", duplicate_of=holder, signature=signature)
            return
        commit_folder(work, self.out / unit.name)
        self.stats.built += 1
        self.log(unit, "built")

    def close(self) -> None:
        self.journal.close()


class _Workers:
    """A process pool replaced by a fresh one every ``recycle`` units per worker, so memory stays bounded.

    Not ``max_tasks_per_child``: on CPython 3.11 a ProcessPoolExecutor that replaces a retired
    worker can hang for ever (the pool waits on a worker that never starts). A pool broken by a
    killed worker is replaced too.
    """

    def __init__(self, options: BatchOptions) -> None:
        self.workers = options.workers or os.cpu_count() or 1
        self.limit = max(1, options.recycle) * self.workers
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(
            # prewarm builds a tiny service: workers forked after it skip a second of lazy imports
            [
                "compoworld.synth.build",
                "compoworld.synth.verify",
                "compoworld.synth.select",
                "compoworld.synth.prewarm",
            ]
        )
        self.rss_budget_mb = options.recycle_rss_mb
        self.pool = self._fresh()
        self.submitted = 0
        self.swollen = False
        self.renewals = 0

    def _fresh(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=self.context)

    def spent(self) -> bool:
        return self.swollen or self.submitted >= self.limit or bool(getattr(self.pool, "_broken", False))

    def observe(self, outcome: dict[str, Any]) -> None:
        """A unit's outcome: a worker that grew past the RSS budget retires its pool (a document
        that needs 3 GB leaves that much resident in its worker until the worker exits)."""
        if self.rss_budget_mb > 0 and outcome.get("rss_mb", 0) > self.rss_budget_mb:
            self.swollen = True

    def renew(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = self._fresh()
        self.submitted = 0
        self.renewals += 1
        self.swollen = False

    def submit(self, fn: Callable[..., dict[str, Any]], *args: Any) -> Future[dict[str, Any]]:
        self.submitted += 1
        return self.pool.submit(fn, *args)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _pool(options: BatchOptions) -> _Workers | None:
    workers = options.workers or os.cpu_count() or 1
    return _Workers(options) if workers > 1 else None


def _run_units(
    todo: list[BuildUnit],
    out: Path,
    options: BatchOptions,
    pool: _Workers | None,
    committer: _Committer,
    bar: Any,
) -> None:
    """Build the units, largest first (the long ones start early), committing each as it finishes."""
    task = bar.add_task("building services", total=len(todo))
    generator = committer.generator
    order = sorted(todo, key=lambda u: (-u.operations, u.name))
    if pool is None:
        for unit in order:
            bar.update(task, description=f"building {unit.name}")
            outcome = _build_unit(unit, str(out), options.verify, generator)
            committer.commit(unit, outcome)
            bar.advance(task)
        return
    workers = options.workers or os.cpu_count() or 1
    pending: dict[Future[dict[str, Any]], BuildUnit] = {}
    queue = deque(order)

    def top_up() -> None:
        while len(pending) < 2 * workers and queue:
            if pool.spent():  # recycle: let this pool's units finish, then start a fresh one
                if pending:
                    return
                pool.renew()
            unit = queue.popleft()
            pending[pool.submit(_build_unit, unit, str(out), options.verify, generator)] = unit

    top_up()
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            unit = pending.pop(future)
            try:
                outcome = future.result()
            except Exception as exc:  # a worker killed (out of memory...): the unit fails, the batch goes on
                outcome = {"ok": False, "error": f"worker died: {type(exc).__name__}: {exc}"}
            committer.stats.peak_worker_rss_mb = max(
                committer.stats.peak_worker_rss_mb, outcome.get("rss_mb", 0)
            )
            committer.stats.worker_cpu_s += outcome.get("cpu_s", 0.0)
            pool.observe(outcome)
            committer.commit(unit, outcome)
            bar.advance(task)
        top_up()


# -- the library files ------------------------------------------------------------------------------


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _dedupe_existing(out: Path, units: list[BuildUnit], committer: _Committer) -> None:
    """However the run went, of the folders holding one tool set only the smallest name stays."""
    for unit in sorted(units, key=lambda u: u.name):
        record = read_record(out / unit.name)
        if record is None:
            continue
        holder = committer.claim(unit, record.tool_signature)
        if holder is not None:
            discard_folder(out / unit.name)
            committer.stats.duplicates += 1
            committer.log(unit, "duplicate", duplicate_of=holder, signature=record.tool_signature)


def _prune(out: Path, planned: set[str], stats: RunStats) -> None:
    """Remove folders a corpus build made earlier that this plan no longer has (renamed, dropped)."""
    for record_path in sorted(out.glob(f"*/{RECORD_FILE}")):
        folder = record_path.parent
        if folder.name not in planned:
            discard_folder(folder)
            stats.removed += 1


def _report(out: Path, plan: Plan, committer: _Committer) -> BuildReport:
    report = BuildReport(documents=list(plan.outcomes))
    produced: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    for unit in plan.units:
        record = read_record(out / unit.name)
        label = unit.source + (f"#{unit.part}" if unit.part else "")
        if record is not None:
            report.services.append(ServiceBuildResult.model_validate(record.result))
            produced.setdefault(unit.source, []).append(unit.name)
            continue
        entry = committer.previous.get(unit.name, {})
        if entry.get("status") == "duplicate":
            produced.setdefault(unit.source, [])
            failed.setdefault(unit.source, []).append(
                f"{label}: same tool set as {entry.get('duplicate_of')}"
            )
        else:
            error = entry.get("error", "not built")
            report.failures.append(SpecFailure(spec_path=label, error=error))
            failed.setdefault(unit.source, []).append(f"{label}: {error}")
    for source in sorted({u.source for u in plan.units}):
        names = sorted(produced.get(source, []))
        problems = failed.get(source, [])
        if source in plan.split:
            reason = plan.split[source] + (f"; not built: {'; '.join(problems)[:500]}" if problems else "")
            report.documents.append(
                DocumentOutcome(source=source, status="split", reason=reason, services=names)
            )
        elif names:
            report.documents.append(DocumentOutcome(source=source, status="built", services=names))
        elif problems and all("same tool set as" in p for p in problems):
            report.documents.append(
                DocumentOutcome(source=source, status="skipped", reason=problems[0].split(": ", 1)[1])
            )
        else:
            report.documents.append(
                DocumentOutcome(source=source, status="failed", reason="; ".join(problems)[:500])
            )
    return report.finish()


def _index(out: Path, report: BuildReport) -> dict[str, Any]:
    """The library's catalog rows (``compoworld.catalog``): what ``up`` lists without loading a service."""
    try:
        previous = {r["name"]: r for r in json.loads((out / INDEX_FILE).read_text())["services"]}
    except (OSError, ValueError, KeyError, TypeError):
        previous = {}

    def identity(name: str) -> str | None:
        record = read_record(out / name)
        return f"{record.input_sha256}:{record.generator}" if record is not None else None

    parts = {s.name: s.part for s in report.services}
    sources = {s.name: s.spec_path for s in report.services}
    rows = index_rows(out, parts, previous, identity, sources)
    services = [r | {"part": parts.get(r["name"])} for r in rows]
    return {"services": services, "tools": report.tools, "implemented": report.implemented}


# -- entry point ------------------------------------------------------------------------------------


def build_corpus(
    root: Path,
    out: Path,
    options: BatchOptions | None = None,
    *,
    names: dict[str, str] | None = None,
    documents: list[tuple[Path, str]] | None = None,
    on_stats: Callable[[RunStats], None] | None = None,
) -> tuple[BuildReport, RunStats]:
    """Build every document under ``root`` (or the given ``documents``) into the library ``out``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    options = options or BatchOptions()
    out.mkdir(parents=True, exist_ok=True)
    state = out / STATE_DIR
    stats = RunStats()
    start, cpu_start = time.perf_counter(), _process_cpu()
    docs = documents if documents is not None else list_documents(root)
    stats.documents = len(docs)
    generator = generator_fingerprint()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with _locked(state), Progress(*columns, TimeRemainingColumn(), disable=not options.progress) as bar:
        for leftover in ("work", "trash"):
            shutil.rmtree(state / leftover, ignore_errors=True)
        pool = _pool(options)
        committer = _Committer(out, state, generator, stats)
        try:
            facts = _survey(docs, state, options, pool, bar, stats)
            plan = plan_units(facts, root, state / "parts", names)
            stats.units = len(plan.units)
            _dedupe_existing(out, plan.units, committer)
            todo = []
            for unit in plan.units:
                if _up_to_date(out, unit, generator) or committer.remembered(unit):
                    stats.up_to_date += 1
                else:
                    todo.append(unit)
            _run_units(todo, out, options, pool, committer, bar)
            _dedupe_existing(out, plan.units, committer)
            _prune(out, {u.name for u in plan.units}, stats)
            report = _report(out, plan, committer)
            _write_json(out / REPORT_FILE, report.model_dump(mode="json"))
            _write_json(out / INDEX_FILE, _index(out, report))
        finally:
            committer.close()
            if pool is not None:
                stats.pool_renewals = pool.renewals
                pool.shutdown()
    stats.wall_s = round(time.perf_counter() - start, 2)
    stats.worker_cpu_s = round(stats.worker_cpu_s, 2)
    stats.cpu_s = round(_process_cpu() - cpu_start + stats.worker_cpu_s, 2)
    _write_json(state / "last-run.json", asdict(stats))
    if on_stats is not None:
        on_stats(stats)
    return report, stats
