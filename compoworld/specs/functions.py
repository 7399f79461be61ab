"""OpenAI function-definition ingester.

Accepted shapes: ``[{"type": "function", "function": {name, description, parameters}}]``,
``[{name, description, parameters}]``, ``{"functions": [...]}`` and
``{"tools": [{"type": "function", ...}]}``; an optional top-level ``_meta`` (or
``service``) names the service.
"""

from __future__ import annotations

from typing import Any

from compoworld.specs.argtools import ArgTool, build_arg_service
from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.model import ServiceSpec
from compoworld.specs.registry import Ingester, register

__all__ = ["INGESTER", "detect", "ingest"]


def _items(doc: Any) -> tuple[Any, tuple[object, ...]]:
    if isinstance(doc, dict):
        for key in ("functions", "tools"):
            if key in doc:
                return doc[key], (key,)
        return None, ()
    return doc, ()


def _is_function(item: Any) -> bool:
    return isinstance(item, dict) and (
        item.get("type") == "function"
        or "function" in item
        or "parameters" in item
        or "inputSchema" not in item
    )


def detect(doc: Any) -> bool:
    """A list of OpenAI function definitions (bare, wrapped in ``type: function``, or under ``functions``)."""
    items, at = _items(doc)
    if not isinstance(items, list) or not all(_is_function(i) for i in items):
        return False
    if at == ("tools",):
        return bool(items) and all(i.get("type") == "function" or "function" in i for i in items)
    return bool(items) or at == ("functions",)


def ingest(doc: Any, source_file: str) -> ServiceSpec:
    """Ingest a list of OpenAI function definitions."""
    items, at = _items(doc)
    if not isinstance(items, list):
        raise SpecError(source_file, join_pointer(at), "expected a list of function definitions")
    tools: list[ArgTool] = []
    for i, item in enumerate(items):
        here: tuple[object, ...] = (*at, i)
        fn = item
        if isinstance(item, dict) and "function" in item:
            fn, here = item["function"], (*here, "function")
        if not isinstance(fn, dict):
            defect = "a function definition must be an object"
            tools.append(ArgTool(None, None, None, here, "parameters", defect=defect))
            continue
        tools.append(ArgTool(fn.get("name"), fn.get("description"), fn.get("parameters"), here, "parameters"))
    meta = doc.get("_meta") if isinstance(doc, dict) else None
    if meta is None and isinstance(doc, dict) and isinstance(doc.get("service"), str):
        meta = {"service": doc["service"]}
    return build_arg_service(tools, source_file, "functions", at, meta)


INGESTER = register(Ingester(name="functions", detect=detect, ingest=ingest, priority=30))
