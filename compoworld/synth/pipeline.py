"""ServiceSpec -> ServiceManifest + seed rows: the whole synthesis step, without any I/O.

``overrides`` switches named tools to the simulated backend with a reason (a tool that failed
verification), so re-rendering a verified folder gives the same bytes as the build did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compoworld.manifest import ServiceManifest, ToolDef
from compoworld.specs.model import ServiceSpec
from compoworld.synth.classify import classify_tools
from compoworld.synth.domain import infer_domain
from compoworld.synth.entities import infer_entities
from compoworld.synth.seed import derive_seed, row_count, seed_rows

__all__ = ["GENERATOR_VERSION", "IMPLICIT_PARENT_ROWS", "Synthesis", "simulate", "synthesize"]

#: Bumped whenever the shape of synthesis output changes.
GENERATOR_VERSION = "1"
#: Seed rows of an entity that only appears as a path parameter (``/accounts/{accountId}/...``).
IMPLICIT_PARENT_ROWS = 3


@dataclass
class Synthesis:
    """What synthesis produces for one service."""

    manifest: ServiceManifest
    seed: dict[str, list[dict[str, Any]]]


def simulate(tool: ToolDef, reason: str) -> ToolDef:
    """The same tool served by the world model (bindings dropped, the spec's schemas kept)."""
    return tool.model_copy(
        update={
            "backend": "simulated",
            "simulated_reason": reason,
            "arg_columns": {},
            "pk_arg": None,
            "body_arg": None,
            "search_arg": None,
            "limit_arg": None,
            "offset_arg": None,
        }
    )


def synthesize(
    spec: ServiceSpec, name: str | None = None, overrides: dict[str, str] | None = None
) -> Synthesis:
    """Infer entities, classify and bind tools, and seed the state of one service."""
    service = name or spec.name
    inference = infer_entities(spec)
    tools = classify_tools(spec, inference)
    overrides = overrides or {}
    tools = [simulate(t, overrides[t.name]) if t.name in overrides else t for t in tools]
    used = {t.entity for t in tools if t.entity}
    counts = {
        e.name: row_count(service, e.name) if e.name in used else IMPLICIT_PARENT_ROWS
        for e in inference.entities
    }
    rows = seed_rows(service, inference.entities, counts)
    entities = [e.model_copy(update={"seed_rows": len(rows[e.table])}) for e in inference.entities]
    manifest = ServiceManifest(
        name=service,
        title=spec.title or service,
        description=spec.description,
        version=spec.version,
        source_kind=spec.source_kind,
        domain=infer_domain(service, spec.title, spec.categories),
        categories=list(spec.categories),
        entities=entities,
        tools=tools,
        seed=derive_seed(service, "seed") % (2**31),
        generator_version=GENERATOR_VERSION,
    )
    return Synthesis(manifest, rows)
