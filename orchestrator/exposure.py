"""How an episode's tools are shown to an agent, and how an agent's call is routed back.

``direct``: every tool of the mounted services as an OpenAI function named ``<svc>__<tool>``.
``gateway``: only the four published meta-tools (``list_services``, ``list_tools``,
``describe_tool``, ``call_tool``) over the mounted services; a tool is named by its own name,
or ``<svc>__<tool>`` where two mounted services share a name (as the published gateway did).
``mcp``: the direct tool set, served over MCP. The seed orders services and tools.
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from compoworld.contracts import ToolResult
from orchestrator.arguments import parse_arguments
from orchestrator.gateway import meta_tool_schemas
from orchestrator.naming import MAX_NAME, direct_name

__all__ = [
    "DirectExposure",
    "Exposure",
    "ExposurePlan",
    "GatewayExposure",
    "MetaAnswer",
    "Resolution",
    "Route",
    "ToolRef",
    "build_exposure",
    "exposure_from_plan",
    "tool_refs",
]


@dataclass(frozen=True)
class ToolRef:
    """One real tool of one service, with its agent-facing direct name and schema."""

    service: str
    tool: str
    name: str
    description: str
    parameters: dict[str, Any]
    schema: dict[str, Any]


def tool_refs(service: str, annotated: list[dict[str, Any]]) -> list[ToolRef]:
    """Direct-mode refs of a service from its ``GET /tools`` schemas (x- annotations dropped)."""
    refs: list[ToolRef] = []
    for entry in annotated:
        fn = entry["function"]
        tool, description = str(fn["name"]), str(fn.get("description") or "")
        parameters = fn.get("parameters") or {"type": "object", "properties": {}}
        name = direct_name(service, tool)
        schema = {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters},
        }
        refs.append(ToolRef(service, tool, name, description, parameters, schema))
    return refs


@dataclass(frozen=True, slots=True)
class Route:
    """A call that goes to a real tool of a mounted service."""

    service: str
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class MetaAnswer:
    """A gateway meta-tool's own answer, shown bare as the published gateway showed it (no envelope)."""

    payload: dict[str, Any]


Resolution = Route | MetaAnswer | ToolResult
"""Where an agent's call goes: a real tool, a meta-tool's answer, or a refusal the exposure gives itself."""


def unknown_tool(name: str) -> ToolResult:
    return ToolResult.fail(
        "unknown_tool",
        f"unknown tool '{name}'. It is not mounted in this session; use only the tools you were given.",
    )


@dataclass
class ExposurePlan:
    """An exposure as data: what an episode record keeps, so any orchestrator replica rebuilds it.

    ``tools`` is every real tool in its agent-facing order, as (service, tool); together with the
    services' ``GET /tools`` schemas it determines the exposure exactly.
    """

    mode: str
    services: list[str]
    tools: list[tuple[str, str]]


class Exposure(ABC):
    """The agent-facing tool surface of one episode."""

    mode: str = "direct"

    def __init__(self, services: list[str], tools: list[dict[str, Any]]) -> None:
        self.services = services
        self.tools = tools

    @abstractmethod
    def plan(self) -> ExposurePlan:
        """This exposure as data (``exposure_from_plan`` inverts it)."""

    @abstractmethod
    def resolve(self, name: str, args: dict[str, Any]) -> Resolution:
        """Map an agent-facing call onto a service tool (or a meta-tool answer)."""


class DirectExposure(Exposure):
    """Every tool as its own function."""

    mode = "direct"

    def __init__(self, services: list[str], refs: list[ToolRef], mode: str = "direct") -> None:
        self.order = [(ref.service, ref.tool) for ref in refs]
        self.by_name: dict[str, ToolRef] = {}
        schemas: list[dict[str, Any]] = []
        for ref in refs:
            if ref.name in self.by_name:  # two services produced one name: disambiguate by hash
                digest = hashlib.sha256(f"{ref.service}/{ref.tool}#".encode()).hexdigest()[:8]
                name = f"{ref.name[: MAX_NAME - 9]}_{digest}"
                fn = {**ref.schema["function"], "name": name}
                ref = ToolRef(
                    ref.service,
                    ref.tool,
                    name,
                    ref.description,
                    ref.parameters,
                    {"type": "function", "function": fn},
                )
            self.by_name[ref.name] = ref
            schemas.append(ref.schema)
        super().__init__(services, schemas)
        self.mode = mode

    def plan(self) -> ExposurePlan:
        return ExposurePlan(self.mode, list(self.services), list(self.order))

    def resolve(self, name: str, args: dict[str, Any]) -> Resolution:
        ref = self.by_name.get(name)
        if ref is None:
            return unknown_tool(name)
        return Route(ref.service, ref.tool, args)


class GatewayExposure(Exposure):
    """The four meta-tools; real tools are found with list_tools/describe_tool and run with call_tool."""

    mode = "gateway"

    def __init__(self, services: list[str], refs: dict[str, list[ToolRef]]) -> None:
        super().__init__(services, meta_tool_schemas())
        counts: dict[str, int] = {}
        for svc in services:
            for ref in refs[svc]:
                counts[ref.tool] = counts.get(ref.tool, 0) + 1
        self.listing: dict[str, list[ToolRef]] = refs
        self.names: dict[str, ToolRef] = {}
        self.shown: dict[tuple[str, str], str] = {}
        for svc in services:
            for ref in refs[svc]:
                shown = ref.tool if counts[ref.tool] == 1 else ref.name
                self.shown[(svc, ref.tool)] = shown
                self.names[shown] = ref
        for svc in services:  # the qualified form always works too
            for ref in refs[svc]:
                self.names.setdefault(ref.name, ref)

    def plan(self) -> ExposurePlan:
        order = [(svc, ref.tool) for svc in self.services for ref in self.listing[svc]]
        return ExposurePlan(self.mode, list(self.services), order)

    def resolve(self, name: str, args: dict[str, Any]) -> Resolution:
        handler = {
            "list_services": self._list_services,
            "list_tools": self._list_tools,
            "describe_tool": self._describe_tool,
            "call_tool": self._call_tool,
        }.get(name)
        if handler is None:
            return unknown_tool(name)
        return handler(args)

    def _list_services(self, args: dict[str, Any]) -> Resolution:
        return MetaAnswer({"services": list(self.services)})

    def _list_tools(self, args: dict[str, Any]) -> Resolution:
        service = args.get("service")
        if not isinstance(service, str) or not service:
            return ToolResult.fail(
                "invalid_arguments", "list_tools needs 'service': a name from list_services"
            )
        if service not in self.listing:
            return ToolResult.fail(
                "unknown_service",
                f"unknown service '{service}'. Call list_services to see what is mounted.",
            )
        tools = [
            {"name": self.shown[(service, r.tool)], "description": r.description}
            for r in self.listing[service]
        ]
        return MetaAnswer({"service": service, "tools": tools})

    def _describe_tool(self, args: dict[str, Any]) -> Resolution:
        tool = args.get("tool")
        if not isinstance(tool, str) or not tool:
            return ToolResult.fail("invalid_arguments", "describe_tool needs 'tool': a name from list_tools")
        ref = self.names.get(tool)
        if ref is None:
            return unknown_tool(tool)
        shown = self.shown[(ref.service, ref.tool)]
        return MetaAnswer({"name": shown, "description": ref.description, "parameters": ref.parameters})

    def _call_tool(self, args: dict[str, Any]) -> Resolution:
        tool = args.get("tool_name")
        if not isinstance(tool, str) or not tool:
            return ToolResult.fail("invalid_arguments", "call_tool needs 'tool_name': a name from list_tools")
        ref = self.names.get(tool)
        if ref is None:
            return unknown_tool(tool)
        inner = parse_arguments(args.get("arguments", {}))
        if not isinstance(inner, dict):
            return inner.error
        return Route(ref.service, ref.tool, inner)


def build_exposure(
    mode: str, services: list[str], refs: dict[str, list[ToolRef]], rng: random.Random
) -> Exposure:
    """The exposure of an episode; ``services`` is already in its seeded order."""
    if mode == "gateway":
        shuffled = {}
        for svc in services:
            order = list(refs[svc])
            rng.shuffle(order)
            shuffled[svc] = order
        return GatewayExposure(services, shuffled)
    flat = [ref for svc in services for ref in refs[svc]]
    rng.shuffle(flat)
    return DirectExposure(services, flat, mode)


def exposure_from_plan(plan: ExposurePlan, refs: dict[str, list[ToolRef]]) -> Exposure:
    """Rebuild the exposure a plan describes from the services' tool refs.

    Raises KeyError naming a tool the plan holds that a service no longer serves (the library
    changed under a live episode).
    """
    index = {(ref.service, ref.tool): ref for svc in plan.services for ref in refs[svc]}
    ordered = [index[(svc, tool)] for svc, tool in plan.tools]
    if plan.mode == "gateway":
        grouped: dict[str, list[ToolRef]] = {svc: [] for svc in plan.services}
        for ref in ordered:
            grouped[ref.service].append(ref)
        return GatewayExposure(plan.services, grouped)
    return DirectExposure(plan.services, ordered, plan.mode)
