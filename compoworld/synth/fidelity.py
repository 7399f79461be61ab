"""The seed fidelity checker: are a library's seed values real-looking, valid and coherent?

Over every service folder of a library (``seed.json`` read with its ``manifest.json``), it
measures what issue "Faithful services" asks of seed data:

- **typed fields valid**: every email, phone, IBAN, BIC, currency, country, language, URL and
  date value, at any depth, checked by a validating library (``compoworld.synth.fidelity_checks``);
  a field's kind comes from its format and its name (the ingestion tagger), not from how the
  generator made it;
- **fillers**: phrases of plain words in typed or identifier fields ("Plan urgent" as an IBAN);
- **date order**: created <= updated, start <= end, issued <= due, within each object;
- **coherence**: in each object (with its address), the country agrees with the postcode's
  format, the phone's region, the currency and the IBAN's country;
- **integer counts** and **line items** that sum to their stated totals;
- **keys** shared by two services, and the **population overlap**: how many people and
  organisations (by ``population.json``, and independently by email) recur in 2+ services.

``check_library(folders)`` returns a ``FidelityReport``; ``bench/seed_fidelity.py`` runs it over
the starter library and a corpus sample and prints the figures in ``docs/fidelity.md``.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from compoworld.manifest import EntityDef, load_manifest
from compoworld.specs.semantic import tag
from compoworld.specs.words import split_words
from compoworld.synth.fidelity_checks import (
    TYPED_KINDS,
    country_code,
    currencies_of,
    is_filler,
    parse_moment,
    phone_region,
    postcode_fits,
    valid,
)

__all__ = ["FidelityReport", "Tally", "check_library", "field_kind"]

_FORMATS = {"email": "email", "idn-email": "email", "uri": "url", "url": "url", "date": "date"}
_FORMATS |= {"date-time": "date", "iri": "url"}
_SEMANTICS = {k: k for k in TYPED_KINDS} | {"date-time": "date"}
_ID_WORDS = frozenset({"code", "number", "no", "reference", "ref", "id", "sku", "year", "month", "zip"})
_ID_WORDS |= frozenset({"postcode", "fax", "mobile", "domain", "version", "iban", "bic", "swift"})
#: Date pairs whose order is a rule of the world: (earlier words, later words), same other words.
_PAIRS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        frozenset({"created", "registered", "inserted", "added"}),
        frozenset({"updated", "modified", "changed", "edited"}),
    ),
    (
        frozenset({"start", "starts", "started", "begin", "begins"}),
        frozenset({"end", "ends", "ended", "finish", "until"}),
    ),
    (frozenset({"issued", "issue", "invoice", "bill"}), frozenset({"due"})),
    (frozenset({"checkin"}), frozenset({"checkout"})),
    (frozenset({"from"}), frozenset({"to"})),
    (frozenset({"opened"}), frozenset({"closed"})),
)
_PAIR_WORDS: frozenset[str] = frozenset().union(*(a | b for a, b in _PAIRS))
_COUNT_WORDS = frozenset({"count", "quantity", "qty"})
_MAX_EXAMPLES = 12


class Tally(BaseModel):
    """How many values were checked and how many failed, with a few of the failures."""

    checked: int = Field(default=0, description="Values checked.")
    failed: int = Field(default=0, description="Values that failed.")
    examples: list[str] = Field(
        default_factory=list, description="Some failures: service.table.field = value."
    )

    def add(self, ok: bool, where: str, value: Any) -> None:
        self.checked += 1
        if not ok:
            self.failed += 1
            if len(self.examples) < _MAX_EXAMPLES:
                self.examples.append(f"{where} = {json.dumps(value, ensure_ascii=False, default=str)[:80]}")

    @property
    def share(self) -> float:
        return 1.0 if not self.checked else (self.checked - self.failed) / self.checked


class FidelityReport(BaseModel):
    """Seed fidelity figures of one library."""

    services: int = Field(default=0, description="Service folders checked.")
    rows: int = Field(default=0, description="Seed rows read.")
    typed: dict[str, Tally] = Field(default_factory=dict, description="Validity per typed kind.")
    fillers: Tally = Field(
        default_factory=Tally, description="Typed or identifier values that are word phrases."
    )
    date_order: Tally = Field(default_factory=Tally, description="Date pairs in the right order.")
    coherence: dict[str, Tally] = Field(default_factory=dict, description="Country agreement per field kind.")
    integer_counts: Tally = Field(
        default_factory=Tally, description="Counts and quantities that are integers."
    )
    line_totals: Tally = Field(default_factory=Tally, description="Line items whose total is qty x price.")
    shared_keys: int = Field(default=0, description="Key strings used by 2+ services.")
    members_seen: int = Field(default=0, description="Population members cast into any service.")
    people_in_2plus: int = Field(default=0, description="People cast into 2+ services (population.json).")
    orgs_in_2plus: int = Field(default=0, description="Organisations cast into 2+ services.")
    emails_in_2plus: int = Field(default=0, description="Email values found in 2+ services' seeds.")

    @property
    def typed_valid_share(self) -> float:
        checked = sum(t.checked for t in self.typed.values())
        failed = sum(t.failed for t in self.typed.values())
        return 1.0 if not checked else (checked - failed) / checked


def field_kind(name: str, schema: dict[str, Any], semantic: str | None = None) -> str | None:
    """The typed kind of a field (email, phone, iban...), from its format, else its tag; None if untyped."""
    fmt = schema.get("format") if isinstance(schema, dict) else None
    if isinstance(fmt, str) and fmt.lower() in _FORMATS:
        return _FORMATS[fmt.lower()]
    found = semantic if semantic and not semantic.startswith("id:") else tag(name, schema or {})
    return _SEMANTICS.get(found) if isinstance(found, str) else None


class _Checker:
    def __init__(self, report: FidelityReport) -> None:
        self.report = report

    def value(self, where: str, name: str, schema: dict[str, Any], value: Any, semantic: str | None) -> None:
        if value is None:
            return
        if isinstance(value, dict):
            self.object(where, schema, value)
            return
        if isinstance(value, list):
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
            for item in value:
                self.value(where, name, items or {}, item, semantic)
            return
        words = split_words(name)
        kind = field_kind(name, schema, semantic) if not schema.get("enum") else None
        if kind == "country" and "phone" in split_words(where.rsplit(".", 2)[-2] if "." in where else ""):
            kind = None  # a phone number's country_code is its dialling code (+44), not a country
        if kind is not None:
            self.report.typed.setdefault(kind, Tally()).add(valid(kind, value), where, value)
        if kind is not None or (words and words[-1] in _ID_WORDS):
            self.report.fillers.add(not is_filler(value), where, value)
        if (
            words
            and words[-1] in _COUNT_WORDS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            self.report.integer_counts.add(float(value).is_integer(), where, value)

    def object(
        self, where: str, schema: dict[str, Any], obj: dict[str, Any], semantics: dict[str, str] | None = None
    ) -> None:
        props = _properties(schema)
        for key, value in obj.items():
            found = props.get(key)
            sub: dict[str, Any] = found if isinstance(found, dict) else {}
            self.value(f"{where}.{key}", key, sub, value, (semantics or {}).get(key))
        self.dates(where, obj)
        self.agreement(where, obj, schema, semantics or {})
        self.lines(where, obj)

    def dates(self, where: str, obj: dict[str, Any]) -> None:
        stamps: list[tuple[str, set[str], tuple[str, ...], Any]] = []
        for key, value in obj.items():
            if not isinstance(value, str) or (moment := parse_moment(value)) is None:
                continue
            words = split_words(key)
            tokens = set(words) | {a + b for a, b in itertools.pairwise(words)}  # check, in -> checkin
            rest = tuple(w for w in words if w not in _PAIR_WORDS and w not in ("check", "in", "out"))
            stamps.append((key, tokens, rest, moment))
        for early_words, late_words in _PAIRS:
            for key, tokens, rest, first in stamps:
                if not tokens & early_words:
                    continue
                for other, other_tokens, other_rest, second in stamps:
                    if other != key and other_tokens & late_words and other_rest == rest:
                        a, b = _comparable(first, second)
                        self.report.date_order.add(
                            a <= b, f"{where}.{key}<={other}", [str(first), str(second)]
                        )

    def agreement(
        self, where: str, obj: dict[str, Any], schema: dict[str, Any], semantics: dict[str, str]
    ) -> None:
        scope = dict(obj)
        for key, value in obj.items():  # an object's own address is part of it
            if isinstance(value, dict) and "address" in split_words(key):
                scope.update({k: v for k, v in value.items() if k not in scope})
        props = _properties(schema)
        kinds = {k: field_kind(k, props.get(k) or {}, semantics.get(k)) for k in scope}
        countries = {
            country_code(v) for k, v in scope.items() if kinds[k] == "country" and isinstance(v, str)
        }
        countries.discard(None)
        if len(countries) != 1:
            return
        country = next(iter(countries))
        assert country is not None
        for key, value in scope.items():
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                continue
            words = set(split_words(key))
            if kinds[key] == "phone" and valid("phone", value):
                self.report.coherence.setdefault("phone", Tally()).add(
                    phone_region(value) == country, f"{where}.{key}", [value, country]
                )
            elif kinds[key] == "currency" and valid("currency", value):
                self.report.coherence.setdefault("currency", Tally()).add(
                    value in currencies_of(country), f"{where}.{key}", [value, country]
                )
            elif kinds[key] == "iban" and valid("iban", value):
                self.report.coherence.setdefault("iban", Tally()).add(
                    str(value)[:2] == country, f"{where}.{key}", [value, country]
                )
            elif words & {"postcode", "zip", "zipcode", "postal"} and isinstance(value, str):
                fits = postcode_fits(country, value)
                if fits is not None:
                    self.report.coherence.setdefault("postcode", Tally()).add(
                        fits, f"{where}.{key}", [value, country]
                    )

    def lines(self, where: str, obj: dict[str, Any]) -> None:
        for key, value in obj.items():
            if not isinstance(value, list):
                continue
            for item in value:
                if not isinstance(item, dict):
                    continue
                qty = _number(item, ("quantity", "qty"))
                price = _number(item, ("unit_price", "unitprice", "unit_amount", "price"))
                total = _number(item, ("total_amount", "line_total", "total", "amount"))
                if qty is not None and price is not None and total is not None:
                    self.report.line_totals.add(abs(qty * price - total) <= 0.011, f"{where}.{key}[]", item)


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _number(obj: dict[str, Any], names: tuple[str, ...]) -> float | None:
    for name in names:
        value = obj.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def _comparable(a: Any, b: Any) -> tuple[Any, Any]:
    from datetime import datetime

    if isinstance(a, datetime) and isinstance(b, datetime):
        if (a.tzinfo is None) != (b.tzinfo is None):
            return a.replace(tzinfo=None), b.replace(tzinfo=None)
        return a, b
    return (a.date() if isinstance(a, datetime) else a), (b.date() if isinstance(b, datetime) else b)


def _entity_schema(entity: EntityDef) -> tuple[dict[str, Any], dict[str, str]]:
    props = {c.name: c.json_schema | ({"format": c.format} if c.format else {}) for c in entity.columns}
    semantics = {c.name: c.semantic for c in entity.columns if c.semantic and not c.primary_key and not c.ref}
    return {"type": "object", "properties": props}, semantics


def check_library(folders: Iterable[Path]) -> FidelityReport:
    """Check the seeds of every service folder (each with manifest.json and seed.json)."""
    report = FidelityReport()
    checker = _Checker(report)
    key_owners: dict[str, set[str]] = defaultdict(set)
    cast_owners: dict[str, set[str]] = defaultdict(set)
    email_owners: dict[str, set[str]] = defaultdict(set)
    for folder in sorted(Path(f) for f in folders):
        manifest = load_manifest(folder)
        seed = json.loads((folder / "seed.json").read_text(encoding="utf-8"))
        report.services += 1
        for entity in manifest.entities:
            schema, semantics = _entity_schema(entity)
            for row in seed.get(entity.table, []):
                report.rows += 1
                key_owners[str(row.get(entity.pk))].add(manifest.name)
                where = f"{manifest.name}.{entity.table}"
                checker.object(where, schema, row, semantics)
                for column in entity.columns:
                    value = row.get(column.name)
                    if field_kind(column.name, column.json_schema, column.semantic) == "email" and isinstance(
                        value, str
                    ):
                        email_owners[value.lower()].add(manifest.name)
        cast_path = folder / "population.json"
        if cast_path.exists():
            cast = json.loads(cast_path.read_text(encoding="utf-8"))
            for table, rows in cast.get("rows", {}).items():
                if table in cast.get("roles", {}):
                    for member in rows.values():
                        cast_owners[member].add(manifest.name)
    report.shared_keys = sum(1 for owners in key_owners.values() if len(owners) > 1)
    counts = Counter(m[:3] for m, owners in cast_owners.items() if len(owners) > 1)
    report.members_seen = len(cast_owners)
    report.people_in_2plus = counts["per"]
    report.orgs_in_2plus = counts["org"]
    report.emails_in_2plus = sum(1 for owners in email_owners.values() if len(owners) > 1)
    return report
