"""SFT records -> verl's multi-turn SFT dataset (parquet), as ``MultiTurnSFTDataset`` reads it.

verl 0.9.1's ``verl.utils.dataset.multiturn_sft_dataset.MultiTurnSFTDataset`` reads a ``messages``
column (and ``tools``, passed to the chat template with the first turn). Arrow stores one type
per column: tools with different parameter schemas, or tool calls with different argument keys,
would be merged into one struct and every missing key filled with ``null`` - which the chat
template would then render into the prompt. So the two free-form JSON objects are stored as JSON
strings: each tool call's ``arguments`` (every chat template accepts a string there) and each
tool's ``parameters`` (CompoWorld's template splices it verbatim, rendering the same bytes as the
object; see trainer/chat_template.j2). Everything else keeps its structure. ``meta`` rides along
as JSON text for traceability; the dataset class ignores it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from trainer.sft_format import SftRecord

__all__ = ["SFT_PARQUET_SCHEMA", "parquet_row", "write_sft_parquet"]

_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
_MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("reasoning_content", pa.string()),
        ("tool_calls", pa.list_(_CALL)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
    ]
)
_TOOL = pa.struct(
    [
        ("type", pa.string()),
        (
            "function",
            pa.struct([("name", pa.string()), ("description", pa.string()), ("parameters", pa.string())]),
        ),
    ]
)
SFT_PARQUET_SCHEMA = pa.schema(
    [
        ("messages", pa.list_(_MESSAGE)),
        ("tools", pa.list_(_TOOL)),
        ("task_id", pa.int64()),
        ("source", pa.string()),
        ("meta", pa.string()),
    ]
)


def _dumps(value: Any) -> str:
    # the chat template's tojson: ensure_ascii=False, default separators
    return json.dumps(value, ensure_ascii=False)


def _message(msg: dict[str, Any]) -> dict[str, Any]:
    calls = msg.get("tool_calls")
    return {
        "role": msg.get("role"),
        "content": msg.get("content"),
        "reasoning_content": msg.get("reasoning_content"),
        "tool_calls": [
            {
                "id": c.get("id"),
                "type": c.get("type", "function"),
                "function": {"name": c["function"]["name"], "arguments": _dumps(c["function"]["arguments"])},
            }
            for c in calls
        ]
        if calls
        else None,
        "tool_call_id": msg.get("tool_call_id"),
        "name": msg.get("name"),
    }


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool["function"]
    return {
        "type": tool.get("type", "function"),
        "function": {
            "name": fn["name"],
            "description": fn.get("description") or "",
            "parameters": _dumps(fn.get("parameters") or {"type": "object", "properties": {}}),
        },
    }


def parquet_row(record: SftRecord) -> dict[str, Any]:
    """One dataset row: messages and tools (JSON-string arguments/parameters), id, source, meta."""
    return {
        "messages": [_message(m) for m in record.messages],
        "tools": [_tool(t) for t in record.tools],
        "task_id": record.meta.task_id,
        "source": record.source,
        "meta": _dumps(record.meta.model_dump(mode="json")),
    }


def write_sft_parquet(records: Iterable[SftRecord], out: Path) -> int:
    """Write the rows of ``records`` to ``out``; return how many (an empty export is an error)."""
    rows = [parquet_row(r) for r in records]
    if not rows:
        raise ValueError("no SFT records to write (every input line was dropped; see the table)")
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SFT_PARQUET_SCHEMA), out)
    return len(rows)
