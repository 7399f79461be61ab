"""Schemas that tell the truth about null: wherever a starter tool's schema declares a field
``nullable`` (at any depth), the runtime's validator accepts ``null`` there; where it does not, the
validator refuses it. Each position is checked with a witness argument built from the schema itself
(required fields filled in, the path to the position included)."""

from __future__ import annotations

from typing import Any

import jsonschema
from fastapi.testclient import TestClient

from compoworld.manifest import load_manifest
from compoworld.runtime.app import create_service_app
from compoworld.runtime.schema_read import default_value, without_nulls
from compoworld.runtime.service import ServiceRuntime
from compoworld.runtime.validate import ArgsValidator, ArgumentError, json_schema_nullable
from compoworld.settings import Settings, bundled_library

Path_ = tuple[str, ...]


def _example(schema: dict[str, Any], force: Path_ = ()) -> Any:
    """A small value the schema admits; the properties along ``force`` are always present."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key) and isinstance(schema[key][0], dict) and "type" not in schema:
            return _example(schema[key][0], force)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        want = [p for p in schema.get("required") or [] if p in props]
        if force and force[0] == "properties" and force[1] not in want:
            want.append(force[1])
        return {p: _example(props[p], force[2:] if force[:2] == ("properties", p) else ()) for p in want}
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        n = max(1, int(schema.get("minItems") or 1))
        return [_example(items, force[1:] if force[:1] == ("items",) else ()) for _ in range(n)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + 1 if kind == "integer" else float(low) + 1.0
    if kind == "boolean":
        return True
    if kind == "string":
        fmt = schema.get("format")
        text = {"date": "2026-01-15", "date-time": "2026-01-15T10:00:00Z", "email": "a@example.com"}.get(
            fmt, "x"
        )
        return (
            text * max(1, int(schema.get("minLength") or 1))
            if fmt not in ("date", "date-time", "email")
            else text
        )
    return "x"


def _set(value: Any, path: Path_, leaf: Any) -> Any:
    """``value`` with the position at ``path`` (schema keywords) replaced by ``leaf``."""
    if not path:
        return leaf
    if path[0] == "properties":
        return {**value, path[1]: _set(value[path[1]], path[2:], leaf)}
    return [_set(value[0], path[1:], leaf), *value[1:]]


def _positions(schema: dict[str, Any], path: Path_ = ()) -> list[tuple[Path_, dict[str, Any]]]:
    """Every nested property position under a top-level field (through properties and items)."""
    out: list[tuple[Path_, dict[str, Any]]] = []
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            here = (*path, "properties", name)
            out += [(here, sub), *_positions(sub, here)]
    if isinstance(schema.get("items"), dict):
        out += _positions(schema["items"], (*path, "items"))
    return out


def _accepts(check: Any, value: Any) -> bool:
    try:
        check(value)
    except ArgumentError:
        return False
    return True


def test_nested_nullable_fields_accept_null_and_the_others_refuse_it() -> None:
    accepted = refused = 0
    wrong: list[str] = []
    for manifest in sorted(bundled_library().glob("*/manifest.json")):
        for tool in load_manifest(manifest.parent).tools:  # shared subschemas put back
            validator = ArgsValidator(tool.input_schema)
            for field, fschema in validator.properties.items():
                check = validator._checks[field]
                for path, sub in _positions(fschema):
                    witness = _example(fschema, path)
                    if not _accepts(check, witness):
                        continue  # the witness builder could not satisfy this schema: no verdict
                    with_null = _set(witness, path, None)
                    truth = jsonschema.Draft202012Validator(json_schema_nullable(fschema)).is_valid(with_null)
                    if _accepts(check, with_null) != truth:
                        wrong.append(f"{manifest.parent.name}.{tool.name}.{field}{'/'.join(path)}")
                    elif sub.get("nullable") is True:
                        accepted += 1
                    elif truth is False:
                        refused += 1
    print(f"nullable positions accepted {accepted}, non-nullable refused {refused}, wrong {len(wrong)}")
    assert wrong == []
    assert accepted >= 100 and refused >= 100, (accepted, refused)


def test_the_nullable_conversion_covers_types_enums_and_unions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "nullable": True},
            "b": {"type": "string", "enum": ["x"], "nullable": True},
            "c": {"anyOf": [{"type": "string"}], "nullable": True},
            "d": {"type": "array", "items": {"type": "integer", "nullable": True}},
            "e": {"type": "string"},
        },
    }
    v = jsonschema.Draft202012Validator(json_schema_nullable(schema))
    assert v.is_valid({"a": None, "b": None, "c": None, "d": [None, 1]})
    assert not v.is_valid({"e": None}) and not v.is_valid({"b": "y"})


def _keywords(schema: Any) -> set[str]:
    """Every key used at any depth of a JSON document."""
    if isinstance(schema, list):
        return set().union(*(_keywords(s) for s in schema)) if schema else set()
    if isinstance(schema, dict):
        return set(schema).union(*(_keywords(v) for v in schema.values()))
    return set()


def test_the_schemas_agents_are_shown_say_null_the_json_schema_way() -> None:
    """``GET /tools`` is what the orchestrator, its MCP server and every agent read: OpenAI tool
    schemas are JSON Schema, so OpenAPI's ``nullable`` must not appear there, and a JSON Schema
    validator reading the shown schema must agree with the runtime on where null is allowed."""
    folders = sorted(p.parent for p in bundled_library().glob("*/manifest.json"))
    shown_nullable = checked = 0
    for folder in folders:
        app = create_service_app(ServiceRuntime.from_folder(folder, Settings()), Settings())
        with TestClient(app) as client:
            tools = client.get("/tools").json()
        declared = {t.name: t.input_schema for t in load_manifest(folder).tools}
        for entry in tools:
            shown = entry["function"]["parameters"]
            assert "nullable" not in _keywords(shown), (folder.name, entry["function"]["name"])
            validator = ArgsValidator(declared[entry["function"]["name"]])
            for field, fschema in validator.properties.items():
                for path, sub in _positions(fschema):
                    witness = _example(fschema, path)
                    if not _accepts(validator._checks[field], witness):
                        continue
                    with_null = {field: _set(witness, path, None)}
                    shown_field = {"type": "object", "properties": {field: shown["properties"][field]}}
                    verdict = jsonschema.Draft202012Validator(shown_field).is_valid(with_null)
                    assert verdict == _accepts(validator._checks[field], with_null[field]), (
                        folder.name,
                        field,
                        path,
                    )
                    shown_nullable += bool(sub.get("nullable") is True and verdict)
                    checked += 1
    assert checked >= 200 and shown_nullable >= 100, (checked, shown_nullable)


def test_a_required_default_keeps_the_nulls_its_schema_requires() -> None:
    """A required object the state holds nothing for gets a schema-valid default: a required field
    whose schema allows null keeps a generated null (a tournament's ``winner_type``), and a field
    that is optional or may not be null is left out rather than sent as null."""
    tournament = {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "winner_type"],
        "properties": {
            "id": {"type": "integer", "minimum": 1},
            "winner_type": {"type": ["string", "null"], "enum": ["Player", "Team", None]},
            "note": {"type": ["string", "null"]},
        },
    }
    generated = {"id": 3, "winner_type": None, "note": None}
    assert without_nulls(generated, tournament) == {"id": 3, "winner_type": None}
    assert without_nulls(generated) == {"id": 3}  # without a schema: every null goes
    for name in ("tournament", "serie", "league", "match"):  # whatever the generator draws
        value = default_value(tournament, name)
        assert jsonschema.Draft202012Validator(tournament).is_valid(value), (name, value)
