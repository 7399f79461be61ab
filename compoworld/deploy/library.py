"""Read a service library the way every deployment file generator needs it.

A library is a folder of ``<svc>/manifest.json`` files (DESIGN: services are found
by scanning folders). Deployment files only need the names, but each manifest is
validated with :class:`~compoworld.manifest.ServiceManifest` so a broken library
fails here, with the file named, instead of inside a container at start-up.
"""

from __future__ import annotations

from pathlib import Path

from compoworld.deploy.naming import dns_segment
from compoworld.errors import LibraryError
from compoworld.manifest import load_manifests

__all__ = ["RESERVED_NAMES", "check_names", "scan_library"]

# DNS names the deployment files use for their own containers.
RESERVED_NAMES: frozenset[str] = frozenset({"orchestrator", "redis"})


def scan_library(library: Path) -> list[str]:
    """Return the sorted service names of ``library/*/manifest.json``.

    Raises :class:`LibraryError` when the folder is missing, a manifest does not
    validate, a manifest's name differs from its folder's, or two names map to the
    same DNS name.
    """
    names = [m.name for m in load_manifests(library)]
    check_names(names)
    return sorted(names)


def check_names(names: list[str]) -> None:
    """Reject names that collide once turned into DNS names, or take a reserved one."""
    seen: dict[str, str] = {}
    for name in sorted(names):
        segment = dns_segment(name)
        if segment in RESERVED_NAMES:
            raise LibraryError(f"service name {name!r} is reserved for the deployment's own {segment!r}")
        if segment in seen:
            raise LibraryError(
                f"services {seen[segment]!r} and {name!r} both map to the DNS name {segment!r}; rename one"
            )
        seen[segment] = name
