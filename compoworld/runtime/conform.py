"""Strict conformance of a body to a declared schema: the check behind "the spec's response, exactly".

Plain JSON Schema lets an object carry keys its schema never declares; a real API's client does
not expect them, so the strict form closes every object that declares its properties
(``unevaluatedProperties: false``, which sees through ``allOf``/``anyOf``), and reads ``oneOf``
as ``anyOf``: specs routinely declare variants that overlap, and no client enforces exclusivity.
A schema truncated or cut at a recursion (``x-truncated``/``x-recursive``) stays open there.
"""

from __future__ import annotations

from typing import Any

from jsonschema.protocols import Validator

from compoworld.patterns import schema_validator

__all__ = ["StrictChecker", "strict_errors", "strict_schema"]

_COMBINERS = ("allOf", "anyOf", "oneOf")
# errors gathered before sorting: enough that the first few no longer depend on yield order
_COLLECT = 256
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames")


def strict_schema(schema: Any, *, _member: bool = False, _depth: int = 0) -> Any:
    """``schema`` with every object that names its properties closed, and ``oneOf`` read as ``anyOf``."""
    if not isinstance(schema, dict) or _depth > 60:
        return schema
    if schema.get("x-truncated") or schema.get("x-recursive"):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: strict_schema(v, _depth=_depth + 1) for k, v in value.items()}
        elif key in _COMBINERS and isinstance(value, list):
            target = "anyOf" if key == "oneOf" else key
            members = [strict_schema(v, _member=True, _depth=_depth + 1) for v in value]
            out[target] = [*out.get(target, []), *members]
        elif key in _ONE and isinstance(value, dict):
            out[key] = strict_schema(value, _depth=_depth + 1)
        else:
            out[key] = value
    declares = isinstance(schema.get("properties"), dict) or any(
        isinstance(m, dict) and isinstance(m.get("properties"), dict)
        for c in _COMBINERS
        for m in schema.get(c) or []
    )
    open_given = "additionalProperties" in schema or "unevaluatedProperties" in schema
    if declares and not open_given and not _member and not _has_open_member(schema):
        out["unevaluatedProperties"] = False
        # a key the schema requires but never describes is declared all the same (Xero requires "name"
        # and describes "Name"): an answer that carries it does what the schema asks
        props = out.get("properties")
        if isinstance(props, dict) and isinstance(schema.get("required"), list):
            missing = [r for r in schema["required"] if isinstance(r, str) and r not in props]
            if missing:
                out["properties"] = {**props, **{r: {} for r in missing}}
    return out


def _has_open_member(schema: dict[str, Any]) -> bool:
    """A combined member that admits any key (``additionalProperties: true``) keeps the object open."""
    for c in _COMBINERS:
        for m in schema.get(c) or []:
            if isinstance(m, dict) and (
                m.get("additionalProperties") not in (None, False)
                or m.get("x-truncated")
                or m.get("x-recursive")
            ):
                return True
    return False


def _where(error: Any) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(root)"


class StrictChecker:
    """A compiled strict check of one schema (compile once per tool, check many bodies)."""

    def __init__(self, schema: dict[str, Any], *, strict: bool = True) -> None:
        self.schema = strict_schema(schema) if strict else schema
        # patterns in every dialect the corpus writes (\p{L}...), as the argument validator reads them
        self._validator: Validator | None = schema_validator(self.schema)

    def errors(self, body: Any, limit: int = 3) -> list[str]:
        """Up to ``limit`` reasons the body does not conform (empty: it conforms)."""
        if self._validator is None:
            return []
        # jsonschema yields some errors in set order (``additionalProperties`` descends into the extra
        # keys of a set), which follows PYTHONHASHSEED: collect a bounded batch and keep the first
        # ``limit`` in (location, message) order, so two builds give the same reasons byte for byte
        found: list[tuple[str, str]] = []
        stopped = ""
        try:
            for error in self._validator.iter_errors(body):
                found.append((_where(error), error.message[:200]))
                if len(found) >= _COLLECT:
                    break
        except Exception as exc:  # an ECMA-only pattern Python cannot compile, and the like
            if not found:
                return []
            stopped = f"(check stopped: {type(exc).__name__})"
        out = [f"{where}: {message}" for where, message in sorted(set(found))[:limit]]
        return [*out, stopped] if stopped else out


def strict_errors(schema: dict[str, Any], body: Any, limit: int = 3) -> list[str]:
    """Reasons ``body`` does not strictly conform to ``schema`` (empty: it conforms)."""
    return StrictChecker(schema).errors(body, limit)
