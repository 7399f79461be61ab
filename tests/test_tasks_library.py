"""A library indexed one service at a time, runtimes loaded on first use: the same tasks, bounded memory.

Real service folders and real SQLite throughout: the hand-built 4-service library and the starter
library, generated from the runtimes all loaded and from ``stream_library`` with a pool and a seed
cache far smaller than the library (so services are unloaded and loaded again mid-run).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from compoworld.catalog import SkippedFolder
from compoworld.runtime.pool import ServicePool, load_library_skipping
from compoworld.settings import Settings
from orchestrator.models import Task
from orchestrator.tasks.generate import GenerateOptions, TaskGenerator
from orchestrator.tasks.library import TaskLibrary, eager_library, stream_library
from tests.tasks_library import write_library

ROOT = Path(__file__).resolve().parent.parent
STARTER = ROOT / "generated_services"


def _settings(root: Path) -> Settings:
    return Settings(library=root, llm_base_url=None)


def _tasks(library: TaskLibrary, n: int, seed: int) -> list[str]:
    tasks, _ = asyncio.run(TaskGenerator(library, GenerateOptions(n=n, seed=seed)).run())
    return [t.model_dump_json() for t in tasks]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_library(tmp_path_factory.mktemp("lib"))


def _eager(root: Path) -> TaskLibrary:
    runtimes, skipped = load_library_skipping(root, _settings(root))
    assert not skipped
    return eager_library(runtimes)


def test_a_streamed_library_gives_the_tasks_of_the_loaded_one_byte_for_byte(small: Path) -> None:
    eager = _tasks(_eager(small), 12, 3)
    streamed = stream_library(small, _settings(small), resident=1, memory_mb=None, recent=1)
    assert _tasks(streamed, 12, 3) == eager and len(eager) == 12
    pool = streamed.runtimes
    assert isinstance(pool, ServicePool)
    assert pool.stats.evictions > 0  # the bound was hit: services were unloaded and loaded again


@pytest.mark.slow  # ~10 s: the starter's services are large, and a small pool loads them many times
@pytest.mark.skipif(not any(STARTER.glob("*/manifest.json")), reason="no starter library")
def test_the_starter_library_streamed_with_a_small_pool_gives_the_same_tasks() -> None:
    eager = _tasks(_eager(STARTER), 5, 7)
    streamed = stream_library(STARTER, _settings(STARTER), resident=14, memory_mb=None, recent=16)
    assert _tasks(streamed, 5, 7) == eager
    assert isinstance(streamed.runtimes, ServicePool) and streamed.runtimes.stats.evictions > 0
    assert all(Task.model_validate_json(line).meta.library_version for line in eager)


def test_the_index_keeps_only_what_scenarios_reach_and_the_pool_stays_within_its_bound(small: Path) -> None:
    eager, streamed = _eager(small), stream_library(small, _settings(small), resident=2, memory_mb=None)
    assert streamed.version == eager.version and streamed.terms == eager.terms
    assert streamed.world.people.keys() == eager.world.people.keys()
    assert set(streamed.world.tables) <= set(eager.world.tables)
    assert streamed.seed_hashes == {n: r.state_hash(None) for n, r in eager.runtimes.items()}
    pool = streamed.runtimes
    assert isinstance(pool, ServicePool) and pool.resident() == []  # nothing held after indexing
    kept = streamed.seeds.kept()
    assert kept < len(eager.seeds._rows)  # rows only of the tables scenarios read rows of
    for name in sorted(pool):
        pool[name]
        assert len(pool.resident()) <= 2
    before = pool.stats.evictions
    _tasks(streamed, 4, 1)  # a service with a live fork is never unloaded (the bound may be passed mid-task)
    assert pool.stats.evictions > before
    assert all(pool.unload(name) for name in pool.resident())  # but every fork is closed after it


def test_a_folder_that_fails_to_load_is_skipped_by_name_and_the_rest_still_make_tasks(
    small: Path, tmp_path: Path
) -> None:
    root = tmp_path / "lib"
    shutil.copytree(small, root)
    (root / "billing" / "seed.json").write_text("{not json")
    heard: list[SkippedFolder] = []
    progress: list[tuple[int, int]] = []
    streamed = stream_library(
        root, _settings(root), on_skip=heard.append, on_progress=lambda *seen: progress.append(seen)
    )
    assert [Path(m.folder).name for m in heard] == ["billing"] and "billing" in heard[0].folder
    folders = len([p for p in root.iterdir() if (p / "manifest.json").is_file()])
    # a count per service indexed, against every folder of the catalog (the broken one included)
    assert progress == [(i, folders) for i in range(1, folders)]
    assert heard == streamed.skipped
    assert "billing" not in streamed.runtimes and "crm" in streamed.runtimes
    runtimes, skipped = load_library_skipping(root, _settings(root))
    assert [Path(m.folder).name for m in skipped] == ["billing"]
    assert _tasks(streamed, 4, 2) == _tasks(eager_library(runtimes), 4, 2)


def test_a_memory_budget_the_process_is_over_unloads_idle_services_but_never_below_the_floor(
    small: Path,
) -> None:
    pool = ServicePool(small, _settings(small), max_resident=10, memory_mb=1.0, min_resident=2)
    for name in sorted(pool):
        pool[name]
        assert len(pool.resident()) >= min(2, pool.stats.loads)
    assert pool.stats.evictions > 0 and len(pool.resident()) < len(pool)
