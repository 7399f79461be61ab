"""The published CompoWorld SFT record, field for field, and the conversion from our trajectories.

The published sample (AllSpark-Research/AgentEnv ``CompoWorld/compoworld_example_data_20.jsonl``,
first record kept whole in tests/fixtures/published/) has four top-level keys in this order:
``tools``, ``meta``, ``source``, ``messages``. ``meta`` holds the fields of ``PublishedMeta`` (in
that order), ``task_id`` an integer; assistant turns carry ``tool_calls`` whose ``arguments`` are
JSON objects and, when the model reasoned, ``reasoning_content``. ``n_steps`` counts tool-calling
turns and ``finish_reason`` is ``"stop"`` for an episode the model ended by answering.

Our trajectories (``orchestrator.models.Trajectory``) differ: a string task id, arguments as the
JSON strings the model wrote, ``answered`` for the finish, the final answer counted in
``n_steps``, and per-criterion verdicts. ``from_trajectory`` maps one onto the other and keeps
CompoWorld's extras after the published fields (``task_key``, ``criteria``, ``library_version``);
a published record read back is written back unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compoworld.seeding import derive_seed
from orchestrator.models import Trajectory, Verdict

__all__ = [
    "PublishedMeta",
    "SftRecord",
    "UnusableRecord",
    "from_trajectory",
    "net_score",
    "openai_tool",
    "parse_record",
    "task_number",
]

_JSON_SAFE = 2**53  # integers beyond this lose precision in JavaScript readers of the JSONL


class UnusableRecord(ValueError):
    """A line cannot become an SFT record; ``reason`` is a key of export_sft.DROP_REASONS."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class PublishedMeta(BaseModel):
    """``meta`` of the published record, in its order; CompoWorld's extras follow (extra="allow")."""

    model_config = ConfigDict(extra="allow")

    task_id: int = Field(description="Task number (ours: a stable number derived from the task id).")
    src: str = Field(default="", description="The run output the trajectory came from.")
    rollout_idx: int = Field(default=0, description="Rollout within its task's group.")
    rubric_score: float = Field(description="Importance-weighted fraction of criteria passed.")
    score: float = Field(description="1.0 when every criterion passed, else 0.0.")
    net_score: float = Field(description="Goal criteria passed, zeroed by a failed collateral guard.")
    n_tool_calls: int = Field(description="All tool calls, meta-tools included.")
    n_real_tool_calls: int = Field(description="Calls that reached a service tool.")
    n_steps: int = Field(description="Tool-calling assistant turns.")
    discover_mode: str = Field(description="direct | gateway | mcp.")
    finish_reason: str = Field(description='"stop" when the model ended by answering; else the limit hit.')
    services: list[str] = Field(description="Services the task needed.")
    domain: str = Field(description="Domain label.")
    capabilities: list[str] = Field(description="Capability labels.")


class SftRecord(BaseModel):
    """One published-format SFT record."""

    tools: list[dict[str, Any]] = Field(description="OpenAI tool schemas the model saw.")
    meta: PublishedMeta = Field(description="Scores, counts and labels.")
    source: str = Field(default="", description="Who produced the trajectory.")
    messages: list[dict[str, Any]] = Field(description="The conversation; tool-call arguments are objects.")

    def verdicts(self) -> list[Verdict] | None:
        """Per-criterion verdicts when the record carries them (ours do; the published ones do not)."""
        raw = (self.meta.model_extra or {}).get("criteria")
        if not raw:
            return None
        return [Verdict.model_validate(v) for v in raw]

    def library_version(self) -> str | None:
        value = (self.meta.model_extra or {}).get("library_version")
        return str(value) if value else None

    def dump(self) -> dict[str, Any]:
        """The record as written: published keys in published order, extras after them."""
        return {
            "tools": self.tools,
            "meta": self.meta.model_dump(mode="json"),
            "source": self.source,
            "messages": self.messages,
        }


def task_number(task_id: str) -> int:
    """The published integer ``task_id`` for one of our ids: the id itself when it is a number."""
    if task_id.isdigit():
        return int(task_id)
    return derive_seed("sft-task-id", task_id) % _JSON_SAFE


def net_score(verdicts: list[Verdict]) -> float:
    """Importance-weighted share of the goal criteria (no_op_fail) passed; 0 if a guard failed.

    The published sample does not define ``net_score``; this is CompoWorld's reading of it: the
    task's own goals, net of collateral damage (a failed no_op_pass guard voids the run).
    """
    if any(not v.passed for v in verdicts if v.label == "no_op_pass"):
        return 0.0
    goals = [v for v in verdicts if v.label != "no_op_pass"]
    total = sum(v.importance for v in goals)
    if total <= 0:
        return 1.0 if verdicts else 0.0
    return sum(v.importance for v in goals if v.passed) / total


def openai_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI part of a tool schema: name, description, parameters (CompoWorld's ``x-*`` dropped)."""
    fn = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise UnusableRecord("no_tools", "a tool without function.name")
    out_fn: dict[str, Any] = {"name": fn["name"], "description": fn.get("description") or ""}
    out_fn["parameters"] = fn.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": out_fn}


def _object_arguments(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message with its tool-call arguments parsed to objects (strings are ours)."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    if not isinstance(calls, list):
        raise UnusableRecord("unmatched_tool_call", "tool_calls is not a list")
    out = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise UnusableRecord("unmatched_tool_call", "a tool call without function")
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError as exc:
                raise UnusableRecord("broken_tool_call_json", str(exc)) from exc
        if not isinstance(args, dict):
            raise UnusableRecord("broken_tool_call_json", "arguments are not a JSON object")
        out.append({**call, "function": {**fn, "arguments": args}})
    return {**message, "tool_calls": out}


def from_trajectory(traj: Trajectory, src: str = "") -> SftRecord:
    """Our trajectory as a published-format record (see the module docstring for the mapping)."""
    meta = traj.meta
    messages = [_object_arguments(m) if m.get("role") == "assistant" else m for m in traj.messages]
    published = PublishedMeta.model_validate(
        {
            "task_id": task_number(meta.task_id),
            "src": src,
            "rollout_idx": meta.rollout_idx,
            "rubric_score": meta.rubric_score,
            "score": meta.score,
            "net_score": net_score(meta.criteria),
            "n_tool_calls": meta.n_tool_calls,
            "n_real_tool_calls": meta.n_real_tool_calls,
            "n_steps": sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls")),
            "discover_mode": meta.discover_mode,
            "finish_reason": "stop" if meta.finish_reason == "answered" else meta.finish_reason,
            "services": list(meta.services),
            "domain": meta.domain,
            "capabilities": list(meta.capabilities),
            # CompoWorld's extras, after the published fields
            "task_key": meta.task_id,
            "criteria": [v.model_dump(mode="json") for v in meta.criteria],
            "library_version": meta.library_version,
        }
    )
    tools = [openai_tool(t) for t in traj.tools]
    return SftRecord(tools=tools, meta=published, source=traj.source, messages=messages)


def parse_record(raw: Any, src: str = "") -> SftRecord:
    """A published-format record (integer ``meta.task_id``) or one of our trajectories, as a record.

    Raises UnusableRecord with the drop reason when the line is neither.
    """
    from pydantic import ValidationError

    if not isinstance(raw, dict) or not isinstance(raw.get("meta"), dict):
        raise UnusableRecord("missing_fields", "not an object with a meta object")
    try:
        if isinstance(raw["meta"].get("task_id"), int):
            record = SftRecord.model_validate(raw)
            messages = [_object_arguments(m) if m.get("role") == "assistant" else m for m in record.messages]
            return record.model_copy(update={"messages": messages})
        return from_trajectory(Trajectory.model_validate(raw), src)
    except ValidationError as exc:
        raise UnusableRecord("missing_fields", str(exc.errors()[0])) from exc
    except AttributeError as exc:  # a message that is not an object
        raise UnusableRecord("malformed_roles", str(exc)) from exc
