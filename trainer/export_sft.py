"""Trajectories or published records -> SFT records in the published format; only verified ones survive.

Input lines are our trajectories (``orchestrator.models.Trajectory``, as the runner writes them)
or records in the published CompoWorld format (trainer/sft_format.py), so a published sample can
be filtered and re-exported too. A record is kept when it is verified, ran on the requested
library version, and its conversation is one a model can be trained on: roles in order, every
tool call answered by exactly one tool message, arguments that are JSON objects, tool names
listed. Verified means every criterion passed where per-criterion verdicts are recorded (ours),
and ``score == 1`` where they are not (the published sample carries none). Duplicates (same
messages) are kept once. Everything else is dropped and counted by reason, so a bad run shows up
in the table instead of silently shrinking the dataset.

Records are written field for field like the published sample (``SftRecord.dump``), optionally
with ``text``: the conversation rendered by a tokenizer's chat template.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trainer.sft_format import SftRecord, UnusableRecord, parse_record

__all__ = [
    "DROP_REASONS",
    "SftExportStats",
    "check_record",
    "export_sft",
    "load_chat_tokenizer",
    "messages_hash",
    "read_sft_records",
    "write_sft_jsonl",
]

DROP_REASONS: dict[str, str] = {
    "invalid_json": "line is not JSON",
    "missing_fields": "neither a trajectory nor a published record (missing or mistyped fields)",
    "library_version": "ran on another library version (or does not say which)",
    "incomplete": "not every criterion passed (score < 1)",
    "unverified": "no criterion verdicts and no score",
    "no_tools": "tools list missing or empty",
    "malformed_roles": "roles out of order or no final assistant answer",
    "broken_tool_call_json": "tool-call arguments are not a JSON object",
    "unmatched_tool_call": "a tool call without exactly one matching tool result (or the reverse)",
    "unknown_tool": "a tool call names a tool not in the tools list",
    "duplicate": "same messages as an earlier record",
}


class SftExportStats(BaseModel):
    """Counts of one export."""

    read: int = Field(default=0, description="Non-empty input lines.")
    kept: int = Field(default=0, description="Records written.")
    dropped: dict[str, int] = Field(default_factory=dict, description="Reason -> lines dropped for it.")


def messages_hash(messages: list[dict[str, Any]]) -> str:
    """sha256 of the canonical JSON of a conversation (the dedup key)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _tool_names(tools: list[dict[str, Any]]) -> set[str] | None:
    names: set[str] = set()
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return None
        names.add(fn["name"])
    return names


def _check_tool_call(call: Any, names: set[str]) -> tuple[str | None, str | None]:
    """Return (drop reason, call id) for one assistant tool call (arguments already objects)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(call.get("id"), str) or not isinstance(fn.get("name"), str):
        return "unmatched_tool_call", None
    if not isinstance(fn.get("arguments"), dict):
        return "broken_tool_call_json", None
    if fn["name"] not in names:
        return "unknown_tool", None
    return None, call["id"]


def _check_messages(messages: list[dict[str, Any]], names: set[str]) -> str | None:
    """Walk the conversation once: role order and tool-call/result pairing."""
    pending: set[str] = set()
    seen_ids: set[str] = set()
    seen_user = False
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "system":
            if i != 0:
                return "malformed_roles"
        elif role == "user":
            if pending:
                return "unmatched_tool_call"
            seen_user = True
        elif role == "assistant":
            if not seen_user:
                return "malformed_roles"
            if pending:
                return "unmatched_tool_call"
            for call in msg.get("tool_calls") or []:
                reason, call_id = _check_tool_call(call, names)
                if reason:
                    return reason
                if call_id in seen_ids:
                    return "unmatched_tool_call"
                assert call_id is not None
                seen_ids.add(call_id)
                pending.add(call_id)
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                return "unmatched_tool_call"
            pending.discard(call_id)
        else:
            return "malformed_roles"
    last = messages[-1] if messages else {}
    if pending:
        return "unmatched_tool_call"
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return "malformed_roles"
    return None


def _verification(record: SftRecord) -> str | None:
    """Per-criterion verdicts when present, else the score (the published sample has no verdicts)."""
    verdicts = record.verdicts()
    if verdicts is not None:
        if record.meta.score != 1.0 or not all(v.passed for v in verdicts):
            return "incomplete"
        return None
    if (record.meta.model_extra or {}).get("criteria") == []:
        return "unverified"  # ours, graded on nothing
    return None if record.meta.score >= 1.0 else "incomplete"


def check_record(record: SftRecord, library_version: str | None = None) -> str | None:
    """The reason to drop ``record`` (a key of DROP_REASONS), or None to keep it."""
    if library_version is not None and record.library_version() != library_version:
        return "library_version"
    reason = _verification(record)
    if reason is not None:
        return reason
    names = _tool_names(record.tools)
    if not record.tools or names is None:
        return "no_tools"
    if not record.messages:
        return "malformed_roles"
    return _check_messages(record.messages, names)


def export_sft(
    lines: Iterable[str],
    stats: SftExportStats,
    *,
    library_version: str | None = None,
    src: str = "",
) -> Iterator[SftRecord]:
    """Yield the records to keep from trajectory / published-record lines, counting drops into ``stats``.

    ``src`` is written as ``meta.src`` of records converted from our trajectories (the run they
    came from); published records keep their own.
    """
    drops: Counter[str] = Counter(stats.dropped)
    seen: set[str] = set()
    for line in lines:
        if not line.strip():
            continue
        stats.read += 1
        try:
            record = parse_record(json.loads(line), src)
        except json.JSONDecodeError:
            drops["invalid_json"] += 1
            continue
        except UnusableRecord as exc:
            drops[exc.reason] += 1
            continue
        reason = check_record(record, library_version)
        if reason is None:
            key = messages_hash(record.messages)
            reason = "duplicate" if key in seen else None
            seen.add(key)
        if reason is not None:
            drops[reason] += 1
            continue
        stats.kept += 1
        stats.dropped = dict(sorted(drops.items()))
        yield record
    stats.dropped = dict(sorted(drops.items()))


def read_sft_records(
    path: Path, *, library_version: str | None = None
) -> tuple[list[SftRecord], SftExportStats]:
    """Every usable record of a JSONL file (trajectories or published records) and the counts."""
    stats = SftExportStats()
    with path.open(encoding="utf-8") as fh:
        records = list(export_sft(fh, stats, library_version=library_version, src=str(path)))
    return records, stats


def load_chat_tokenizer(path: str | Path) -> Any:
    """A local tokenizer with a chat template, for rendering ``text`` (no hub downloads)."""
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise RuntimeError(
            "--tokenizer needs the transformers package: pip install -e '.[smoke]' (or '.[verl]')"
        ) from exc
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if not getattr(tok, "chat_template", None):
        raise ValueError(f"tokenizer at {path} has no chat_template; it cannot render chat records")
    return tok


def write_sft_jsonl(
    src: Path,
    out: Path,
    *,
    library_version: str | None = None,
    tokenizer: Any = None,
) -> SftExportStats:
    """Read trajectories or records from ``src``, write kept records to ``out``; return the counts."""
    stats = SftExportStats()
    out.parent.mkdir(parents=True, exist_ok=True)
    with src.open(encoding="utf-8") as fin, out.open("w", encoding="utf-8") as fout:
        for record in export_sft(fin, stats, library_version=library_version, src=str(src)):
            row = record.dump()
            if tokenizer is not None:
                row["text"] = tokenizer.apply_chat_template(
                    record.messages, tools=record.tools, tokenize=False
                )
            fout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return stats
