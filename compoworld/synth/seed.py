"""Deterministic, schema-conforming, coherent seed rows cast from the library's one population.

Rows of people and organisations are *cast* from ``compoworld.population``: a CRM contact,
an accounting customer and a Mailsquad contact can be the same person, with the same email,
phone and address, though each service is built on its own. Every other row is about some
member too (an invoice's customer, a ticket's requester), reached through its references
when it has them, so its typed fields agree with the row it points at; an embedded copy of a
referenced row (``customer: {id, name}`` beside ``customer_id``) is that row's values.

Keys come from ``compoworld.keys`` (unique across the library, in the format the spec fixes);
references always point at rows that exist; dates keep their order (created <= updated,
start <= end, issued <= due); line items sum to the totals beside them. Every random choice
comes from a ``random.Random`` seeded by sha256 of (service, entity, row), so the same
manifest always seeds the same rows, on any machine.

``seed_data`` also returns the *cast* (``{"roles": {table: role}, "rows": {table: {key:
member_id}}}``), rendered as the service's ``population.json``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from compoworld.keys import entity_key
from compoworld.manifest import ColumnDef, EntityDef
from compoworld.population import Member, Organisation, Population, population
from compoworld.seeding import derive_seed, seeded_rng
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.casting import DEFAULT_PARTY, entity_role
from compoworld.synth.seed_coherence import cohere
from compoworld.synth.seed_values import RowContext, Timeline, json_value, scalar_value

__all__ = ["ANCHOR_DATE", "SeedData", "derive_seed", "row_count", "seed_data", "seed_rows"]

from compoworld.population import ANCHOR_DATE

_ALWAYS = {"email", "person_name", "first_name", "last_name", "company_name", "title", "status"}
_UNIQUE_WORDS = {"slug", "username", "handle", "login", "code", "sku", "number", "reference", "key"}
_PERSON_TYPES = {"email", "phone", "person_name", "first_name", "last_name"}
_ORG_TYPES = {"company_name", "email", "phone", "url", "address"}
_KEY_ATTEMPTS = 50


@dataclass
class SeedData:
    """Seed rows and who they were cast from."""

    rows: dict[str, list[dict[str, Any]]]
    cast: dict[str, dict[str, Any]]


def row_count(service: str, entity: str, low: int = 24, high: int = 40) -> int:
    """How many seed rows an entity gets: fixed per (service, entity), between low and high."""
    return random.Random(derive_seed(service, entity, "rows")).randint(low, high)


def _keys(entity: EntityDef, n: int) -> list[Any]:
    """Up to ``n`` distinct keys: a narrow key pattern that keeps repeating itself seeds fewer rows."""
    keys: list[Any] = []
    seen: set[Any] = set()
    for seq in range(1, n + 1):
        key = entity_key(entity, seq)
        attempt = 0
        while key in seen and attempt < _KEY_ATTEMPTS:
            attempt += 1
            key = entity_key(entity, seq, attempt)
        if key in seen:
            break
        seen.add(key)
        keys.append(key)
    return keys


def _castable(entity: EntityDef, role: str | None) -> bool:
    """Whether an entity's rows hold the kind of values a member has (a name, an email...)."""
    if role is None:
        return False
    semantics = {c.semantic for c in entity.columns if c.semantic}
    wanted = _ORG_TYPES if role in ("client", "supplier", "employer") else _PERSON_TYPES
    return bool(semantics & wanted) or any(split_words(c.name)[-1:] == ["name"] for c in entity.columns)


def _order(entities: list[EntityDef]) -> list[EntityDef]:
    """Referenced entities before the entities that reference them (ties and cycles by name)."""
    by_name = {e.name: e for e in entities}
    done: list[EntityDef] = []
    placed: set[str] = set()

    def visit(e: EntityDef, path: set[str]) -> None:
        if e.name in placed or e.name in path:
            return
        for c in e.columns:
            if c.ref in by_name and c.ref != e.name:
                visit(by_name[c.ref], path | {e.name})
        placed.add(e.name)
        done.append(e)

    for e in sorted(entities, key=lambda x: x.name):
        visit(e, set())
    return done


class _Seeder:
    def __init__(
        self,
        service: str,
        entities: list[EntityDef],
        sizes: dict[str, int],
        domain: str,
        enums: dict[tuple[str, str], list[Any]],
        pop: Population,
    ) -> None:
        self.service, self.domain, self.enums, self.pop = service, domain, enums, pop
        self.entities = {e.name: e for e in entities}
        self.keys = {e.name: _keys(e, sizes[e.name]) for e in entities}
        roles = {e.name: entity_role(e, domain) for e in entities}
        self.roles: dict[str, str] = {
            name: role
            for name, role in roles.items()
            if role is not None and _castable(self.entities[name], role)
        }
        self.members: dict[str, list[Member]] = {}
        self._cast_all(sizes)
        self.rows: dict[str, dict[Any, dict[str, Any]]] = {}
        self.about: dict[str, dict[Any, Member]] = {}

    def _cast_all(self, sizes: dict[str, int]) -> None:
        people = [n for n in sorted(self.roles) if self.roles[n] in ("customer", "staff", "candidate")]
        orgs = [n for n in sorted(self.roles) if n not in people]
        for name in people:
            self.members[name] = self.pop.cast(self.roles[name], (self.service, name), sizes[name])
        for name in orgs:
            prefer = [
                emp.id
                for other in people
                if any(c.ref == name for c in self.entities[other].columns)
                for m in self.members[other]
                if (emp := self.pop.employer_of(m)) is not None
            ]
            self.members[name] = self.pop.cast(self.roles[name], (self.service, name), sizes[name], prefer)

    def member_of(self, entity: str, key: Any) -> Member | None:
        if entity in self.about and key in self.about[entity]:
            return self.about[entity][key]
        if entity in self.members:
            index = self.keys[entity].index(key)
            return self.members[entity][index] if index < len(self.members[entity]) else None
        return None

    def _pick_ref(self, column: ColumnDef, rng: random.Random, member: Member | None) -> Any:
        target = column.ref or ""
        keys = self.keys.get(target) or []
        if not keys:
            return None
        if member is not None and target in self.members:
            employer = self.pop.employer_of(member)
            for key, cast in zip(keys, self.members[target], strict=False):
                if cast.id in (getattr(employer, "id", None), member.id):
                    return key
        return rng.choice(keys)

    def _context(self, entity: EntityDef, i: int, rng: random.Random, refs: dict[str, Any]) -> RowContext:
        cast = self.members.get(entity.name)
        subject = cast[i - 1] if cast and i - 1 < len(cast) else None
        staff = None
        org: Organisation | None = None
        for column in entity.columns:
            if column.ref is None or refs.get(column.name) is None:
                continue
            found = self.member_of(column.ref, refs[column.name])
            role = self.roles.get(column.ref)
            if found is None:
                continue
            if (
                role == "staff"
                and staff is None
                and (subject is not None or self.domain not in DEFAULT_PARTY)
            ):
                staff = found
            elif isinstance(found, Organisation) and org is None:
                org = found
            elif subject is None:
                subject = found
        if subject is None:
            party = DEFAULT_PARTY.get(self.domain, "customer")
            pool = self.pop.pool(party)
            subject = pool[min(int(rng.expovariate(1 / 25)), len(pool) - 1)]
        if isinstance(subject, Organisation):
            org = subject
        if staff is None:
            pool = self.pop.pool("staff")
            staff = pool[min(int(rng.expovariate(1 / 20)), len(pool) - 1)]
        noun = " ".join(split_words(entity.name)) or "record"
        head = "".join(w[0] for w in split_words(entity.name)).upper()[:3] or "REF"
        return RowContext(
            rng=rng,
            population=self.pop,
            entity=entity,
            noun=noun,
            subject=subject,
            staff=staff,
            org=org if org is not None else self.pop.employer_of(subject),
            timeline=Timeline.draw(rng),
            reference=f"{head}-{2025 if rng.random() < 0.6 else 2026}-{rng.randint(1, 9999):04d}",
            cast_person=cast is not None and not isinstance(subject, Organisation),
        )

    def _value(self, entity: EntityDef, column: ColumnDef, ctx: RowContext) -> Any:
        if column.type == "json":
            target = column.semantic[3:] if column.semantic and column.semantic.startswith("id:") else None
            if target and self.keys.get(target) and json_type(column.json_schema) == "array":
                return ctx.rng.sample(self.keys[target], k=min(2, len(self.keys[target])))
            return json_value(column.source_name or column.name, column.json_schema, ctx)
        schema = {k: v for k, v in column.json_schema.items() if k not in ("enum", "const", "default")}
        enum = column.enum or self.enums.get((entity.name, column.name))
        if enum:
            schema["enum"] = enum
        elif column.type in ("string", "integer", "number") and "default" in column.json_schema:
            schema["default"] = column.json_schema["default"]
        if column.format:
            schema["format"] = column.format
        schema["type"] = column.type
        value = scalar_value(column.source_name or column.name, schema, column.semantic, ctx)
        if value is None and not column.nullable:  # a required field the member cannot fill: who can
            for stand_in in (ctx.org, *self.pop.pool("employer")):
                if stand_in is not None and value is None:
                    saved, ctx.subject = ctx.subject, stand_in
                    value = scalar_value(column.source_name or column.name, schema, column.semantic, ctx)
                    ctx.subject = saved
        return value

    def entity_rows(self, entity: EntityDef) -> list[dict[str, Any]]:
        seen: dict[str, set[Any]] = {}
        keep = {c.name for c in entity.columns if not c.nullable or c.ref or c.semantic in _ALWAYS}
        keep.add(entity.label_column or "")
        rows: list[dict[str, Any]] = []
        self.about[entity.name] = {}
        for i, key in enumerate(self.keys[entity.name], start=1):
            rng = seeded_rng(self.service, entity.name, i)
            cast = self.members.get(entity.name)
            own = cast[i - 1] if cast and i - 1 < len(cast) else None
            refs = {
                c.name: self._pick_ref(c, rng, own) for c in entity.columns if c.ref and not c.primary_key
            }
            ctx = self._context(entity, i, rng, refs)
            row: dict[str, Any] = {}
            for column in entity.columns:
                if column.primary_key:
                    row[column.name] = key
                elif column.ref is not None and refs.get(column.name) is not None:
                    target = refs[column.name]
                    row[column.name] = (
                        str(target) if column.type == "string" and not isinstance(target, str) else target
                    )
                elif column.name not in keep and rng.random() < 0.05:
                    row[column.name] = None
                else:
                    row[column.name] = self._value(entity, column, ctx)
            cohere(entity, row, self.entities, self.rows, ctx)
            for column in entity.columns:
                last = (split_words(column.name) or [""])[-1]
                typed = column.semantic is not None or column.format is not None  # a phone, a postcode
                if (
                    column.type == "string"
                    and not column.enum
                    and not typed
                    and last in _UNIQUE_WORDS
                    and row[column.name] is not None
                ):
                    row[column.name] = _unique(row[column.name], seen.setdefault(column.name, set()), i)
            rows.append(row)
            self.about[entity.name][key] = ctx.subject
        self.rows[entity.name] = {r[entity.pk]: r for r in rows}
        return sorted(rows, key=lambda r: r[entity.pk])

    def cast_record(self) -> dict[str, dict[str, Any]]:
        roles = {self.entities[n].table: r for n, r in sorted(self.roles.items())}
        rows = {
            self.entities[name].table: {
                str(k): m.id for k, m in sorted(about.items(), key=lambda x: str(x[0]))
            }
            for name, about in sorted(self.about.items())
        }
        return {"roles": roles, "rows": rows}


def _unique(value: Any, seen: set[Any], i: int) -> Any:
    if value not in seen:
        seen.add(value)
        return value
    candidate = f"{value}-{i}" if isinstance(value, str) else value
    seen.add(candidate)
    return candidate


def seed_data(
    service: str,
    entities: list[EntityDef],
    counts: dict[str, int] | None = None,
    *,
    domain: str = "general",
    enums: dict[tuple[str, str], list[Any]] | None = None,
    pop: Population | None = None,
) -> SeedData:
    """Rows for every entity (``{table: [row, ...]}``, sorted by key) and the cast they came from.

    ``enums`` gives columns without an enum of their own the enum a tool declares for them
    (a list filter's ``status``), so filters match the seed.
    """
    counts = counts or {}
    sizes = {e.name: counts.get(e.name, row_count(service, e.name)) for e in entities}
    seeder = _Seeder(service, entities, sizes, domain, enums or {}, pop or population())
    rows = {e.table: seeder.entity_rows(e) for e in _order(entities)}
    return SeedData(rows={t: rows[t] for t in sorted(rows)}, cast=seeder.cast_record())


def seed_rows(
    service: str, entities: list[EntityDef], counts: dict[str, int] | None = None, **options: Any
) -> dict[str, list[dict[str, Any]]]:
    """``{table: [row, ...]}`` for every entity; rows keyed by column name, sorted by key."""
    return seed_data(service, entities, counts, **options).rows
