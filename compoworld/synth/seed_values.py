"""One seed value for one field: by semantic type, from the member the row is about.

A row has a context: the member it was cast from or concerns (``subject``), a member of staff
who works on it, the organisation involved, and a timeline its dates fall on. A field's
value comes, in order, from the schema (``const``, enum), its format, its semantic type
(answered by the member: their email, phone, IBAN, address, currency...), rules for names
that carry a known kind of value (a middle name, a department, a file name), the shape of the
spec's own ``example`` (``OIT00546`` -> ``OIT83120``), and last free text that reads like the
field (``compoworld.prose``). Nothing falls back to a word pair.
"""

from __future__ import annotations

import random
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import phonenumbers
import pycountry
from schwifty import BIC, IBAN

from compoworld import prose
from compoworld.manifest import EntityDef
from compoworld.population import ANCHOR_DATE, Member, Organisation, Person, Population
from compoworld.specs.semantic import value_tag
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.casting import field_role
from compoworld.values import fit_string

__all__ = ["RowContext", "json_value", "scalar_value"]

_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
}
_ANCHOR = datetime(ANCHOR_DATE.year, ANCHOR_DATE.month, ANCHOR_DATE.day, 12, 0, tzinfo=UTC)
_CREATED = frozenset(
    {"created", "registered", "joined", "opened", "issued", "inserted", "submitted", "added", "signup"}
)
_UPDATED = frozenset({"updated", "modified", "changed", "edited", "last", "synced", "refreshed"})
_START = frozenset(
    {"start", "starts", "begin", "begins", "from", "since", "effective", "checkin", "departure"}
)
_END = frozenset(
    {"end", "ends", "until", "to", "checkout", "arrival", "finish", "finished", "expires", "expiry"}
)
_DUE = frozenset({"due", "deadline", "expiration", "valid", "renewal", "renews", "cutoff"})
_DONE = frozenset(
    {"completed", "closed", "resolved", "paid", "sent", "delivered", "deleted", "cancelled", "canceled"}
)
_DONE |= frozenset(
    {"approved", "rejected", "archived", "published", "accepted", "read", "opened_at", "processed"}
)
_BIRTH = frozenset({"birth", "birthday", "dob", "birthdate"})
#: Types only a member can give: absent from the member, the field stays empty rather than made up.
_ID_LAST = frozenset({"id", "ids", "code", "number", "key", "ref", "uuid"})
_MEMBER_TYPED = frozenset(
    {"iban", "bic", "email", "phone", "company_name", "person_name", "first_name", "last_name"}
)
_DEPARTMENTS = (
    "Sales",
    "Engineering",
    "Marketing",
    "Finance",
    "Customer Support",
    "Operations",
    "Legal",
    "People",
)
_MIME = ("application/pdf", "image/png", "image/jpeg", "text/csv", "application/zip")
_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:# -]*$")
_IMAGE = frozenset({"image", "photo", "avatar", "logo", "picture", "icon", "thumbnail"})
_LABELS = frozenset({"tag", "tags", "label", "labels", "keyword", "keywords", "segment", "segments"})
_STATUSES = ("active", "pending", "completed", "archived", "open", "closed")
_PRIORITIES = ("low", "normal", "high", "urgent")
_MONEY_WORDS = frozenset({"revenue", "amount", "price", "cost", "balance", "budget", "salary"})


@dataclass
class Timeline:
    """The dates of one row: created <= updated <= today; start <= end; issued <= due."""

    created: datetime
    start: datetime
    end: datetime
    due: datetime

    @classmethod
    def draw(cls, rng: random.Random) -> Timeline:
        created = _ANCHOR - timedelta(
            days=rng.randint(5, 400), hours=rng.randint(0, 9), minutes=15 * rng.randint(0, 3)
        )
        start = created + timedelta(days=rng.randint(0, 60), hours=rng.randint(0, 6))
        end = start + (
            timedelta(hours=rng.choice((1, 2, 3)))
            if rng.random() < 0.5
            else timedelta(days=rng.randint(1, 30))
        )
        due = created + timedelta(days=rng.choice((14, 30, 30, 45, 60)))
        return cls(created, start, end, due)

    def moment(self, name: str, rng: random.Random) -> datetime:
        words = set(split_words(name))
        joined = "".join(split_words(name))
        if words & _UPDATED:
            span = max(int((_ANCHOR - self.created).total_seconds() // 3600), 1)
            return self.created + timedelta(hours=rng.randint(0, span))
        if words & _DONE or joined in ("checkedout",):
            span = max(int((_ANCHOR - self.created).total_seconds() // 3600), 1)
            return self.created + timedelta(hours=rng.randint(1, span))
        if words & _END or "checkout" in joined:
            return self.end
        if words & _START or "checkin" in joined:
            return self.start
        if words & _DUE:
            return self.due
        return self.created


@dataclass
class RowContext:
    """What the values of one row agree on."""

    rng: random.Random
    population: Population
    entity: EntityDef
    noun: str
    subject: Member
    staff: Member
    org: Organisation | None
    timeline: Timeline
    reference: str
    cast_person: bool = False
    extras: dict[str, Member] = field(default_factory=dict)

    def member_for(self, name: str) -> Member:
        """Whose value a field holds: staff for an owner or assignee, a supplier for a vendor, else the subject."""
        role = field_role(name)
        if role == "staff":
            return self.staff
        if role == "supplier":
            if "supplier" not in self.extras:
                self.extras["supplier"] = self.rng.choice(self.population.pool("supplier"))
            return self.extras["supplier"]
        return self.subject

    def topic(self, member: Member) -> prose.Topic:
        org = self.organisation_of(member)
        day = self.timeline.due if self.rng.random() < 0.5 else self.timeline.start
        return prose.Topic(
            noun=self.noun,
            person=member.name,
            first=getattr(member, "first_name", member.name.split()[0]),
            company=org.name if org is not None else member.name,
            city=member.address.city,
            day=f"{day.day} {day:%B %Y}",
            amount=f"{self.rng.randint(40, 4000):,}.00 {member.currency}",
            reference=self.reference,
            pitch=self.population.pitch(member),
            job=getattr(member, "job_title", "Manager"),
        )

    def organisation_of(self, member: Member) -> Organisation | None:
        if isinstance(member, Organisation):
            return member
        if member is self.subject and self.org is not None:
            return self.org
        return self.population.employer_of(member)

    def person_of(self, member: Member) -> Person | None:
        if isinstance(member, Person):
            return member
        return self.population.contact_at(member)


def _iso(moment: datetime, fmt: str, schema: dict[str, Any] | None = None) -> str:
    """The moment as ISO 8601 in the rendering the field's pattern or example asks for."""
    if fmt == "date":
        return moment.date().isoformat()
    forms = [
        moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        moment.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
        moment.strftime("%Y-%m-%dT%H:%M:%S"),
    ]
    schema = schema or {}
    low, high = schema.get("minLength"), schema.get("maxLength")
    fitting = [
        f
        for f in forms
        if (not isinstance(low, int) or len(f) >= low) and (not isinstance(high, int) or len(f) <= high)
    ]
    forms = fitting or forms
    example, pattern = schema.get("example"), schema.get("pattern")
    if isinstance(example, str) and re.search(r"\.\d+Z$", example) and len(forms) > 1:
        forms.sort(key=lambda f: "." not in f)
    if isinstance(pattern, str):
        try:
            return next((f for f in forms if re.search(pattern, f)), forms[0])
        except re.error:
            return forms[0]
    return forms[0]


def _country_value(code: str, schema: dict[str, Any], words: set[str]) -> str:
    """The country in the form the field wants: alpha-2 by default, alpha-3 or a name when it says so."""
    found = pycountry.countries.get(alpha_2=code)
    text = f"{schema.get('description', '')} {schema.get('pattern', '')}".lower()
    if found is None:
        return code
    if "alpha-3" in text or "alpha3" in text or "{3}" in text or schema.get("minLength") == 3:
        return str(found.alpha_3)
    if "name" in words:
        return str(found.name)
    return code


def semantic_value(semantic: str, name: str, schema: dict[str, Any], ctx: RowContext) -> Any:
    """The member's value for a semantic type (None when the type says nothing about members)."""
    member = ctx.member_for(name)
    person = ctx.person_of(member)
    org = ctx.organisation_of(member)
    words = set(split_words(name))
    address = member.address
    table: dict[str, Any] = {
        "email": lambda: member.email if person is None or member is not person else person.email,
        "phone": lambda: member.phone,
        "person_name": lambda: person.name if person is not None else None,
        "first_name": lambda: person.first_name if person is not None else None,
        "last_name": lambda: person.last_name if person is not None else None,
        "company_name": lambda: org.name if org is not None else None,
        "address": lambda: address.street,
        "city": lambda: address.city,
        "postal_code": lambda: address.postal_code,
        "country": lambda: _country_value(member.country, schema, words),
        "currency": lambda: member.currency,
        "language": lambda: member.locale if words & {"locale"} else member.language,
        "timezone": lambda: member.timezone,
        "iban": lambda: member.iban,
        "bic": lambda: member.bic,
        "url": lambda: _url(name, member, org, ctx.rng),
        "ip": lambda: f"203.0.113.{ctx.rng.randint(1, 254)}",
        "uuid": lambda: str(uuid.UUID(int=ctx.rng.getrandbits(128), version=4)),
        "color": lambda: f"#{ctx.rng.randint(0, 0xFFFFFF):06x}",
    }
    if semantic in ("date", "date-time"):
        if words & _BIRTH and person is not None:
            born = datetime.fromisoformat(person.birthday).replace(tzinfo=UTC)
            return _iso(born, semantic, schema)
        return _iso(ctx.timeline.moment(name, ctx.rng), semantic, schema)
    own = ctx.cast_person and member is ctx.subject and person is not None
    if semantic == "title" and own and person is not None and words & {"title", "job", "position"}:
        return person.job_title
    if semantic == "title":
        return prose.title_text(ctx.topic(member), ctx.rng)
    if semantic == "text":
        last = split_words(name)[-1] if split_words(name) else "description"
        if last in ("note", "notes", "comment", "comments", "remarks", "memo"):
            return prose.note_text(ctx.topic(member), ctx.rng)
        return prose.body_text(ctx.topic(member), ctx.rng, last)
    if semantic == "status":
        return None
    make = table.get(semantic)
    return make() if make is not None else None


def _url(name: str, member: Member, org: Organisation | None, rng: random.Random) -> str:
    words = set(split_words(name))
    site = org.website if org is not None else f"https://www.{member.domain}"
    if words & {"image", "photo", "avatar", "logo", "picture", "icon", "thumbnail"}:
        return f"https://cdn.{site.removeprefix('https://www.')}/images/{rng.randint(1000, 99999)}.png"
    if words & {"linkedin"}:
        return f"https://www.linkedin.com/in/{member.email.partition('@')[0].replace('.', '-')}"
    if words & {"website", "homepage", "site", "web"} or not words - {"url", "uri"}:
        return site
    slug = "-".join(w for w in split_words(name) if w not in ("url", "uri", "link", "href"))[:30] or "page"
    return f"{site}/{slug}/{rng.randint(100, 99999)}"


def _bank(name: str, member: Member) -> str | None:
    """Bank details of the member's account, read from its IBAN and BIC by schwifty."""
    words = set(split_words(name))
    if member.iban is None:
        return None
    iban = IBAN(member.iban)
    if "bic" in words or "swift" in words:
        return member.bic
    if words & {"iban"}:
        return member.iban
    if "name" in words and "bank" in words:
        names = BIC(member.bic).bank_names if member.bic else []
        return names[0] if names else None
    if words & {"sort", "routing", "bank"} and words & {"code", "number", "id"}:
        return iban.bank_code or None
    if words & {"branch"}:
        return iban.branch_code or None
    if "account" in words and words & {"number", "no", "num"}:
        return iban.account_code
    if "account" in words and "name" in words:
        return member.name
    return None


def _named(name: str, schema: dict[str, Any], ctx: RowContext) -> str | None:
    """Values whose kind the field's name gives away (a middle name, a department, a hash)."""
    rng = ctx.rng
    w = split_words(name)
    last = w[-1] if w else ""
    words = set(w)
    member = ctx.member_for(name)
    person = ctx.person_of(member)
    if words & {"bank", "iban", "bic", "swift", "account"} and (found := _bank(name, member)) is not None:
        return found
    if last == "prefix" or "salutation" in words:
        if person is not None and rng.random() < 0.8:
            return "Ms." if person.gender == "female" else "Mr."
        return rng.choice(("Dr.", "Mx."))
    if last == "suffix":
        return rng.choice(("Jr.", "Sr.", "PhD", "MBA"))
    if "middle" in words:
        return rng.choice("ABCDEFGHJKLMNPRSTW") + "."
    if last in ("initials",) and person is not None:
        return f"{person.first_name[:1]}{person.last_name[:1]}".upper()
    if (
        last in ("by", "author", "owner", "assignee", "reporter", "creator")
        and schema.get("type") != "object"
    ):
        return ctx.staff.name
    if last in ("department", "division", "team"):
        return rng.choice(_DEPARTMENTS)
    if (
        words & {"job", "occupation", "profession", "position"}
        and person is not None
        and last not in _ID_LAST
    ):
        return person.job_title
    if last in ("username", "login", "handle", "nickname") and person is not None:
        return person.username
    if last in ("domain", "hostname", "host", "subdomain"):
        return member.domain
    if words & _IMAGE:
        return _url(name, member, ctx.organisation_of(member), rng)
    if last in ("etag", "hash", "checksum", "fingerprint", "digest"):
        return f"{rng.getrandbits(64):016x}"
    if last in ("token", "secret", "password", "key") and "api" not in words:
        return f"{rng.getrandbits(96):024x}"
    if last in ("mime", "mimetype") or (last == "type" and "mime" in words):
        return rng.choice(_MIME)
    if last in ("location", "place", "venue"):
        return f"{member.address.city}, {member.address.country}"
    if last in ("lat", "latitude"):  # a coordinate typed as text (Weatherbit's ``lat: "38.12"``)
        return f"{rng.uniform(35.0, 60.0):.2f}"
    if last in ("lon", "lng", "longitude"):  # not an acronym's code (``LON-507537``)
        return f"{rng.uniform(-10.0, 25.0):.2f}"
    if last in ("region", "state", "province", "county") and not schema.get("enum"):
        return member.address.region or member.address.city
    if last == "gender" and person is not None:
        return person.gender
    if last == "industry":
        return prose.industry_text(rng)
    if last == "reason":
        return prose.reason_text(rng)
    if last in _LABELS:
        return prose.label_text(ctx.topic(member), rng)
    if last == "priority":
        return _from_example(schema.get("example"), rng) or rng.choice(_PRIORITIES)
    if last in ("status", "state", "stage"):
        return _from_example(schema.get("example"), rng) or rng.choice(_STATUSES)
    if words & _MONEY_WORDS and not words & {"name", "type", "code", "id"}:
        return f"{rng.randint(1000, 250000)}.00"
    if last in ("path",):
        return f"/{ctx.noun.replace(' ', '-')}s/{rng.randint(1000, 9999)}"
    return None


def _from_example(example: Any, rng: random.Random) -> str | None:
    """A value shaped like the spec's example: its digits redrawn (``OIT00546`` -> ``OIT83120``)."""
    if not isinstance(example, str) or not example or len(example) > 60:
        return None
    digits = sum(c.isdigit() for c in example)
    if (
        _CODE.fullmatch(example)
        and digits
        and (" " not in example or digits * 2 >= len(example.replace(" ", "")))
    ):
        return "".join(rng.choice("0123456789") if c.isdigit() else c for c in example)
    if re.fullmatch(r"[a-z][a-z_-]{1,24}", example):  # a category word: "cash", "email", "primary"
        return example
    return None


def _text(name: str, schema: dict[str, Any], semantic: str | None, ctx: RowContext) -> str | None:
    fmt = schema.get("format")
    value: Any = None
    if isinstance(fmt, str) and fmt in (
        "date",
        "date-time",
        "email",
        "uri",
        "url",
        "uuid",
        "ipv4",
        "ipv6",
        "hostname",
        "byte",
        "time",
    ):
        value = _format_value(fmt, name, schema, ctx)
    if value is None and semantic:
        value = semantic_value(semantic, name, schema, ctx)
        if value is None and semantic in _MEMBER_TYPED:  # the member has none (a US customer's IBAN)
            return None
    if value is None:
        value = _named(name, schema, ctx)
    if value is None:
        value = _from_example(schema.get("example"), ctx.rng)
    if value is None:
        value = _fallback(name, ctx)
    return fit_string(str(value), schema, ctx.rng)


def _format_value(fmt: str, name: str, schema: dict[str, Any], ctx: RowContext) -> Any:
    if fmt in ("date", "date-time"):
        return semantic_value(fmt, name, schema, ctx)
    if fmt == "email":
        return ctx.member_for(name).email
    if fmt in ("uri", "url"):
        member = ctx.member_for(name)
        return _url(name, member, ctx.organisation_of(member), ctx.rng)
    if fmt == "uuid":
        return str(uuid.UUID(int=ctx.rng.getrandbits(128), version=4))
    if fmt == "ipv4":
        return f"203.0.113.{ctx.rng.randint(1, 254)}"
    if fmt == "ipv6":
        return f"2001:db8::{ctx.rng.randint(1, 65535):x}"
    if fmt == "hostname":
        return ctx.member_for(name).domain
    if fmt == "byte":
        return "UmVjZWlwdCBhdHRhY2hlZA=="
    if fmt == "time":
        return f"{ctx.rng.randint(8, 18):02d}:{ctx.rng.choice((0, 15, 30, 45)):02d}:00"
    return None


def _fallback(name: str, ctx: RowContext) -> str:
    """Text for a field nothing else knows: a code for code-like names, else a label or title."""
    w = split_words(name)
    last = w[-1] if w else ""
    if last in ("code", "sku", "number", "reference", "ref", "num", "no", "identifier"):
        head = "".join(x[0] for x in w[:-1]).upper() or ctx.noun[:3].upper()
        return f"{head[:3]}-{ctx.rng.randint(10000, 99999)}"
    if last in ("id", "uuid", "guid", "ids"):
        return f"{ctx.rng.getrandbits(40):010x}"
    if last in ("version", "revision", "sequence", "position", "rank", "digits", "extension", "pin"):
        return str(ctx.rng.randint(1, 99))
    if last in (
        "type",
        "kind",
        "category",
        "source",
        "channel",
        "segment",
        "tier",
        "level",
        "method",
        "mode",
    ):
        return ctx.rng.choice(("standard", "online", "referral", "partner", "direct", "internal"))
    if len(w) == 1 and len(last) <= 4:  # an acronym-like name (acn, abn, ein): an identifier
        return f"{last.upper()}-{ctx.rng.randint(100000, 999999)}"
    return prose.title_text(ctx.topic(ctx.member_for(name)), ctx.rng)


def _number(name: str, schema: dict[str, Any], semantic: str | None, integer: bool, ctx: RowContext) -> float:
    w = set(split_words(name))
    rng = ctx.rng
    if semantic == "phone":
        return int(ctx.member_for(name).phone.lstrip("+"))
    if semantic == "quantity" or w & {"quantity", "qty", "units"}:
        low, high, integer = 1.0, 20.0, True
    elif (
        w & {"count", "total", "number", "num"}
        and not w & {"amount", "price", "cost"}
        and semantic != "money"
    ):
        low, high, integer = 0.0, 250.0, True
    elif semantic == "percent" or w & {"percent", "percentage", "pct", "probability"}:
        low, high = 0.0, 100.0
    elif w & {"rate"}:
        low, high = 0.0, 25.0
    elif w & {"year"}:
        low, high = 2020.0, 2030.0 if w & {"expiry", "expiration", "exp"} else 2025.0
    elif w & {"month"}:
        low, high, integer = 1.0, 12.0, True
    elif w & {"age"}:
        low, high = 18.0, 80.0
    elif w & {"latitude", "lat"}:
        low, high = 35.0, 60.0
    elif w & {"longitude", "lng", "lon"}:
        low, high = -10.0, 25.0
    elif semantic == "money":
        low, high = 20.0, 5000.0
    else:
        low, high = 1.0, 1000.0
    lo, hi = _bounded(schema, low, high)
    if integer:
        return rng.randint(int(lo), max(int(lo), int(hi)))
    return round(rng.uniform(lo, hi), 2)


def _bounded(schema: dict[str, Any], low: float, high: float) -> tuple[float, float]:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    lo = lo if isinstance(lo, (int, float)) and not isinstance(lo, bool) else low
    hi = hi if isinstance(hi, (int, float)) and not isinstance(hi, bool) else high
    if hi < lo:
        hi = lo
    if lo > high or hi < low:
        return lo, hi
    return max(lo, low), min(hi, high)


def _enum_choice(
    enum: list[Any], name: str, semantic: str | None, schema: dict[str, Any], ctx: RowContext
) -> Any:
    """An enum value; for a country, currency or language enum the member's own, when it is listed."""
    wanted: Any = None
    if semantic in ("country", "currency", "language", "timezone"):
        wanted = semantic_value(semantic, name, schema, ctx)
    elif split_words(name)[-1:] in (["gender"], ["sex"]):
        person = ctx.person_of(ctx.member_for(name))
        wanted = person.gender if person is not None else None
    if wanted is not None:
        for value in enum:
            if isinstance(value, str) and isinstance(wanted, str) and value.lower() == wanted.lower():
                return value
    usable = [v for v in enum if not (isinstance(v, str) and v.upper().startswith("UNKNOWN"))] or enum
    return ctx.rng.choice(usable)


def scalar_value(name: str, schema: dict[str, Any], semantic: str | None, ctx: RowContext) -> Any:
    """A value for one scalar field."""
    if "const" in schema:
        return schema["const"]
    enum = [v for v in schema.get("enum") or [] if v is not None]
    if enum:
        return _enum_choice(enum, name, semantic, schema, ctx)
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
        return _number(name, schema, semantic, kind == "integer", ctx)
    return _text(name, schema, semantic, ctx)


def json_value(
    name: str, schema: dict[str, Any], ctx: RowContext, depth: int = 0, scope: str | None = None
) -> Any:
    """A small value conforming to a nested schema; its fields typed by their names like columns.

    ``scope`` is what the enclosing container holds (``phone_numbers`` -> phone), so a bare
    ``number`` or ``value`` inside it is that type, and a phone's ``country_code`` its dialling code.
    """
    kind = json_type(schema)
    if kind in ("array", "object") or "properties" in schema:
        container = value_tag(name, {"type": "string"})
        inner = container if container in ("email", "phone", "url", "address") else scope
        if kind == "array":
            raw_items = schema.get("items")
            items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {"type": "string"}
            count = 0 if depth > 2 else ctx.rng.randint(1, 2)
            return [json_value(name, items, ctx, depth + 1, inner) for _ in range(count)]
        raw_props = schema.get("properties")
        props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        required = set(schema.get("required") or [])
        optional = sorted((k for k in props if k not in required), key=_rank)
        keys = [k for k in props if k in required] + optional[: max(0, 12 - len(required))]
        if depth > 2:
            keys = [k for k in keys if k in required]
        out: dict[str, Any] = {}
        for k in sorted(keys, key=list(props).index):
            if isinstance(props[k], dict):
                value = json_value(_scoped(name, k), props[k], ctx, depth + 1, inner)
                if value is not None or _nullable(props[k]):  # a member without an IBAN: leave it out
                    out[k] = value
        return out
    if _unsatisfiable(schema):  # ``enum: [MALE, FEMALE]`` with ``maxLength: 1``: no value is valid
        return None
    scoped = _in_scope(name, schema, scope, ctx)
    if scoped is not None:
        return scoped
    semantic = value_tag(name, schema)
    if kind is None:
        return _text(name, {}, semantic, ctx)
    return scalar_value(name, schema, semantic, ctx)


_RANKED = (
    frozenset({"amount", "total", "price", "quantity", "qty", "unit", "currency", "subtotal"}),
    frozenset(
        {"name", "email", "phone", "title", "description", "status", "date", "street", "city", "country"}
    ),
    frozenset({"id", "code", "number", "url", "postal", "line1", "type"}),
)


def _rank(key: str) -> int:
    """Which nested fields to fill first: money and quantities, then identity and place, then ids."""
    words = set(split_words(key))
    return next((i for i, group in enumerate(_RANKED) if words & group), len(_RANKED))


def _unsatisfiable(schema: dict[str, Any]) -> bool:
    """Whether a text enum's every value breaks the field's own length bounds (the member is left out)."""
    values = schema.get("enum")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        return False
    low, high = schema.get("minLength"), schema.get("maxLength")
    fits = [
        v
        for v in values
        if not (isinstance(high, int) and len(v) > high) and not (isinstance(low, int) and len(v) < low)
    ]
    return not fits


def _nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return bool(schema.get("nullable")) or kind == "null" or (isinstance(kind, list) and "null" in kind)


def _in_scope(name: str, schema: dict[str, Any], scope: str | None, ctx: RowContext) -> Any:
    """A container's own kind of value for its generic fields (``phone_numbers[].number``)."""
    if scope is None or schema.get("enum") or json_type(schema) not in (None, "string"):
        return None
    last = (split_words(name) or [""])[-1]
    member = ctx.member_for(name)
    if scope == "phone":
        number = phonenumbers.parse(member.phone)
        if last in ("number", "value", "phone", "address", "msisdn"):
            return member.phone
        if last == "code" and "country" in split_words(name):
            return f"+{number.country_code}"
        if last == "code" and "area" in split_words(name):
            return str(number.national_number)[:3]
    if scope == "email" and last in ("email", "value", "address", "mail"):
        return member.email
    if scope == "url" and last in ("url", "value", "link", "href", "uri"):
        return _url(name, member, ctx.organisation_of(member), ctx.rng)
    return None


def _scoped(parent: str, child: str) -> str:
    """A nested field's name with its parent's role words kept (``owner.email`` -> ``owner_email``)."""
    role = field_role(parent)
    return f"{parent}_{child}" if role is not None else child
