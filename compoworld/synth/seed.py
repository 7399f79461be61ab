"""Deterministic, schema-conforming, referentially consistent seed rows for every entity.

Every random choice comes from ``random.Random(n)`` with ``n`` derived by sha256 from the
service, entity and row, so the same manifest always seeds the same rows, on any machine and
any Python. Keys are generated for every entity first, so references always point at rows
that exist whatever the order of entities.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

from compoworld import words as W
from compoworld.manifest import ColumnDef, EntityDef
from compoworld.synth.naming import split_words
from compoworld.synth.tagging import json_type, tag_column
from compoworld.values import fit_string

__all__ = ["ANCHOR_DATE", "derive_seed", "row_count", "seed_rows"]

#: Seed dates fall in a window around this day (episodes default to it as "today").
ANCHOR_DATE = date(2026, 1, 15)
_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
}
_ALWAYS = {"email", "person_name", "first_name", "last_name", "company_name", "title", "status"}
_UNIQUE_WORDS = {"email", "slug", "username", "handle", "login", "code", "sku", "key", "number", "reference"}


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from sha256 of the parts (never Python's salted ``hash()``)."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()
    return int(digest[:16], 16)


def row_count(service: str, entity: str, low: int = 24, high: int = 40) -> int:
    """How many seed rows an entity gets: fixed per (service, entity), between low and high."""
    return random.Random(derive_seed(service, entity, "rows")).randint(low, high)


def _key(entity: EntityDef, i: int, service: str) -> Any:
    pk = entity.column(entity.pk)
    if entity.pk_type == "integer":
        return i
    if pk is not None and pk.format == "uuid":
        return str(uuid.UUID(int=derive_seed(service, entity.name, i, "uuid") << 64 | i, version=4))
    key = f"{entity.id_prefix or 'id'}_{i:06d}"
    if pk is not None:  # a key format the API fixes (Twilio's ^BU[0-9a-f]{32}$) wins over the prefix
        key = fit_string(key, pk.json_schema, random.Random(derive_seed(service, entity.name, i, "key")))
    return key


class _Row:
    """Per-row context: a person and a company the row's text fields agree on."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.first = rng.choice(W.FIRST_NAMES)
        self.last = rng.choice(W.LAST_NAMES)
        self.company = f"{rng.choice(W.COMPANY_PARTS)} {rng.choice(W.COMPANY_SUFFIXES)}"
        self.city = rng.choice(W.CITIES)
        self.domain = self.company.split()[0].lower() + ".example.com"
        self.created: datetime | None = None


def _when(rng: random.Random, past_days: int = 365, future_days: int = 60) -> datetime:
    day = ANCHOR_DATE + timedelta(days=rng.randint(-past_days, future_days))
    return datetime(day.year, day.month, day.day, rng.randint(7, 19), rng.choice((0, 15, 30, 45)), tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _datetime(name: str, ctx: _Row) -> datetime:
    w = set(split_words(name))
    rng = ctx.rng
    if w & {"created", "registered", "joined", "opened", "start", "started", "issued"}:
        moment = _when(rng, 365, -5)
        ctx.created = ctx.created or moment
        return moment
    if w & {"updated", "modified", "changed", "last"} and ctx.created is not None:
        return ctx.created + timedelta(days=rng.randint(0, 30), hours=rng.randint(0, 8))
    if w & {"due", "end", "expires", "expiry", "expiration", "until", "deadline"}:
        return _when(rng, -5, 120)
    return _when(rng)


def _sentence(rng: random.Random, ctx: _Row) -> str:
    noun = rng.choice(W.NOUNS)
    return f"This {rng.choice(W.ADJECTIVES)} {noun} {rng.choice(W.VERBS)} the work with {ctx.company}."


def _title(rng: random.Random) -> str:
    return f"{rng.choice(W.ADJECTIVES).capitalize()} {rng.choice(W.NOUNS)} {rng.randint(1, 99)}"


def _semantic_text(semantic: str, name: str, ctx: _Row) -> str | None:
    rng = ctx.rng
    generators: dict[str, Any] = {
        "email": lambda: f"{ctx.first}.{ctx.last}@{ctx.domain}".lower(),
        "url": lambda: (
            f"https://www.{ctx.domain}/{'-'.join(split_words(name)[:2]) or 'page'}/{rng.randint(1, 999)}"
        ),
        "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "date": lambda: _datetime(name, ctx).date().isoformat(),
        "date-time": lambda: _iso(_datetime(name, ctx)),
        "phone": lambda: f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "currency": lambda: rng.choice(W.CURRENCIES),
        "country": lambda: ctx.city[1],
        "person_name": lambda: f"{ctx.first} {ctx.last}",
        "first_name": lambda: ctx.first,
        "last_name": lambda: ctx.last,
        "company_name": lambda: ctx.company,
        "address": lambda: f"{rng.randint(1, 250)} {rng.choice(W.STREETS)}",
        "city": lambda: ctx.city[0],
        "postal_code": lambda: ctx.city[2],
        "title": lambda: _title(rng),
        "text": lambda: _sentence(rng, ctx),
        "status": lambda: rng.choice(W.STATUSES),
        "language": lambda: rng.choice(W.LANGUAGES),
        "timezone": lambda: rng.choice(W.TIMEZONES),
        "ip": lambda: f"192.0.2.{rng.randint(1, 254)}",
        "color": lambda: rng.choice(W.COLORS),
    }
    make = generators.get(semantic)
    return make() if make is not None else None


def _format_text(fmt: str, name: str, ctx: _Row) -> str | None:
    rng = ctx.rng
    table: dict[str, Any] = {
        "date": lambda: _datetime(name, ctx).date().isoformat(),
        "date-time": lambda: _iso(_datetime(name, ctx)),
        "email": lambda: f"{ctx.first}.{ctx.last}@{ctx.domain}".lower(),
        "uri": lambda: f"https://www.{ctx.domain}/{rng.randint(1, 999)}",
        "url": lambda: f"https://www.{ctx.domain}/{rng.randint(1, 999)}",
        "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "ipv4": lambda: f"192.0.2.{rng.randint(1, 254)}",
        "ipv6": lambda: f"2001:db8::{rng.randint(1, 65535):x}",
        "hostname": lambda: ctx.domain,
        "byte": lambda: "aGVsbG8gd29ybGQ=",
        "time": lambda: f"{rng.randint(7, 19):02d}:{rng.choice((0, 15, 30, 45)):02d}:00",
        "password": lambda: f"pw-{rng.getrandbits(40):010x}",
    }
    make = table.get(fmt)
    return make() if make is not None else None


_DEPARTMENTS = ("Sales", "Engineering", "Marketing", "Finance", "Support", "Operations", "Legal", "Design")


def _name_text(name: str, ctx: _Row) -> str:
    rng = ctx.rng
    w = split_words(name)
    last = w[-1] if w else ""
    words = set(w)
    if words & {"image", "photo", "avatar", "logo", "picture", "icon", "thumbnail"}:
        return f"https://cdn.{ctx.domain}/{last or 'image'}/{rng.randint(1000, 9999)}.png"
    if last in {"county", "region", "province", "state", "district"}:
        return ctx.city[0] + " Region"
    if last == "prefix" or "salutation" in words:
        return rng.choice(("Mr.", "Ms.", "Dr.", "Mx."))
    if last == "suffix":
        return rng.choice(("Jr.", "Sr.", "PhD", "MBA"))
    if "middle" in words:
        return rng.choice(W.FIRST_NAMES)
    if last in {"by", "author", "owner", "assignee", "reporter"}:
        return f"{rng.choice(W.FIRST_NAMES)} {rng.choice(W.LAST_NAMES)}"
    if last == "department":
        return rng.choice(_DEPARTMENTS)
    if last == "etag" or last == "hash" or last == "checksum":
        return f"{rng.getrandbits(64):016x}"
    if last in {"extension", "digits", "pin", "position", "rank", "sequence", "version"}:
        return str(rng.randint(1, 999))
    if last in {"slug", "handle", "username", "login"}:
        return (
            f"{ctx.first}-{ctx.last}".lower()
            if last != "slug"
            else f"{rng.choice(W.NOUNS)}-{rng.randint(1, 999)}"
        )
    if last in {"code", "sku", "number", "reference", "ref", "key"}:
        return f"{(w[0][:3] if w else 'ref').upper()}-{rng.randint(1000, 99999)}"
    if last in {"id", "uuid", "guid"}:
        return f"ext_{rng.getrandbits(32):08x}"
    if last in {"domain", "host", "hostname"}:
        return ctx.domain
    if last in {"type", "kind", "category"}:
        return rng.choice(("standard", "premium", "basic", "internal", "external"))
    return " ".join(rng.choice(W.ADJECTIVES + W.NOUNS) for _ in range(2)).capitalize()


def _text(name: str, schema: dict[str, Any], semantic: str | None, ctx: _Row) -> str:
    fmt = schema.get("format")
    value = None
    if isinstance(fmt, str):
        value = _format_text(fmt, name, ctx)
    if value is None and semantic:
        value = _semantic_text(semantic, name, ctx)
    if value is None:
        value = _name_text(name, ctx)
    return fit_string(value, schema, ctx.rng)


def _bounded(schema: dict[str, Any], low: float, high: float) -> tuple[float, float]:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    lo = lo if isinstance(lo, (int, float)) and not isinstance(lo, bool) else low
    hi = hi if isinstance(hi, (int, float)) and not isinstance(hi, bool) else high
    if hi < lo:
        hi = lo
    if lo > high or hi < low:
        return lo, hi
    return max(lo, low), min(hi, high)


def _number(
    name: str, schema: dict[str, Any], semantic: str | None, integer: bool, rng: random.Random
) -> float:
    w = set(split_words(name))
    if semantic == "quantity" or w & {"quantity", "qty"}:
        low, high = 1.0, 20.0
    elif semantic == "percent" or w & {"percent", "percentage", "rate"}:
        low, high = 0.0, 100.0 if "rate" not in w else 25.0
    elif w & {"year"}:
        low, high = 2000.0, 2026.0
    elif w & {"age"}:
        low, high = 18.0, 80.0
    elif w & {"latitude", "lat"}:
        low, high = -60.0, 70.0
    elif w & {"longitude", "lng", "lon"}:
        low, high = -150.0, 150.0
    elif semantic == "money":
        low, high = 5.0, 5000.0
    else:
        low, high = 1.0, 1000.0
    lo, hi = _bounded(schema, low, high)
    if integer:
        return rng.randint(int(lo), max(int(lo), int(hi)))
    return round(rng.uniform(lo, hi), 2)


def _scalar(name: str, schema: dict[str, Any], semantic: str | None, ctx: _Row) -> Any:
    if "const" in schema:
        return schema["const"]
    enum = [v for v in schema.get("enum") or [] if v is not None]
    if enum:
        return ctx.rng.choice(enum)
    kind = json_type(schema)
    default = schema.get("default")
    typed = isinstance(default, _PY_TYPES.get(kind or "string", str)) and (kind == "boolean") == isinstance(
        default, bool
    )
    fixed = split_words(name)[-1:] in (["kind"], ["object"])
    if default not in (None, "") and typed and (fixed or ctx.rng.random() < 0.3):
        return default
    if kind == "boolean":
        return ctx.rng.random() < 0.5
    if kind in ("integer", "number"):
        return _number(name, schema, semantic, kind == "integer", ctx.rng)
    return _text(name, schema, semantic, ctx)


def _json_value(name: str, schema: dict[str, Any], ctx: _Row, depth: int = 0) -> Any:
    """A small value conforming to a nested schema (objects keep required and a few optional keys)."""
    kind = json_type(schema)
    if kind == "array":
        raw_items = schema.get("items")
        items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {"type": "string"}
        count = 0 if depth > 2 else ctx.rng.randint(1, 2)
        return [_json_value(name, items, ctx, depth + 1) for _ in range(count)]
    if kind == "object" or "properties" in schema:
        raw_props = schema.get("properties")
        props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        required = set(schema.get("required") or [])
        keys = [k for k in props if k in required] + [k for k in props if k not in required][
            : max(0, 6 - len(required))
        ]
        if depth > 2:
            keys = [k for k in keys if k in required]
        return {k: _json_value(k, props[k], ctx, depth + 1) for k in keys if isinstance(props[k], dict)}
    if kind is None:
        return _text(name, {}, tag_column(name, {}), ctx)
    return _scalar(name, schema, tag_column(name, schema), ctx)


def _unique(value: Any, seen: set[Any], i: int) -> Any:
    if value not in seen:
        seen.add(value)
        return value
    if isinstance(value, str):
        local, at, host = value.partition("@")
        candidate = f"{local}{i}{at}{host}" if at else f"{value}-{i}"
        seen.add(candidate)
        return candidate
    return value


def _value(column: ColumnDef, ctx: _Row, keys: dict[str, list[Any]]) -> Any:
    if column.ref is not None and keys.get(column.ref):
        target = ctx.rng.choice(keys[column.ref])
        return str(target) if column.type == "string" and not isinstance(target, str) else target
    if column.type == "json":
        target = column.semantic[3:] if column.semantic and column.semantic.startswith("id:") else None
        if target and keys.get(target) and json_type(column.json_schema) == "array":
            return ctx.rng.sample(keys[target], k=min(2, len(keys[target])))
        return _json_value(column.name, column.json_schema, ctx)
    schema = {k: v for k, v in column.json_schema.items() if k not in ("enum", "const", "default")}
    if column.enum:
        schema["enum"] = column.enum
    elif column.type in ("string", "integer", "number") and "default" in column.json_schema:
        schema["default"] = column.json_schema["default"]
    if column.format:
        schema["format"] = column.format
    schema["type"] = column.type
    return _scalar(column.source_name or column.name, schema, column.semantic, ctx)


def seed_rows(
    service: str, entities: list[EntityDef], counts: dict[str, int] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """``{table: [row, ...]}`` for every entity; rows keyed by column name, sorted by key."""
    counts = counts or {}
    sizes = {e.name: counts.get(e.name, row_count(service, e.name)) for e in entities}
    keys = {e.name: [_key(e, i, service) for i in range(1, sizes[e.name] + 1)] for e in entities}
    out: dict[str, list[dict[str, Any]]] = {}
    for entity in sorted(entities, key=lambda e: e.name):
        seen: dict[str, set[Any]] = {}
        keep = {c.name for c in entity.columns if not c.nullable or c.ref or c.semantic in _ALWAYS}
        keep.add(entity.label_column or "")
        rows = []
        for i, key in enumerate(keys[entity.name], start=1):
            ctx = _Row(random.Random(derive_seed(service, entity.name, i)))
            row: dict[str, Any] = {}
            for column in entity.columns:
                if column.primary_key:
                    row[column.name] = key
                    continue
                if column.name not in keep and ctx.rng.random() < 0.05:
                    row[column.name] = None
                    continue
                value = _value(column, ctx, keys)
                last = (split_words(column.name) or [""])[-1]
                unique_like = column.semantic == "email" or last in _UNIQUE_WORDS
                if column.type == "string" and not column.enum and unique_like:
                    value = _unique(value, seen.setdefault(column.name, set()), i)
                row[column.name] = value
            rows.append(row)
        out[entity.table] = sorted(rows, key=lambda r: r[entity.pk])
    return out
