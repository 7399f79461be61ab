"""The gateway's four meta-tools, exactly as the published CompoWorld system exposed them.

Transcribed from the published sample (``compoworld_services_index.json``,
``gateway_meta_tools``): names, descriptions and input schemas are kept verbatim so
trajectories collected here read like the published ones.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["META_TOOLS", "META_TOOL_NAMES", "meta_tool_schemas"]

META_TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "list_services",
        "description": (
            "List the names of all services (environments) mounted in this session. You start knowing "
            "nothing about them except their names \u2014 call list_tools on a service to learn what it can do."
        ),
        "inputSchema": {"type": "object", "properties": {}, "required": []},
    },
    {
        "name": "list_tools",
        "description": (
            "List every tool on a service with its name and a short description. Does NOT show parameter "
            "schemas \u2014 call describe_tool for one tool to learn how to call it."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "service": {"type": "string", "description": "A service name from list_services."}
            },
            "required": ["service"],
        },
    },
    {
        "name": "describe_tool",
        "description": (
            "Return the full parameter schema of one tool \u2014 the argument names, types, and descriptions "
            "you must supply to call it. Call this before call_tool whenever you are unsure of a tool's "
            "arguments; guessing them is a common failure mode."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"tool": {"type": "string", "description": "A tool name from list_tools."}},
            "required": ["tool"],
        },
    },
    {
        "name": "call_tool",
        "description": (
            "Execute a real tool by name with the given arguments and return its result. The arguments must "
            "be a JSON object matching the schema returned by describe_tool. You are responsible for "
            "formatting it correctly \u2014 there is no argument validation beyond what the tool itself enforces."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool_name": {"type": "string", "description": "A tool name from list_tools."},
                "arguments": {
                    "type": "object",
                    "description": "The tool's arguments as a JSON object, matching the schema from describe_tool.",
                    "additionalProperties": True,
                },
            },
            "required": ["tool_name"],
        },
    },
)

META_TOOL_NAMES: frozenset[str] = frozenset(t["name"] for t in META_TOOLS)


def meta_tool_schemas() -> list[dict[str, Any]]:
    """The four meta-tools as OpenAI function schemas (fresh copies: callers may mutate them)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": copy.deepcopy(t["inputSchema"]),
            },
        }
        for t in META_TOOLS
    ]
