"""Names that containers and Kubernetes accept, derived from service names.

Service names are Python-style slugs (``google_calendar``); DNS names and
Kubernetes object names must be RFC 1123 labels: lower case, ``[a-z0-9-]``, at
most 63 characters. These functions are the single Python definition of that
mapping and are mirrored, character for character, by
``helm/compoworld/templates/_helpers.tpl`` (``compoworld.dnsSegment``,
``compoworld.fitName``); a test renders the chart and compares the two.
The real service name is never lost: it stays in command arguments, labels'
companion annotations and the orchestrator's URL map.
"""

from __future__ import annotations

import hashlib
import math
import re

from compoworld.errors import LibraryError

__all__ = [
    "DNS_LABEL_MAX",
    "dns_segment",
    "fit_name",
    "k8s_pack_name",
    "k8s_service_name",
    "pack_services",
]

DNS_LABEL_MAX = 63
_HASH_LEN = 8
_INVALID = re.compile(r"[^a-z0-9-]+")


def dns_segment(name: str) -> str:
    """Lower-case ``name`` and turn every run of characters outside ``[a-z0-9-]`` into ``-``."""
    segment = _INVALID.sub("-", name.lower()).strip("-")
    if not segment:
        raise LibraryError(f"service name {name!r} has no character usable in a DNS name")
    return segment


def fit_name(full: str, max_len: int = DNS_LABEL_MAX) -> str:
    """Return ``full`` if it fits, else its head plus ``-`` and 8 hex digits of its sha256.

    The hash keeps two long names that share a prefix distinct after truncation.
    """
    if len(full) <= max_len:
        return full
    head = full[: max_len - _HASH_LEN - 1].strip("-")
    return f"{head}-{hashlib.sha256(full.encode()).hexdigest()[:_HASH_LEN]}"


def k8s_service_name(fullname: str, service: str) -> str:
    """Name of the Deployment/Service running one service: ``<fullname>-svc-<service>``."""
    return fit_name(f"{fullname}-svc-{dns_segment(service)}")


def k8s_pack_name(fullname: str, index: int) -> str:
    """Name of the Deployment/Service running pack ``index``: ``<fullname>-pack-<index>``."""
    return fit_name(f"{fullname}-pack-{index}")


def pack_services(services: list[str], per_pod: int) -> list[list[str]]:
    """Split the sorted service names into ``ceil(len / per_pod)`` packs, in order.

    Mirrors the chart (``sortAlpha`` then ``chunk``). Adding a service can move
    later services to the next pack; a rollout follows, which is what a changed
    library needs anyway.
    """
    if per_pod < 1:
        raise ValueError(f"servicesPerPod must be at least 1, got {per_pod}")
    ordered = sorted(services)
    count = math.ceil(len(ordered) / per_pod)
    return [ordered[i * per_pod : (i + 1) * per_pod] for i in range(count)]
