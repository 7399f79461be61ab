"""Which documents of a corpus become services, under which names: a policy that can be explained.

Every document is first *surveyed* (hash, identity, version, operations, and the parts of a
huge one, see ``compoworld.synth.split``); then, in this order:

1. A document that cannot be read **fails**, with the reason.
2. An OpenAPI/Swagger document with no operations is **skipped** ("no operations").
3. Documents of one API family (same provider, same service name once a version suffix such
   as ``-v3``, ``v2``, ``-3.8`` or ``-beta`` is taken off) are ranked stable before prerelease,
   then newest first. The first is kept; each next one is **skipped** as superseded when the
   versions kept before it cover at least half of its operations (a quarter for a prerelease
   against a stable version), and kept otherwise (an older version with a different surface).
4. Names are provider-qualified and unique: the usual slug (``apideck_crm``) where it is
   unique, the full provider where two documents would share one (``bbc_co_uk``, ``bbc_com``),
   a number only as a last resort. A part of a split document is ``<name>_<part>``.

Identical tool sets are de-duplicated when the built services are committed (``batch``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compoworld.specs import read_document
from compoworld.specs.naming import service_slug, slugify
from compoworld.synth.reports import DocumentOutcome
from compoworld.synth.split import DEFAULT_MAX_TOOLS, count_operations, part_document, split_plan

__all__ = ["BuildUnit", "DocumentFacts", "PartFacts", "Plan", "plan_units", "survey_document"]

_SUFFIX = re.compile(
    r"(?i)(?:[-_.]?v?(?P<num>\d+(?:\.\d+)*)(?P<pre>[-_.]?(?:alpha|beta|preview)\d*)?|[-_.](?P<only>alpha|beta|preview)\d*)$"
)
_PRERELEASE = re.compile(r"(?i)alpha|beta|preview|rc\d|-dev")
_VERSION_SEGMENT = re.compile(r"(?i)^(v\d+[a-z0-9.]*|beta|alpha|\d+(\.\d+)+)$")
_STABLE_COVER = 0.5
_PRERELEASE_COVER = 0.25


@dataclass(frozen=True)
class PartFacts:
    """One part of a split document, staged as a document of its own (``path``: under the stage)."""

    key: str
    label: str
    operations: int
    path: str
    sha256: str


@dataclass(frozen=True)
class DocumentFacts:
    """What the survey learnt about one document."""

    rel: str
    sha256: str
    openapi: bool = False
    provider: str | None = None
    service: str | None = None
    version: str = ""
    title: str = ""
    operations: int | None = None
    op_keys: tuple[str, ...] = ()
    parts: tuple[PartFacts, ...] | None = None
    split_by: str = ""
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["parts"] = None if self.parts is None else [p.__dict__ for p in self.parts]
        out["op_keys"] = list(self.op_keys)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocumentFacts:
        parts = data.get("parts")
        return cls(
            **{
                **data,
                "op_keys": tuple(data.get("op_keys") or ()),
                "parts": None if parts is None else tuple(PartFacts(**p) for p in parts),
            }
        )


@dataclass(frozen=True)
class BuildUnit:
    """One service to build: its name, the document it is built from, and where that came from."""

    name: str
    source: str
    source_sha256: str
    input_path: str
    input_sha256: str
    part: str | None
    operations: int


@dataclass
class Plan:
    """The units to build and what happened to every other document."""

    units: list[BuildUnit] = field(default_factory=list)
    outcomes: list[DocumentOutcome] = field(default_factory=list)
    split: dict[str, str] = field(default_factory=dict)


def _op_key(method: str, path: str) -> str:
    segments = [s for s in path.split("/") if s and not _VERSION_SEGMENT.match(s)]
    return method + " /" + "/".join("{}" if s.startswith("{") else s.lower() for s in segments)


def survey_document(path: Path, rel: str, stage: Path, max_tools: int = DEFAULT_MAX_TOOLS) -> DocumentFacts:
    """Read one document; stage the parts of a huge one under ``stage`` (named by content hash)."""
    raw = path.read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    try:
        doc = read_document(path)
    except Exception as exc:  # any unreadable file is reported, never fatal to the survey
        return DocumentFacts(rel=rel, sha256=sha, error=f"cannot read the document: {exc}")
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        return DocumentFacts(rel=rel, sha256=sha)  # MCP / function lists: the ingester decides
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    keys = sorted(
        {
            _op_key(m, p)
            for p, item in doc["paths"].items()
            if isinstance(item, dict)
            for m in item
            if m in _METHODS
        }
    )
    parts = split_plan(doc, max_tools)
    staged: tuple[PartFacts, ...] | None = None
    if parts is not None:
        folder = stage / sha[:24]
        folder.mkdir(parents=True, exist_ok=True)
        items = []
        for part in parts:
            body = (
                json.dumps(part_document(doc, part, len(parts)), indent=1, ensure_ascii=False) + "\n"
            ).encode()
            target = folder / f"{part.key}.json"
            if not target.exists() or target.read_bytes() != body:
                tmp = target.with_suffix(".tmp")
                tmp.write_bytes(body)
                tmp.replace(target)
            staged_at = target.relative_to(stage).as_posix()
            items.append(
                PartFacts(
                    part.key, part.label, len(part.operations), staged_at, hashlib.sha256(body).hexdigest()
                )
            )
        staged = tuple(items)
    return DocumentFacts(
        rel=rel,
        sha256=sha,
        openapi=True,
        provider=_text(info.get("x-providerName")),
        service=_text(info.get("x-serviceName")),
        version=str(info.get("version") or ""),
        title=str(info.get("title") or ""),
        operations=count_operations(doc),
        op_keys=tuple(keys),
        parts=staged,
    )


_METHODS = frozenset({"get", "put", "post", "delete", "patch"})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _identity(facts: DocumentFacts) -> tuple[str, str]:
    """(provider, service) from the document's x-providerName/x-serviceName, else its path."""
    rel = Path(facts.rel)
    provider = facts.provider or (rel.parent.name if rel.parent.name else rel.stem)
    service = facts.service or (rel.stem if rel.parent.name else "")
    return provider, service


def _version(facts: DocumentFacts, suffixed_family: bool) -> tuple[bool, tuple[int, ...]]:
    """(is stable, version numbers): from the service name's suffix, else from info.version."""
    _, service = _identity(facts)
    found = _SUFFIX.search(service)
    prerelease = bool(_PRERELEASE.search(service if found else "")) or bool(_PRERELEASE.search(facts.version))
    if found and found.group("num"):
        numbers = tuple(int(n) for n in found.group("num").split("."))
    elif suffixed_family:  # the unsuffixed member of a family with numbered siblings is the first one
        numbers = (1,)
    else:
        numbers = tuple(int(n) for n in re.findall(r"\d+", facts.version)[:4])
    return not prerelease, numbers


def _family(facts: DocumentFacts) -> tuple[str, str]:
    provider, service = _identity(facts)
    return provider, _SUFFIX.sub("", service) if service else ""


def _supersede(members: list[DocumentFacts], outcomes: list[DocumentOutcome]) -> list[DocumentFacts]:
    """Keep the preferred version of an API family and any older one with a surface of its own."""
    suffixed = any(_SUFFIX.search(_identity(m)[1]) for m in members)
    ranked = sorted(members, key=lambda m: (_version(m, suffixed), m.rel), reverse=True)
    kept: list[DocumentFacts] = []
    covered: set[str] = set()
    stable_kept = False
    for member in ranked:
        stable, _ = _version(member, suffixed)
        ops = set(member.op_keys)
        share = len(ops & covered) / len(ops) if ops else 1.0
        limit = _STABLE_COVER if stable or not stable_kept else _PRERELEASE_COVER
        if kept and share >= limit:
            outcomes.append(
                DocumentOutcome(
                    source=member.rel,
                    status="skipped",
                    reason=f"superseded by {kept[0].rel} (a preferred version of the same API; "
                    f"the versions kept cover {share:.0%} of its operations)",
                )
            )
            continue
        kept.append(member)
        covered |= ops
        stable_kept = stable_kept or stable
    return kept


def _names(kept: list[DocumentFacts]) -> dict[str, str]:
    """rel -> provider-qualified unique service name."""
    first: dict[str, list[DocumentFacts]] = defaultdict(list)
    for facts in kept:
        provider, service = _identity(facts)
        first[
            service_slug(facts.rel, facts.title, provider if "." in provider else None, service or None)
        ].append(facts)
    names: dict[str, str] = {}
    taken: set[str] = set()
    for slug in sorted(first):
        group = sorted(first[slug], key=lambda f: f.rel)
        for facts in group:
            provider, service = _identity(facts)
            name = slug if len(group) == 1 else slugify(f"{provider}_{service}" if service else provider)
            base, n = name, 2
            while name in taken:
                name, n = f"{base}_{n}", n + 1
            taken.add(name)
            names[facts.rel] = name
    return names


def plan_units(
    facts: list[DocumentFacts], root: Path, stage: Path, names: dict[str, str] | None = None
) -> Plan:
    """Apply the policy (module docstring) to surveyed documents; ``names`` pins names by rel path.

    ``root`` is where the documents are, ``stage`` where the survey put the parts of split ones.
    """
    plan = Plan()
    readable: list[DocumentFacts] = []
    for doc in sorted(facts, key=lambda f: f.rel):
        if doc.error is not None:
            plan.outcomes.append(DocumentOutcome(source=doc.rel, status="failed", reason=doc.error))
        elif doc.openapi and not doc.operations:
            plan.outcomes.append(DocumentOutcome(source=doc.rel, status="skipped", reason="no operations"))
        else:
            readable.append(doc)
    families: dict[tuple[str, str], list[DocumentFacts]] = defaultdict(list)
    for doc in readable:
        families[_family(doc) if doc.openapi and not names else ("", doc.rel)].append(doc)
    kept = sorted(
        (k for members in families.values() for k in _supersede(members, plan.outcomes)), key=lambda f: f.rel
    )
    chosen = {**_names(kept), **(names or {})}
    taken = set(chosen.values())
    for doc in kept:
        name = chosen[doc.rel]
        if doc.parts is None:
            path = str(root / doc.rel)
            plan.units.append(
                BuildUnit(name, doc.rel, doc.sha256, path, doc.sha256, None, doc.operations or 0)
            )
            continue
        plan.split[doc.rel] = f"{doc.operations} operations: split into {len(doc.parts)} parts"
        for part in doc.parts:
            part_name = slugify(f"{name}_{part.key}")
            base, n = part_name, 2
            while part_name in taken:
                part_name, n = f"{base}_{n}", n + 1
            taken.add(part_name)
            plan.units.append(
                BuildUnit(
                    part_name,
                    doc.rel,
                    doc.sha256,
                    str(stage / part.path),
                    part.sha256,
                    part.key,
                    part.operations,
                )
            )
    return plan
