"""A library's services loaded on first use, and unloaded when idle under a memory budget.

``ServicePool`` is a read-only mapping name -> ``ServiceRuntime`` over a library's catalog: the
names are known at once (``compoworld.catalog``), a runtime is built the first time it is asked
for, and once more services are resident than ``max_resident`` (or the process is over
``memory_mb``) the least recently used ones *with no live episode* are dropped, together with
whatever was attached to them (their HTTP app, seed caches). A folder that fails to load is
remembered as broken with the reason and reported, never retried in a loop and never fatal.
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from compoworld.catalog import Catalog, SkippedFolder, read_catalog
from compoworld.errors import ServiceUnavailable
from compoworld.llm import LLMClient
from compoworld.runtime.service import ServiceRuntime
from compoworld.settings import Settings

__all__ = ["MEMORY_STEP", "PoolStats", "ServicePool", "each_service", "load_library_skipping", "rss_mb"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: how far (a share of the budget) RSS must grow past the last unload for memory before the next one
MEMORY_STEP = 1 / 16


def rss_mb() -> float:
    """This process's resident memory in MiB (Linux ``/proc``; peak RSS elsewhere)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class PoolStats:
    """Counters of a pool (for ``/health`` and the benchmark)."""

    def __init__(self) -> None:
        self.loads = 0
        self.evictions = 0
        self.load_s = 0.0


class ServicePool(Mapping[str, ServiceRuntime]):
    """Runtimes of a library, built on first use; see the module docstring."""

    def __init__(
        self,
        library: Path,
        settings: Settings,
        llm: LLMClient | None = None,
        *,
        catalog: Catalog | None = None,
        max_resident: int = 256,
        memory_mb: float | None = None,
        min_resident: int = 0,
    ) -> None:
        """``min_resident``: the memory budget never unloads below this many (RSS that is not the
        pool's, caches say, would otherwise unload the services in use over and over)."""
        self.library = library
        self.settings = settings
        self.llm = llm
        self.catalog = catalog or read_catalog(library)
        self.max_resident = max(1, max_resident)
        self.memory_mb = memory_mb
        self.min_resident = max(0, min_resident)
        self.stats = PoolStats()
        #: name -> why it is not served: folders the catalog skipped and services that failed to load
        self.broken: dict[str, str] = {Path(m.folder).name: m.reason for m in self.catalog.skipped}
        self._names = set(self.catalog.names())
        self._resident: OrderedDict[str, ServiceRuntime] = OrderedDict()
        self._attached: dict[str, dict[str, Any]] = {}
        #: RSS (MiB) when the memory budget last unloaded services
        self._shrunk_at = 0.0

    # -- the mapping ------------------------------------------------------------------

    def __iter__(self) -> Iterator[str]:
        return iter(self.catalog.names())

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> ServiceRuntime:
        runtime = self._resident.get(name)
        if runtime is not None:
            self._resident.move_to_end(name)
            return runtime
        if name not in self._names:
            raise KeyError(name)
        return self._load(name)

    def load(self, name: str) -> ServiceRuntime:
        """The runtime of ``name``; ``ServiceUnavailable`` (with the reason) for a folder that fails."""
        return self[name]

    def resident(self) -> list[str]:
        """Names loaded now, least recently used first."""
        return list(self._resident)

    def is_resident(self, name: str) -> bool:
        return name in self._resident

    # -- loading and unloading ----------------------------------------------------------

    def _load(self, name: str) -> ServiceRuntime:
        reason = self.broken.get(name)
        if reason is not None:
            raise ServiceUnavailable(name, reason)
        start = time.perf_counter()
        try:
            runtime = ServiceRuntime.from_folder(self.library / name, self.settings, self.llm)
        except Exception as exc:  # any folder that does not load: named, remembered, reported
            reason = f"{self.library / name} does not load: {type(exc).__name__}: {exc}"[:500]
            self.broken[name] = reason
            log.warning("skipping service %s", reason)
            raise ServiceUnavailable(name, reason) from exc
        self.stats.loads += 1
        self.stats.load_s += time.perf_counter() - start
        self._resident[name] = runtime
        self._shrink(keep=name)
        return runtime

    def _idle(self, name: str) -> bool:
        return not self._resident[name].store.episodes

    def _shrink(self, keep: str) -> None:
        """Unload least recently used idle services while over the count or memory budget.

        RSS falls slowly, if at all (freed memory is mostly kept by the allocator for the next loads), so
        an unload for memory makes room in one go, and the next waits until RSS has grown by
        ``MEMORY_STEP`` of the budget past the level that triggered it: a process that cannot get back
        under the budget unloaded a quarter of the pool on every load otherwise (the whole corpus's
        task generation: 1,401 unloads in 1,465 loads)."""
        over = len(self._resident) - self.max_resident
        if self.memory_mb is not None and len(self._resident) > self.min_resident:
            rss = rss_mb()
            if rss > max(self.memory_mb, self._shrunk_at + MEMORY_STEP * self.memory_mb):
                room = min(max(1, len(self._resident) // 4), len(self._resident) - self.min_resident)
                if room > max(over, 0):
                    self._shrunk_at, over = rss, room
        for name in list(self._resident):
            if over <= 0:
                break
            if name != keep and self._idle(name):
                self.unload(name)
                over -= 1

    def unload(self, name: str) -> bool:
        """Drop a resident service (and what was attached to it); False if it has live episodes."""
        runtime = self._resident.get(name)
        if runtime is None or runtime.store.episodes:
            return False
        del self._resident[name]
        self._attached.pop(name, None)
        self.stats.evictions += 1
        return True

    def attached(self, name: str, key: str, make: Callable[[ServiceRuntime], T]) -> T:
        """Something built from a service's runtime (its app, a cache), dropped when it is unloaded."""
        runtime = self[name]
        slot = self._attached.setdefault(name, {})
        if key not in slot:
            slot[key] = make(runtime)
        value: T = slot[key]
        return value


def each_service(
    library: Path,
    settings: Settings,
    skipped: list[SkippedFolder],
    llm: LLMClient | None = None,
    catalog: Catalog | None = None,
) -> Iterator[tuple[str, ServiceRuntime]]:
    """Every service of ``library`` that loads (name, runtime), one at a time in name order; each folder that does not is
    appended to ``skipped`` with why (the catalog's skipped folders first). A caller that drops each
    runtime before the next holds one service at a time."""
    catalog = catalog or read_catalog(library)
    skipped += catalog.skipped
    for name in catalog.names():
        folder = library / name
        try:
            runtime = ServiceRuntime.from_folder(folder, settings, llm)
        except Exception as exc:
            skipped.append(SkippedFolder(folder=str(folder), reason=f"{type(exc).__name__}: {exc}"[:500]))
            log.warning("skipping %s: %s", folder, exc)
            continue
        yield name, runtime


def load_library_skipping(
    library: Path,
    settings: Settings,
    llm: LLMClient | None = None,
    on_loaded: Callable[[str], None] | None = None,
) -> tuple[dict[str, ServiceRuntime], list[SkippedFolder]]:
    """Every service of ``library`` that loads, sorted by name, and each folder that does not with why.

    For the commands that need the whole library resident (``up --preload``, ``tasks check``): one bad
    folder costs its own service, never the run.
    """
    skipped: list[SkippedFolder] = []
    runtimes: dict[str, ServiceRuntime] = {}
    for name, runtime in each_service(library, settings, skipped, llm):
        runtimes[name] = runtime
        if on_loaded is not None:
            on_loaded(name)
    return runtimes, skipped
