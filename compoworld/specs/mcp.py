"""MCP ingester: a ``tools/list`` result ``{"tools": [{name, description, inputSchema}]}``.

Also accepted: a bare list of such tools, a whole JSON-RPC response
(``{"result": {"tools": [...]}}``), ``input_schema`` spelled the Anthropic way, an
``outputSchema``, and extra keys such as ``_meta`` or ``annotations`` (ignored,
except ``_meta.service``, which names the service when every tool agrees).
"""

from __future__ import annotations

from typing import Any

from compoworld.specs.argtools import ArgTool, build_arg_service
from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.model import ServiceSpec
from compoworld.specs.registry import Ingester, register

__all__ = ["INGESTER", "detect", "ingest"]

_NOT_MCP = ("function", "parameters")


def _tools(doc: Any) -> tuple[Any, tuple[object, ...], Any]:
    """The tool list, its pointer tokens, and the result-level ``_meta``."""
    if isinstance(doc, dict) and isinstance(doc.get("result"), dict) and "tools" in doc["result"]:
        return doc["result"]["tools"], ("result", "tools"), doc["result"].get("_meta")
    if isinstance(doc, dict):
        return doc.get("tools"), ("tools",), doc.get("_meta")
    return doc, (), None


def detect(doc: Any) -> bool:
    """``{"tools": [...]}`` of MCP tools, or a bare list of tools with ``inputSchema``."""
    tools, _, _ = _tools(doc)
    if not isinstance(tools, list):
        return False
    dicts = [t for t in tools if isinstance(t, dict)]
    if any(t.get("type") == "function" or any(k in t for k in _NOT_MCP) for t in dicts):
        return False
    if isinstance(doc, list):
        return len(dicts) == len(tools) and any("inputSchema" in t or "input_schema" in t for t in dicts)
    return True


def ingest(doc: Any, source_file: str) -> ServiceSpec:
    """Ingest an MCP ``tools/list`` result."""
    raw_tools, at, meta = _tools(doc)
    if not isinstance(raw_tools, list):
        raise SpecError(source_file, join_pointer(at), "'tools' must be a list")
    tools: list[ArgTool] = []
    for i, raw in enumerate(raw_tools):
        if not isinstance(raw, dict):
            tools.append(
                ArgTool(None, None, None, (*at, i), "inputSchema", defect="a tool must be an object")
            )
            continue
        key = "inputSchema" if "inputSchema" in raw or "input_schema" not in raw else "input_schema"
        tools.append(
            ArgTool(
                raw.get("name"),
                raw.get("description"),
                raw.get(key),
                (*at, i),
                key,
                output=raw.get("outputSchema"),
                meta=raw.get("_meta"),
            )
        )
    return build_arg_service(tools, source_file, "mcp", at, meta)


INGESTER = register(Ingester(name="mcp", detect=detect, ingest=ingest, priority=20))
