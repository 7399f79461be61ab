"""Corpus builds: reports every document, skips what is unchanged, resumes after a kill to the same bytes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth import verify as verify_module
from compoworld.synth.batch import INDEX_FILE, REPORT_FILE, BatchOptions, build_corpus
from compoworld.synth.build import BuildError, build_service
from compoworld.synth.provenance import read_record

ROOT = Path(__file__).resolve().parent.parent


def _api(title: str, provider: str, service: str | None, resource: str, version: str = "1") -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {"id": {"type": "integer", "readOnly": True}, "name": {"type": "string"}},
    }
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": item}}}}
    key = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
    info: dict[str, Any] = {"title": title, "version": version, "x-providerName": provider}
    if service:
        info["x-serviceName"] = service
    return {
        "openapi": "3.0.0",
        "info": info,
        "paths": {
            f"/{resource}": {
                "post": {
                    "operationId": f"create_{resource}",
                    "requestBody": {"content": {"application/json": {"schema": item}}},
                    "responses": ok,
                }
            },
            f"/{resource}/{{id}}": {
                "get": {"operationId": f"get_{resource}", "parameters": [key], "responses": ok}
            },
        },
    }


def _corpus(root: Path) -> Path:
    docs = {
        "shop.com/orders.json": _api("Orders", "shop.com", "orders", "orders"),
        "shop.com/orders-copy.json": _api("Orders mirror", "shop.com", "orders-copy", "orders"),  # same tools
        "zoo.org.json": _api("Zoo", "zoo.org", None, "animals"),
        "hats.io/hats-1.json": _api("Hats", "hats.io", "hats-1", "hats"),
        "hats.io/hats-2.json": _api("Hats", "hats.io", "hats-2", "hats", version="2"),  # supersedes hats-1
        "void.net.json": {"openapi": "3.0.0", "info": {"title": "Void", "version": "1"}, "paths": {}},
    }
    for rel, doc in docs.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=1))
    return root


def _tree(library: Path) -> dict[str, str]:
    return {
        p.relative_to(library).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(library.rglob("*"))
        if p.is_file() and ".build" not in p.relative_to(library).parts
    }


def test_a_corpus_build_reports_every_document_and_a_rebuild_changes_nothing(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    library = tmp_path / "lib"
    options = BatchOptions(workers=1, progress=False)
    report, stats = build_corpus(corpus, library, options)
    statuses = {d.source: (d.status, d.reason) for d in report.documents}
    assert statuses["shop.com/orders.json"][0] == "built"
    assert statuses["shop.com/orders-copy.json"] == ("skipped", "same tool set as shop_orders")
    assert (
        statuses["hats.io/hats-1.json"][0] == "skipped"
        and "superseded by hats.io/hats-2.json" in statuses["hats.io/hats-1.json"][1]
    )
    assert statuses["void.net.json"] == ("skipped", "no operations")
    assert sorted(s.name for s in report.services) == ["hats_2", "shop_orders", "zoo"]
    index = json.loads((library / INDEX_FILE).read_text())
    assert [s["name"] for s in index["services"]] == ["hats_2", "shop_orders", "zoo"]
    record = read_record(library / "zoo")
    assert record is not None and record.source == "zoo.org.json" and record.result["verified"] is True
    before = _tree(library)
    again, rerun = build_corpus(corpus, library, options)
    assert (rerun.built, rerun.up_to_date) == (0, stats.units)
    assert _tree(library) == before
    assert again == report


def test_a_changed_document_is_rebuilt_and_only_it(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    library = tmp_path / "lib"
    options = BatchOptions(workers=1, progress=False)
    build_corpus(corpus, library, options)
    doc = json.loads((corpus / "zoo.org.json").read_text())
    doc["info"]["description"] = "Now with a description."
    (corpus / "zoo.org.json").write_text(json.dumps(doc))
    _, stats = build_corpus(corpus, library, options)
    assert stats.built == 1
    assert "Now with a description." in (library / "zoo" / "manifest.json").read_text()


def test_a_killed_build_resumes_to_the_same_library(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    reference = tmp_path / "reference"
    build_corpus(corpus, reference, BatchOptions(workers=1, progress=False))
    library = tmp_path / "lib"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable,
        "-m",
        "compoworld.cli",
        "build",
        "--corpus",
        str(corpus),
        "--out",
        str(library),
    ]
    command += ["--workers", "1", "-q"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = library / ".build" / "journal.jsonl"
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count("\n") >= 1:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    proc.wait()
    assert not (library / REPORT_FILE).exists(), "the build finished before it could be killed"
    _report, stats = build_corpus(corpus, library, BatchOptions(workers=1, progress=False))
    assert stats.up_to_date >= 1
    assert _tree(library) == _tree(reference)


def test_a_folder_built_from_another_document_is_never_overwritten(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    fields = {"source_sha256": "x", "input_sha256": "x", "part": None, "generator": "g"}
    build_service(
        corpus / "zoo.org.json", tmp_path / "lib", "zoo", record={"source": "zoo.org.json", **fields}
    )
    with pytest.raises(BuildError, match=r"holds the service built from zoo\.org\.json"):
        build_service(
            corpus / "shop.com/orders.json",
            tmp_path / "lib",
            "zoo",
            record={"source": "orders.json", **fields},
        )
    assert "animals" in (tmp_path / "lib" / "zoo" / "manifest.json").read_text()


def test_a_check_that_crashes_the_verifier_makes_its_tool_simulated_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = verify_module._Checker._check_implemented

    async def crash_on_get(self: Any, tool: Any, checks: list[str]) -> None:
        if tool.name == "get_animals":
            raise KeyError("boom")
        await original(self, tool, checks)

    monkeypatch.setattr(verify_module._Checker, "_check_implemented", crash_on_get)
    result = build_service(_corpus(tmp_path / "corpus") / "zoo.org.json", tmp_path / "lib", "zoo")
    assert result.switched_to_simulated == {"get_animals": "verifier crashed: KeyError: 'boom'"}
    assert result.verified is True
    tool = ServiceRuntime.from_folder(tmp_path / "lib" / "zoo", Settings()).manifest.tool("get_animals")
    assert tool is not None and tool.backend == "simulated"
    assert tool.simulated_reason == "verification failed: verifier crashed: KeyError: 'boom'"


def test_a_crash_of_the_whole_verifier_simulates_every_implemented_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = verify_module.verify_round
    calls = []

    async def crash_once(runtime: Any, rebuilt: Any = None, kept: Any = None) -> Any:
        calls.append(runtime.name)
        if len(calls) == 1:
            raise RuntimeError("checker exploded")
        return await original(runtime, rebuilt, kept)

    monkeypatch.setattr(verify_module, "verify_round", crash_once)
    result = build_service(_corpus(tmp_path / "corpus") / "zoo.org.json", tmp_path / "lib", "zoo")
    reason = "verifier crashed: RuntimeError: checker exploded"
    assert result.switched_to_simulated == {"create_animals": reason, "get_animals": reason}
    assert result.errors == [reason] and result.implemented == 0


def test_a_service_that_does_not_load_is_reported_failed_and_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from compoworld.runtime import state

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.IntegrityError("UNIQUE constraint failed: animal.name")

    monkeypatch.setattr(state.StateStore, "_build_seed", refuse)
    report, stats = build_corpus(
        _corpus(tmp_path / "corpus"), tmp_path / "lib", BatchOptions(workers=1, progress=False)
    )
    assert report.services == [] and stats.failed == 4
    zoo = next(d for d in report.documents if d.source == "zoo.org.json")
    assert zoo.status == "failed" and "does not load" in zoo.reason and "UNIQUE constraint" in zoo.reason
    assert not (tmp_path / "lib" / "zoo").exists()


def test_building_leaves_no_runtime_in_fastapis_handler_caches(tmp_path: Path) -> None:
    from fastapi.dependencies import models

    build_service(_corpus(tmp_path / "corpus") / "zoo.org.json", tmp_path / "lib", "zoo")
    caches = [v for v in vars(models).values() if callable(getattr(v, "cache_info", None))]
    assert caches and all(c.cache_info().currsize == 0 for c in caches)


def test_a_parallel_build_gives_the_same_library_as_a_sequential_one(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    build_corpus(corpus, tmp_path / "one", BatchOptions(workers=1, progress=False))
    _, stats = build_corpus(corpus, tmp_path / "two", BatchOptions(workers=2, recycle=1, progress=False))
    assert stats.built == 3 and stats.worker_cpu_s > 0
    assert _tree(tmp_path / "two") == _tree(tmp_path / "one")


def _double(x: int) -> dict[str, int]:
    return {"x": 2 * x}


@pytest.mark.timeout(120)
def test_recycled_build_workers_never_hang_and_answer_every_unit() -> None:
    """A fresh pool every ``recycle`` units per worker (CPython 3.11's max_tasks_per_child can hang)."""
    from compoworld.synth.batch import _Workers

    workers = _Workers(BatchOptions(workers=2, recycle=1, progress=False))
    answers: list[int] = []
    pools: list[object] = []  # the pools themselves: a freed pool's id() can be reused by the next
    try:
        for i in range(6):
            if workers.spent():
                workers.renew()
            if not any(p is workers.pool for p in pools):
                pools.append(workers.pool)
            answers.append(workers.submit(_double, i).result(timeout=60)["x"])
    finally:
        workers.shutdown()
    assert answers == [0, 2, 4, 6, 8, 10] and len(pools) == 3


def _peak_rss(_: int) -> dict[str, float]:
    import resource

    return {"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


@pytest.mark.timeout(120)
def test_a_worker_past_the_rss_budget_retires_its_pool() -> None:
    from compoworld.synth.batch import _Workers

    for budget, renewed in ((1.0, True), (0.0, False), (1e9, False)):
        workers = _Workers(BatchOptions(workers=2, recycle=100, recycle_rss_mb=budget, progress=False))
        try:
            first = workers.pool
            workers.observe(workers.submit(_peak_rss, 0).result(timeout=60))
            assert workers.spent() is renewed
            if workers.spent():
                workers.renew()
            assert (workers.pool is not first) is renewed and workers.renewals == int(renewed)
            assert not workers.spent()
        finally:
            workers.shutdown()


def test_a_build_that_recycles_by_rss_gives_the_same_library(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    for i in range(6):  # more units than the pool takes at once, so a retired pool is replaced
        (corpus / f"extra{i}.org.json").write_text(
            json.dumps(_api(f"Extra {i}", f"extra{i}.org", None, f"r{i}"))
        )
    build_corpus(corpus, tmp_path / "one", BatchOptions(workers=1, progress=False))
    options = BatchOptions(workers=2, recycle=100, recycle_rss_mb=1.0, progress=False)
    _, stats = build_corpus(corpus, tmp_path / "two", options)
    assert stats.pool_renewals >= 1
    assert _tree(tmp_path / "two") == _tree(tmp_path / "one")


def test_a_folder_dropped_mid_delete_never_passes_for_up_to_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill while a pruned folder is deleted leaves no half folder with its build.json in the library."""
    import shutil

    from compoworld.synth import build as build_module

    corpus = _corpus(tmp_path / "corpus")
    library = tmp_path / "lib"
    build_corpus(corpus, library, BatchOptions(workers=1, progress=False))
    (corpus / "zoo.org.json").unlink()
    real_rmtree = shutil.rmtree

    def killed_mid_delete(path: Any, *args: Any, **kwargs: Any) -> None:
        path = Path(path)
        if (path.name == "zoo" or path.name.startswith("zoo.")) and path.exists():
            (path / "manifest.json").unlink()  # part of it is gone, build.json is not
            raise KeyboardInterrupt
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(build_module.shutil, "rmtree", killed_mid_delete)
    with pytest.raises(KeyboardInterrupt):
        build_corpus(corpus, library, BatchOptions(workers=1, progress=False))
    monkeypatch.undo()
    assert not (library / "zoo").exists() and read_record(library / "zoo") is None
    report, _ = build_corpus(corpus, library, BatchOptions(workers=1, progress=False))
    assert not (library / ".build" / "trash").exists() or not any((library / ".build" / "trash").iterdir())
    names = [s["name"] for s in json.loads((library / INDEX_FILE).read_text())["services"]]
    assert names == sorted(s.name for s in report.services) == ["hats_2", "shop_orders"]
