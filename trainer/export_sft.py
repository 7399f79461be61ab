"""Trajectories JSONL -> SFT chat records: only verified, well-formed, distinct episodes survive.

A trajectory is kept when every rubric criterion passed (``meta.score == 1.0`` and a non-empty
verdict list, all passed), it ran on the requested library version, and its conversation is one a
model can be trained on: roles in order, every tool call answered by exactly one tool message,
arguments that are JSON object strings, tools listed. Duplicates (same messages) are kept once.
Everything else is dropped and counted by reason, so a bad run shows up in the table instead of
silently shrinking the dataset.

Records are OpenAI-style ``{"messages", "tools", "meta"}`` lines, optionally with ``text``: the
conversation rendered by a tokenizer's chat template.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from orchestrator.models import Trajectory

__all__ = [
    "DROP_REASONS",
    "SftExportStats",
    "check_trajectory",
    "export_sft",
    "load_chat_tokenizer",
    "messages_hash",
    "sft_record",
    "write_sft_jsonl",
]

DROP_REASONS: dict[str, str] = {
    "invalid_json": "line is not JSON",
    "missing_fields": "not a Trajectory (missing or mistyped fields)",
    "library_version": "ran on another library version",
    "incomplete": "not every criterion passed (score < 1)",
    "unverified": "no criterion verdicts recorded",
    "no_tools": "tools list missing or empty",
    "malformed_roles": "roles out of order or no final assistant answer",
    "broken_tool_call_json": "tool-call arguments are not a JSON object string",
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
    """Return (drop reason, call id) for one assistant tool call."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(call.get("id"), str) or not isinstance(fn.get("name"), str):
        return "unmatched_tool_call", None
    args = fn.get("arguments")
    if not isinstance(args, str):
        return "broken_tool_call_json", None
    try:
        parsed = json.loads(args)
    except json.JSONDecodeError:
        return "broken_tool_call_json", None
    if not isinstance(parsed, dict):
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
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list):
                return "unmatched_tool_call"
            for call in calls:
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


def check_trajectory(traj: Trajectory, library_version: str | None = None) -> str | None:
    """The reason to drop ``traj`` (a key of DROP_REASONS), or None to keep it."""
    if library_version is not None and traj.meta.library_version != library_version:
        return "library_version"
    if not traj.meta.criteria:
        return "unverified"
    if traj.meta.score != 1.0 or not all(v.passed for v in traj.meta.criteria):
        return "incomplete"
    names = _tool_names(traj.tools)
    if not traj.tools or names is None:
        return "no_tools"
    if not traj.messages:
        return "malformed_roles"
    return _check_messages(traj.messages, names)


def _openai_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """Keep the OpenAI part of a tool schema; drop CompoWorld's ``x-*`` annotations."""
    fn = tool["function"]
    out_fn: dict[str, Any] = {"name": fn["name"], "description": fn.get("description", "")}
    out_fn["parameters"] = fn.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": out_fn}


def sft_record(traj: Trajectory, tokenizer: Any = None) -> dict[str, Any]:
    """The chat record of a kept trajectory (with ``text`` when a tokenizer is given)."""
    tools = [_openai_tool(t) for t in traj.tools]
    meta = traj.meta.model_dump(mode="json")
    meta["source"] = traj.source
    record: dict[str, Any] = {"messages": traj.messages, "tools": tools, "meta": meta}
    if tokenizer is not None:
        record["text"] = tokenizer.apply_chat_template(traj.messages, tools=tools, tokenize=False)
    return record


def export_sft(
    lines: Iterable[str],
    stats: SftExportStats,
    *,
    library_version: str | None = None,
    tokenizer: Any = None,
) -> Iterator[dict[str, Any]]:
    """Yield the records to keep from trajectory JSONL lines, counting drops into ``stats``."""
    drops: Counter[str] = Counter(stats.dropped)
    seen: set[str] = set()
    for line in lines:
        if not line.strip():
            continue
        stats.read += 1
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            drops["invalid_json"] += 1
            continue
        try:
            traj = Trajectory.model_validate(raw)
        except ValidationError:
            drops["missing_fields"] += 1
            continue
        reason = check_trajectory(traj, library_version)
        if reason is None:
            key = messages_hash(traj.messages)
            reason = "duplicate" if key in seen else None
            seen.add(key)
        if reason is not None:
            drops[reason] += 1
            continue
        stats.kept += 1
        stats.dropped = dict(sorted(drops.items()))
        yield sft_record(traj, tokenizer)
    stats.dropped = dict(sorted(drops.items()))


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
    """Read trajectories from ``src``, write kept records to ``out``; return the counts."""
    stats = SftExportStats()
    out.parent.mkdir(parents=True, exist_ok=True)
    with src.open(encoding="utf-8") as fin, out.open("w", encoding="utf-8") as fout:
        for record in export_sft(fin, stats, library_version=library_version, tokenizer=tokenizer):
            fout.write(json.dumps(record, ensure_ascii=False) + "\n")
    return stats
