"""Batch reads: one call that reads many rows by their keys, answered row by row.

``POST /articles/get`` with the body ``[1, 2, 3]``, answering a list whose items have exactly the
schema of ``GET /articles/get/{coreId}``, is that read made for each key: the answer is the
one-row read's answer for each key, in order, and a key the state does not hold fails the call
as the one-row read does (``not_found``). The binding is a ``lookup`` action whose ``each`` names
the one-row read; only a body that is itself a list of keys is read this way (a list of request
objects, or a batch that writes, stays with the world model).
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ActionDef, ToolDef
from compoworld.schema_types import json_type, schema_types

__all__ = ["bind_bulk_reads"]


def _key_types(schema: Any) -> set[str]:
    return schema_types(schema)[0] if isinstance(schema, dict) else set()


def _one_row_read(batch: ToolDef, tools: list[ToolDef]) -> ToolDef | None:
    """The tool that reads one of the rows the batch's list of keys names."""
    props = batch.input_schema.get("properties") or {}
    keys = props.get(batch.body_whole or "")
    items = keys.get("items") if isinstance(keys, dict) and json_type(keys) == "array" else None
    answer = batch.output_schema.get("items") if json_type(batch.output_schema) == "array" else None
    if not isinstance(items, dict) or not isinstance(answer, dict) or not answer:
        return None
    wanted = _key_types(items)
    if not wanted or not wanted <= {"string", "integer"}:
        return None
    for tool in tools:
        one = tool.input_schema.get("properties") or {}
        if tool.backend != "implemented" or tool.operation != "read" or tool.pk_arg is None:
            continue
        if tool.output_schema != answer or not wanted <= _key_types(one.get(tool.pk_arg)):
            continue
        others = {a for a in props if a != batch.body_whole}
        if others <= set(one) - {tool.pk_arg}:  # the batch's options are the read's own (``fulltext``)
            return tool
    return None


def bind_bulk_reads(tools: list[ToolDef]) -> list[ToolDef]:
    """Tools with every simulated batch read whose items are a one-row read's answer bound to it."""
    out = []
    for tool in tools:
        one = _one_row_read(tool, tools) if tool.backend == "simulated" and tool.body_whole else None
        if one is None:
            out.append(tool)
            continue
        action = ActionDef(kind="lookup", verb="read", target=one.entity or "", each=one.name, returns="body")
        out.append(
            tool.model_copy(
                update={
                    "backend": "action",
                    "operation": "action",
                    "kind": "read",
                    "entity": one.entity,
                    "simulated_reason": None,
                    "action": action,
                }
            )
        )
    return out
