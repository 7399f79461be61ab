"""The library a generation run works on: its runtimes and the compact facts scenarios draw from.

Holding every ``ServiceRuntime`` of a large library at once costs memory in proportion to the library
(the whole corpus: ~9.5 GB before the first task), yet a task touches a handful of services. So
:func:`stream_library` reads each service folder once, in name order, while its runtime is loaded:
the world index takes its tables, column roles, tools by operation and the rows of the tables
scenarios read (``World.add``), the library hash its manifest, the term index its tool names, the
message tools their candidates, and its seed state is hashed (a distractor's guard needs only that).
Then the runtime is dropped. Runtimes come back on first use from a bounded ``ServicePool`` (least
recently used idle ones unloaded), so memory follows the services the tasks use.

:func:`eager_library` gives the same facts from runtimes already loaded (tests, the bench's
reference): both yield the same tasks, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from compoworld.catalog import Catalog, SkippedFolder, read_catalog
from compoworld.manifest import ServiceManifest
from compoworld.runtime.pool import ServicePool, each_service
from compoworld.runtime.service import ServiceRuntime
from compoworld.settings import Settings
from orchestrator.graph.build import LibraryHash, library_version
from orchestrator.rubric.seedcache import SeedCache
from orchestrator.tasks.scenario.messages import MessageTool, service_message_tools
from orchestrator.tasks.scenario.world import World
from orchestrator.tasks.seeds import SeedIndex

__all__ = [
    "MEMORY_MB",
    "RECENT_TABLES",
    "RESIDENT",
    "Manifests",
    "TaskLibrary",
    "eager_library",
    "stream_library",
]

#: runtimes a streamed library keeps loaded at most (services with a live fork are never unloaded) ...
RESIDENT = 1024
#: ... and the process RSS (MiB) past which idle ones are unloaded: the issue's 4 GiB less the caches
MEMORY_MB = 2560.0
#: ... but never below this many (the services a task and its solutions use stay loaded)
MIN_RESIDENT = 64
#: seed tables outside the world index whose rows are kept (the rest are read again when asked for)
RECENT_TABLES = 4096


class Manifests(Mapping[str, ServiceManifest]):
    """Service name -> manifest, read off the runtime when asked (never all held at once)."""

    def __init__(self, runtimes: Mapping[str, ServiceRuntime]) -> None:
        self.runtimes = runtimes

    def __getitem__(self, name: str) -> ServiceManifest:
        return self.runtimes[name].manifest

    def __iter__(self) -> Iterator[str]:
        return iter(self.runtimes)

    def __len__(self) -> int:
        return len(self.runtimes)

    def __contains__(self, name: object) -> bool:
        return name in self.runtimes


@dataclass
class TaskLibrary:
    """A library ready for task generation: its runtimes (loaded, or loaded on use) and what was indexed."""

    runtimes: Mapping[str, ServiceRuntime]
    world: World
    seeds: SeedIndex
    #: ``library_version`` of the manifests
    version: str
    #: every tool name and service name (what an instruction must never say)
    terms: list[str]
    #: seed state hash by service (empty: computed from the runtime when first asked)
    seed_hashes: dict[str, str]
    skipped: list[SkippedFolder]

    def names(self) -> list[str]:
        return sorted(self.runtimes)


def eager_library(runtimes: Mapping[str, ServiceRuntime]) -> TaskLibrary:
    """The facts of runtimes already loaded (every row kept, nothing hashed ahead)."""
    seeds = SeedIndex(runtimes)
    manifests = [r.manifest for r in runtimes.values()]
    terms = sorted({t.name for m in manifests for t in m.tools} | set(runtimes))
    return TaskLibrary(runtimes, World(runtimes, seeds), seeds, library_version(manifests), terms, {}, [])


def stream_library(
    root: Path,
    settings: Settings,
    *,
    resident: int = RESIDENT,
    memory_mb: float | None = MEMORY_MB,
    recent: int = RECENT_TABLES,
    on_skip: Callable[[SkippedFolder], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> TaskLibrary:
    """Index ``root`` one service at a time (module docstring); runtimes then load on first use.

    A folder that does not load is skipped with the reason (``on_skip`` hears each, as it is found),
    exactly as ``load_library_skipping`` skips it: the services are the same, so are the tasks.
    ``on_progress`` hears (services indexed, services in the catalog) after each one.
    """
    catalog = read_catalog(root)
    total = len(catalog.names())
    skipped: list[SkippedFolder] = []
    seeds = SeedIndex({}, recent=recent)
    world = World({}, seeds, index=False)
    version, terms, hashes = LibraryHash(), set[str](), dict[str, str]()
    messages: list[MessageTool] = []
    reported = 0
    for name, runtime in each_service(root, settings, skipped, catalog=catalog):
        world.add(runtime, compact=True)
        version.add(runtime.manifest)
        terms |= {t.name for t in runtime.manifest.tools}
        terms.add(name)
        messages += service_message_tools(name, runtime.manifest)
        hashes[name] = SeedCache().state_hash(runtime)
        reported = _report(skipped, reported, on_skip)
        if on_progress is not None:
            on_progress(len(hashes), total)
    _report(skipped, reported, on_skip)
    served = Catalog(
        path=catalog.path,
        services=[e for e in catalog.services if e.name in hashes],
        skipped=skipped,
        from_index=catalog.from_index,
    )
    pool = ServicePool(
        root,
        settings,
        catalog=served,
        max_resident=resident,
        memory_mb=memory_mb,
        min_resident=min(MIN_RESIDENT, resident),
    )
    pool.broken.clear()  # the skipped folders are not in it at all, as they are not in an eager library
    world.runtimes = seeds.runtimes = pool
    world.derived[("message_tools", "", "")] = messages
    world.finish()
    return TaskLibrary(pool, world, seeds, version.value(), sorted(terms), hashes, skipped)


def _report(
    skipped: list[SkippedFolder], reported: int, on_skip: Callable[[SkippedFolder], None] | None
) -> int:
    """Tell ``on_skip`` of the folders skipped since the last call; how many are told now."""
    if on_skip is not None:
        for miss in skipped[reported:]:
            on_skip(miss)
    return len(skipped)
