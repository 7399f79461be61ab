"""ServiceSpec -> ServiceManifest + seed rows: the whole synthesis step, without any I/O.

``overrides`` switches named tools to the simulated backend with a reason (a tool that failed
verification), so re-rendering a verified folder gives the same bytes as the build did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import EntityDef, ServiceManifest, ToolDef
from compoworld.specs.model import ServiceSpec
from compoworld.specs.semantic import value_tag
from compoworld.synth.classify import classify_tools
from compoworld.synth.domain import infer_domain
from compoworld.synth.entities import infer_entities
from compoworld.synth.seed import derive_seed, row_count, seed_data

__all__ = [
    "GENERATOR_VERSION",
    "IMPLICIT_PARENT_ROWS",
    "Synthesis",
    "simulate",
    "synthesize",
    "tool_enums",
    "with_overrides",
]

#: Bumped whenever the shape of synthesis output changes.
GENERATOR_VERSION = "1"
#: Seed rows of an entity that only appears as a path parameter (``/accounts/{accountId}/...``).
IMPLICIT_PARENT_ROWS = 3


@dataclass
class Synthesis:
    """What synthesis produces for one service."""

    manifest: ServiceManifest
    seed: dict[str, list[dict[str, Any]]]
    cast: dict[str, dict[str, Any]] = field(default_factory=dict)


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
            "action": None,
        }
    )


def synthesize(
    spec: ServiceSpec, name: str | None = None, overrides: dict[str, str] | None = None
) -> Synthesis:
    """Infer entities, classify and bind tools, and seed the state of one service."""
    service = name or spec.name
    inference = infer_entities(spec)
    tools = classify_tools(spec, inference)
    enums = tool_enums(tools)  # before overrides: the seed does not depend on what verification switched
    used = {t.entity for t in tools if t.entity}
    counts = {
        e.name: 1 if e.singleton else row_count(service, e.name) if e.name in used else IMPLICIT_PARENT_ROWS
        for e in inference.entities
    }
    domain = infer_domain(service, spec.title, spec.categories)
    keyed = [
        e.model_copy(update={"key_space": f"{service}.{e.name}", "key_kind": _key_kind(e)})
        for e in inference.entities
    ]
    data = seed_data(service, keyed, counts, domain=domain, enums=enums)
    roles = data.cast.get("roles", {})
    entities = [
        e.model_copy(update={"seed_rows": len(data.rows[e.table]), "population_role": roles.get(e.table)})
        for e in keyed
    ]
    manifest = ServiceManifest(
        name=service,
        title=spec.title or service,
        description=spec.description,
        version=spec.version,
        source_kind=spec.source_kind,
        domain=domain,
        categories=list(spec.categories),
        entities=entities,
        tools=tools,
        seed=derive_seed(service, "seed") % (2**31),
        generator_version=GENERATOR_VERSION,
    )
    return with_overrides(Synthesis(manifest, data.rows, data.cast), overrides or {})


def with_overrides(base: Synthesis, overrides: dict[str, str]) -> Synthesis:
    """``base`` (a synthesis without overrides) with the named tools switched to simulated.

    The seed does not depend on overrides (a simulated tool keeps its entity, and enums are read
    before), so a build re-applies them to its first synthesis instead of drawing the seed again.
    """
    if not overrides:
        return base
    tools = [simulate(t, overrides[t.name]) if t.name in overrides else t for t in base.manifest.tools]
    return Synthesis(base.manifest.model_copy(update={"tools": tools}), base.seed, base.cast)


_TYPED_KEYS = frozenset({"country", "currency", "language", "phone", "date", "date-time", "email", "url"})


def _key_kind(entity: EntityDef) -> str | None:
    """The typed kind of a key that is a value in its own right (``/countries/{country}``, a phone number)."""
    pk = entity.column(entity.pk)
    if pk is None or pk.type != "string":
        return None
    kind = value_tag(pk.source_name or pk.name, pk.json_schema, entity=entity.name)
    return kind if kind in _TYPED_KEYS else None


def tool_enums(tools: list[ToolDef]) -> dict[tuple[str, str], list[Any]]:
    """(entity, column) -> the enum a tool's argument declares for that column (a list filter's status)."""
    out: dict[tuple[str, str], list[Any]] = {}
    for tool in tools:
        props = tool.input_schema.get("properties") or {}
        for arg, column in tool.arg_columns.items():
            schema = props.get(arg) if isinstance(props, dict) else None
            if not isinstance(schema, dict) or tool.entity is None:
                continue
            items = schema.get("items") if schema.get("type") == "array" else None
            enum = (items if isinstance(items, dict) else schema).get("enum")
            if isinstance(enum, list) and enum and all(isinstance(v, (str, int, float)) for v in enum):
                merged = out.setdefault((tool.entity, column), [])
                merged.extend(v for v in enum if v not in merged)
    return out
