"""The world model: responses for tools that are not implemented against typed state.

Offline (the default) a deterministic generator produces a schema-valid response
seeded by sha256(service, tool, arguments). With an LLM endpoint configured the model
proposes the response, which must validate against the tool's output schema (invalid:
retry, then the offline generator). Either way, within an episode a repeated read
returns the same answer, and every simulated write is recorded in the typed
``action_log`` table, whose rows later simulated reads see (an id a write produced
reads back with the write's fields).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from typing import Any

from jsonschema import Draft202012Validator

from compoworld import words as W
from compoworld.errors import LLMError
from compoworld.llm import LLMClient
from compoworld.manifest import ToolDef
from compoworld.runtime.state import Episode
from compoworld.values import fit_string

__all__ = ["WorldModel", "generate_value"]

log = logging.getLogger(__name__)


def _seed_of(*parts: Any) -> int:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _string_for(name: str, schema: dict[str, Any], rng: random.Random, today: str) -> str:
    fmt = (schema.get("format") or "").lower()
    low = name.lower()
    if fmt == "date-time" or low.endswith(("_at", "time", "timestamp")):
        return f"{today}T{rng.randint(8, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}:00Z"
    if fmt == "date" or low.endswith("date"):
        return today
    if fmt == "email" or "email" in low:
        return f"{rng.choice(W.FIRST_NAMES).lower()}.{rng.choice(W.LAST_NAMES).lower()}@example.com"
    if fmt in ("uri", "url") or low.endswith(("url", "link", "href")):
        return f"https://example.com/{rng.choice(W.NOUNS)}/{rng.randint(1, 9999)}"
    if fmt == "uuid" or low == "uuid":
        return str(random.Random(rng.getrandbits(64)).getrandbits(128).to_bytes(16, "big").hex())
    if low == "id" or low.endswith(("_id", "id")):
        return f"{(low.removesuffix('_id').removesuffix('id') or 'obj')[:3]}_{rng.randint(100000, 999999)}"
    if "phone" in low or "mobile" in low:
        return f"+1555{rng.randint(1000000, 9999999)}"
    if "currency" in low:
        return rng.choice(("USD", "EUR", "GBP"))
    if "status" in low or "state" in low:
        return rng.choice(("active", "pending", "completed"))
    if "name" in low:
        return f"{rng.choice(W.FIRST_NAMES)} {rng.choice(W.LAST_NAMES)}"
    return f"{rng.choice(W.NOUNS)} {rng.choice(W.NOUNS)}"


def _one_of(schema: dict[str, Any], rng: random.Random, name: str, today: str, depth: int) -> Any:
    """A value for the first oneOf/anyOf branch whose value the whole schema accepts."""
    options = [o for o in schema.get("oneOf") or schema.get("anyOf") or [] if isinstance(o, dict)]
    options = [o for o in options if o.get("type") != "null"] or options
    check = _validator(schema)
    value: Any = None
    for option in options:
        value = generate_value(option, random.Random(rng.getrandbits(64)), name, today, depth)
        if check is None or check.is_valid(value):
            return value
    return value


def _validator(schema: dict[str, Any]) -> Draft202012Validator | None:
    try:
        return Draft202012Validator(schema)
    except Exception:  # an unusual upstream schema: generate without the check
        return None


def generate_value(
    schema: dict[str, Any], rng: random.Random, name: str = "", today: str = "2026-01-15", depth: int = 0
) -> Any:
    """A deterministic, schema-valid value for ``schema`` (enums, types, formats, lengths, required fields)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    if schema.get("oneOf") or schema.get("anyOf"):
        return _one_of(schema, rng, name, today, depth)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged["properties"].update(part.get("properties") or {})
                merged["required"] += part.get("required") or []
        return generate_value(merged, rng, name, today, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        out: dict[str, Any] = {}
        for key in sorted(props.keys() | required):
            if key in required or depth < 2:
                sub = props.get(key) or {"type": "string"}
                out[key] = generate_value(sub, rng, key, today, depth + 1) if depth <= 6 else None
        return out
    if kind == "array":
        if depth > 6:
            return []
        count = max(int(schema.get("minItems") or 0), 1 if schema.get("uniqueItems") else 2)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [generate_value(schema.get("items") or {}, rng, name, today, depth + 1) for _ in range(count)]
    if kind == "integer":
        lo = int(schema.get("minimum", 1))
        if "exclusiveMinimum" in schema and isinstance(schema["exclusiveMinimum"], (int, float)):
            lo = int(schema["exclusiveMinimum"]) + 1
        hi = int(schema.get("maximum", max(lo, 1) + 999))
        return rng.randint(lo, max(lo, hi))
    if kind == "number":
        low = float(schema.get("minimum", 1.0))
        high = float(schema.get("maximum", low + 999.0))
        return round(rng.uniform(low, max(low, high)), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return fit_string(_string_for(name, schema, rng, today), schema, rng)


def _overlay(target: Any, source: dict[str, Any], schema: dict[str, Any] | None) -> Any:
    """Copy same-named scalar fields from ``source`` into ``target`` (and its 'data' wrapper).

    A value is copied only where the response field's own schema accepts it: an argument that
    names a status the response does not allow must not make the response invalid.
    """
    if not isinstance(target, dict):
        return target
    props = (schema or {}).get("properties") or {}
    for key, value in source.items():
        if key in target and not isinstance(value, (dict, list)):
            field = props.get(key)
            check = _validator(field) if isinstance(field, dict) else None
            if check is None or check.is_valid(value):
                target[key] = value
    inner = target.get("data")
    if isinstance(inner, dict):
        inner_schema = props.get("data")
        _overlay(inner, source, inner_schema if isinstance(inner_schema, dict) else None)
    return target


def _ids_in(value: Any) -> set[str]:
    """Id-like scalar values in a response, for linking later reads to earlier writes."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                found |= _ids_in(item)
            elif (key.lower() == "id" or key.lower().endswith("id")) and item is not None:
                found.add(str(item))
    elif isinstance(value, list):
        for item in value[:50]:
            found |= _ids_in(item)
    return found


class WorldModel:
    """Simulated backend of one service."""

    def __init__(self, service: str, llm: LLMClient | None = None, retries: int = 2) -> None:
        self.service = service
        self.llm = llm
        self.retries = retries

    def _offline(self, tool: ToolDef, args: dict[str, Any], episode: Episode, salt: int) -> Any:
        rng = random.Random(_seed_of(self.service, tool.name, args, salt))
        schema = tool.output_schema or {"type": "object", "properties": {"id": {"type": "string"}}}
        value = generate_value(schema, rng, tool.name, episode.today)
        return _overlay(value, args, schema)

    async def _from_llm(
        self, tool: ToolDef, args: dict[str, Any], episode: Episode, history: list[Any]
    ) -> Any:
        assert self.llm is not None
        validator = Draft202012Validator(tool.output_schema) if tool.output_schema else None
        system = (
            "You simulate the backend of a real API for testing. Reply with only the JSON value the "
            "tool returns on success (no envelope), valid against the output schema, consistent with the "
            f"earlier simulated actions. Today is {episode.today}."
        )
        user = json.dumps(
            {
                "service": self.service,
                "tool": tool.name,
                "description": tool.description,
                "arguments": args,
                "output_schema": tool.output_schema,
                "earlier_actions": history[-10:],
            },
            default=str,
        )
        for _ in range(self.retries + 1):
            try:
                value = await self.llm.complete_json(system, user, seed=_seed_of(tool.name, args) % 2**31)
            except LLMError as exc:
                log.warning("world model LLM failed for %s.%s: %s", self.service, tool.name, exc)
                return None
            if validator is None or not any(True for _ in validator.iter_errors(value)):
                return value
        return None

    def _history(self, episode: Episode) -> list[dict[str, Any]]:
        rows = episode.conn.execute("SELECT tool, arguments, response FROM action_log ORDER BY seq")
        return [{"tool": t, "arguments": json.loads(a), "response": json.loads(r)} for t, a, r in rows]

    async def respond(self, tool: ToolDef, args: dict[str, Any], episode: Episode) -> Any:
        """The simulated ``data`` of a successful call; writes are appended to the action log."""
        key = json.dumps([tool.name, args], sort_keys=True, separators=(",", ":"), default=str)
        if not tool.is_write and key in episode.sim_cache:
            return episode.sim_cache[key]
        salt = 0
        if tool.is_write:
            salt = episode.conn.execute("SELECT COUNT(*) FROM action_log").fetchone()[0]
        value = None
        if self.llm is not None:
            value = await self._from_llm(tool, args, episode, self._history(episode))
        if value is None:
            value = self._offline(tool, args, episode, salt)
        if tool.is_write:
            self._record(tool, args, value, episode)
        else:
            value = self._recall(tool, args, value, episode)
            if not episode.read_only:  # the shared seed view would grow without bound
                episode.sim_cache[key] = value
        return value

    def _record(self, tool: ToolDef, args: dict[str, Any], value: Any, episode: Episode) -> None:
        if episode.read_only:
            return
        episode.conn.execute(
            "INSERT INTO action_log (tool, operation, arguments, response, time) VALUES (?, ?, ?, ?, ?)",
            (
                tool.name,
                tool.operation,
                json.dumps(args, sort_keys=True, default=str),
                json.dumps(value, sort_keys=True, default=str),
                episode.now,
            ),
        )

    def _recall(self, tool: ToolDef, args: dict[str, Any], value: Any, episode: Episode) -> Any:
        wanted = {str(v) for v in args.values() if isinstance(v, (str, int)) and not isinstance(v, bool)}
        if not wanted:
            return value
        for entry in self._history(episode):
            if wanted & _ids_in(entry["response"]):
                merged = dict(entry["arguments"])
                if isinstance(entry["response"], dict):
                    merged.update(
                        {k: v for k, v in entry["response"].items() if not isinstance(v, (dict, list))}
                    )
                value = _overlay(value, merged, tool.output_schema)
        return value
