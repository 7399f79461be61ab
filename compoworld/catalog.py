"""What a library holds, without loading its services: one summary row per service folder.

Hosting thousands of services starts from this, not from the services: ``compoworld up``
lists ``/services`` from it and loads a service on first use, ``compoworld library stats``
prints it, and ``graph``/``tasks`` use :func:`load_manifests_skipping` to go on past a folder
that does not load. A corpus build writes the rows to ``<library>/index.json``
(:func:`index_rows`); :func:`read_catalog` uses that file while it is newer than every
manifest and names exactly the library's folders, and otherwise reads the manifests
themselves. A folder whose manifest cannot be read is *skipped* with the reason, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from compoworld.errors import LibraryError
from compoworld.manifest import ServiceManifest, library_folders, parse_manifest

__all__ = [
    "INDEX_FILE",
    "Catalog",
    "CatalogEntry",
    "SkippedFolder",
    "catalog_entry",
    "index_rows",
    "load_manifests_skipping",
    "read_catalog",
    "read_manifest",
]

log = logging.getLogger(__name__)

#: The library's index of services, written by a corpus build (``compoworld build --corpus``).
INDEX_FILE = "index.json"


class CatalogEntry(BaseModel):
    """One service of a library, as listed without loading it."""

    name: str = Field(description="Service name (its folder's name).")
    title: str = Field(default="", description="The service's title.")
    description: str = Field(default="", description="What it is for (first 300 characters).")
    domain: str = Field(default="general", description="The service's domain label (its vertical).")
    categories: list[str] = Field(default_factory=list, description="Source categories.")
    source: str | None = Field(default=None, description="The document it was built from, if known.")
    tools: int = Field(default=0, description="Number of tools.")
    implemented: int = Field(default=0, description="Tools served by CRUD on typed state.")
    actions: int = Field(default=0, description="Tools served as state transitions on typed state.")
    simulated: int = Field(default=0, description="Tools served by the world model.")
    verified: bool | None = Field(
        default=None, description="Whether every check passed (None: checks not run or no report)."
    )


class SkippedFolder(BaseModel):
    """A folder of the library that is not served, and why."""

    folder: str = Field(description="The folder.")
    reason: str = Field(description="Why it cannot be loaded.")


class Catalog(BaseModel):
    """Every service of a library folder, in name order, and the folders skipped."""

    path: str = Field(description="The library folder.")
    services: list[CatalogEntry] = Field(default_factory=list, description="Services, sorted by name.")
    skipped: list[SkippedFolder] = Field(default_factory=list, description="Folders that do not load.")
    from_index: bool = Field(default=False, description="Whether the rows came from index.json.")

    def names(self) -> list[str]:
        return [e.name for e in self.services]

    def entry(self, name: str) -> CatalogEntry | None:
        return next((e for e in self.services if e.name == name), None)

    def fingerprint(self) -> str:
        """A short hash of the rows: what a library version is when no manifest is loaded."""
        rows = [e.model_dump(mode="json") for e in self.services]
        return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


def read_manifest(folder: Path) -> ServiceManifest:
    """``folder/manifest.json``, checked to name its folder; ``LibraryError`` saying why not."""
    path = folder / "manifest.json"
    try:
        manifest = parse_manifest(path.read_bytes())
    except (OSError, ValueError, ValidationError) as exc:
        raise LibraryError(f"{path} is not a valid service manifest: {_short(exc)}") from exc
    if manifest.name != folder.name:
        raise LibraryError(
            f"{path} names the service {manifest.name!r} but lives in folder {folder.name!r}; "
            "the folder must carry the service's name"
        )
    return manifest


def _short(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _verified(folder: Path) -> bool | None:
    try:
        passed = json.loads((folder / "verify.json").read_text()).get("passed")
    except (OSError, ValueError, AttributeError):
        return None
    return passed if isinstance(passed, bool) else None


def catalog_entry(
    manifest: ServiceManifest, verified: bool | None, source: str | None = None
) -> CatalogEntry:
    """The catalog row of a loaded manifest."""
    backends = [t.backend for t in manifest.tools]
    return CatalogEntry(
        name=manifest.name,
        title=manifest.title,
        description=" ".join(manifest.description.split())[:300],
        domain=manifest.domain,
        categories=list(manifest.categories),
        source=source,
        tools=len(backends),
        implemented=backends.count("implemented"),
        actions=backends.count("action"),
        simulated=backends.count("simulated"),
        verified=verified,
    )


def load_manifests_skipping(
    library: Path, on_skip: Callable[[SkippedFolder], None] | None = None
) -> tuple[list[ServiceManifest], list[SkippedFolder]]:
    """Every manifest that reads, sorted by name, and the folders that do not (each with the reason)."""
    manifests: list[ServiceManifest] = []
    skipped: list[SkippedFolder] = []
    for folder in library_folders(library):
        try:
            manifests.append(read_manifest(folder))
        except LibraryError as exc:
            miss = SkippedFolder(folder=str(folder), reason=str(exc))
            skipped.append(miss)
            if on_skip is not None:
                on_skip(miss)
    return manifests, skipped


def _index_usable(library: Path, folders: list[Path]) -> list[CatalogEntry] | None:
    """The rows of ``index.json`` if it is newer than every manifest and lists exactly ``folders``."""
    path = library / INDEX_FILE
    try:
        stamp = path.stat().st_mtime_ns
        raw = json.loads(path.read_text())
        rows = [CatalogEntry.model_validate(r) for r in raw["services"]]
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None
    if sorted(r.name for r in rows) != [f.name for f in folders]:
        return None
    try:
        if any((f / "manifest.json").stat().st_mtime_ns > stamp for f in folders):
            return None
    except OSError:
        return None
    return sorted(rows, key=lambda r: r.name)


def read_catalog(library: Path, on_read: Callable[[str], None] | None = None) -> Catalog:
    """The catalog of ``library`` (``LibraryError`` only when the folder itself is missing).

    ``on_read`` hears each folder read when the manifests have to be read (progress bars).
    """
    folders = library_folders(library)
    rows = _index_usable(library, folders)
    if rows is not None:
        return Catalog(path=str(library), services=rows, from_index=True)
    services: list[CatalogEntry] = []
    skipped: list[SkippedFolder] = []
    for folder in folders:
        try:
            services.append(catalog_entry(read_manifest(folder), _verified(folder)))
        except LibraryError as exc:
            skipped.append(SkippedFolder(folder=str(folder), reason=str(exc)))
            log.warning("skipping %s: %s", folder, exc)
        if on_read is not None:
            on_read(folder.name)
    return Catalog(path=str(library), services=services, skipped=skipped)


def index_rows(
    library: Path,
    names: Iterable[str],
    previous: dict[str, dict[str, Any]],
    identity: Callable[[str], str | None],
    sources: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``index.json`` rows for ``names``: a previous row is reused while ``identity(name)`` (the
    folder's input hash and generator) is unchanged, so a no-op rebuild reads no manifest."""
    out: list[dict[str, Any]] = []
    for name in sorted(names):
        ident = identity(name)
        old = previous.get(name)
        if old is not None and ident is not None and old.get("identity") == ident:
            out.append(old)
            continue
        folder = library / name
        try:
            entry = catalog_entry(read_manifest(folder), _verified(folder), (sources or {}).get(name))
        except LibraryError as exc:  # the build commits only folders that load: say so if one does not
            log.warning("index: %s", exc)
            continue
        out.append(entry.model_dump(mode="json") | {"identity": ident})
    return out
