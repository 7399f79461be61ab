"""The semantic role vocabulary: what a value means, beyond its JSON type, for every layer.

Ingestion tags parameters and response fields with it, synthesis tags entity columns
with it (and seeds them by it), the graph links tools by it and task generation reads
entity rows through it. There is one tagger (:func:`tag`, :func:`value_tag`) and one
qualifier (:func:`aspect`); their rules are the tables below, read in a fixed order.

Tags (a :class:`~compoworld.specs.model.SemanticType` value, or ``id:<entity>``)::

    person         person_name, first_name, last_name, email, phone
    organisation   company_name
    money          money (an amount), currency (ISO 4217 code), percent, quantity
    time           date, date-time
    place          address (street lines), city, postal_code, country
    locale         language, timezone
    web            url, ip, uuid
    content        title (a short label: subject, headline, summary), text (a body)
    state          status (a lifecycle value), color
    banking        iban, bic
    identity       id:<entity> (the key of a row of that entity: ``contact_id`` -> id:contact)

Aspects (:func:`aspect`) say which one of several same-typed values a field is::

    date, date-time   created, updated, deleted, start, end, due, birth, expiry, sent,
                      paid, completed, published, scheduled, closed
    money             total, subtotal, tax, discount, balance, price, fee, refund, paid, due
    email, phone,     sender, recipient, owner, assignee, billing, shipping, work, home,
    person_name, ...  mobile (the party or use a contact detail belongs to)

:func:`role` gives both at once (a :class:`Role`). The rules favour precision: a
name alone tags only when its JSON type agrees, ids come first, then ``format``, then
the name (and, for ``to``/``from``/``cc``, the description); an enum field keeps only a
tag whose values form a vocabulary (status, currency, country, language...).
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from compoworld.specs.model import SemanticType as S
from compoworld.specs.shapes import primary_type, text_of
from compoworld.specs.words import entity_name, singular, split_words

__all__ = [
    "COMPANY_OWNERS",
    "PERSON_OWNERS",
    "STAMP_ASPECTS",
    "Role",
    "aspect",
    "id_tag",
    "role",
    "tag",
    "value_tag",
]

_FORMATS = {
    "email": S.EMAIL,
    "idn-email": S.EMAIL,
    "uri": S.URL,
    "url": S.URL,
    "uri-reference": S.URL,
    "iri": S.URL,
    "iri-reference": S.URL,
    "uuid": S.UUID,
    "date": S.DATE,
    "date-time": S.DATETIME,
    "datetime": S.DATETIME,
    "ipv4": S.IP_ADDRESS,
    "ipv6": S.IP_ADDRESS,
    "ip": S.IP_ADDRESS,
    "phone": S.PHONE,
    "tel": S.PHONE,
    "phone-number": S.PHONE,
    "currency": S.CURRENCY,
    "iso4217": S.CURRENCY,
    "country": S.COUNTRY,
    "color": S.COLOR,
    "timezone": S.TIMEZONE,
}
_ROLE_PREFIXES = frozenset(
    {"parent", "source", "target", "destination", "dest", "from", "to", "new", "old", "primary"}
    | {"default", "current", "related", "original", "linked", "selected", "main", "unique"}
)
_GENERIC_ID = frozenset(
    {"external", "remote", "request", "correlation", "idempotency", "trace", "unique", "object", "resource"}
    | {"entity", "custom", "internal", "public", "global", "x", "ref", "reference", "foreign", "local"}
)
#: Owners (the word before ``name``, or the entity) whose ``name`` is a person's name.
PERSON_OWNERS = frozenset(
    {"person", "contact", "user", "customer", "employee", "member", "lead", "candidate", "applicant"}
    | {"attendee", "owner", "author", "assignee", "recipient", "sender", "patient", "student", "teacher"}
    | {"guest", "subscriber", "participant", "speaker", "driver", "passenger", "traveler", "reviewer"}
    | {"signer", "consumer", "visitor", "profile", "individual", "reporter", "organizer", "host", "agent"}
)
#: Owners whose ``name`` is an organisation's name.
COMPANY_OWNERS = frozenset(
    {"company", "organization", "organisation", "org", "business", "vendor", "supplier", "merchant"}
    | {"employer", "firm", "brand", "tenant", "workspace", "partner"}
)
_MONEY = frozenset(
    {"amount", "total", "price", "balance", "cost", "subtotal", "tax", "fee", "fees", "salary", "revenue"}
    | {"budget", "discount", "spend", "earnings", "wage", "gross", "net", "paid", "refund", "charge"}
)
_NOT_MONEY = frozenset(
    {"count", "pages", "page", "items", "results", "records", "rate", "percent", "percentage", "quantity"}
    | {"qty", "number", "num", "size", "hits", "id", "ids", "code", "type", "name", "rule", "status", "free"}
)
_ENUM_TAGS = frozenset({S.STATUS, S.CURRENCY, S.COUNTRY, S.LANGUAGE, S.TIMEZONE, S.COLOR})
_HEAD_MODIFIERS = frozenset({"address", "addresses", "number", "numbers", "no", "num", "list", "value"})
_PHONE = frozenset({"phone", "mobile", "tel", "telephone", "fax", "cellphone", "msisdn"})
_URL = frozenset({"url", "uri", "website", "link", "href", "homepage", "webpage", "permalink"})
_COUNT_LIKE = frozenset({"total", "net", "gross", "paid", "charge", "refund"})
_EMAIL_ROLES = frozenset({"to", "from", "cc", "bcc", "reply", "sender", "recipient", "recipients", "replyto"})
_TITLE = frozenset({"title", "subject", "headline", "summary", "label"})
_TEXT = frozenset(
    {"description", "body", "message", "notes", "note", "content", "text", "comment", "comments"}
    | {"details", "bio", "remarks", "memo", "instructions", "caption", "biography", "about"}
)
#: Single-word names that hold a timestamp (Google-style ``updated``, ``due``).
_STAMP_NAMES = frozenset({"created", "updated", "modified", "completed", "due", "published", "expires"})
_STAMP_NAMES |= {"deadline"}
_NUMERIC = frozenset({"number", "integer"})
_ADDRESS_LINES = frozenset({"street", "line1", "line2", "line_1", "line_2", "address1", "address2", "addr"})
_NOT_POSTAL = frozenset({"mac", "wallet", "contract", "hardware", "bitcoin"})

#: Time aspects, by the words that name them (``createdAt``, ``start_date``, ``dueOn``...).
_TIME_ASPECTS: dict[str, str] = {
    **dict.fromkeys(("created", "create", "creation", "added", "inserted", "registered"), "created"),
    **dict.fromkeys(("updated", "update", "modified", "modify", "changed", "edited", "last"), "updated"),
    **dict.fromkeys(("deleted", "removed", "archived"), "deleted"),
    **dict.fromkeys(("start", "starts", "started", "begin", "begins", "from", "since", "check_in"), "start"),
    **dict.fromkeys(("end", "ends", "ended", "finish", "until", "to", "stop", "check_out"), "end"),
    **dict.fromkeys(("due", "deadline"), "due"),
    **dict.fromkeys(("birth", "birthday", "dob", "birthdate", "born"), "birth"),
    **dict.fromkeys(("expires", "expiry", "expiration", "expire", "expired", "valid"), "expiry"),
    **dict.fromkeys(("sent", "send", "delivered", "received"), "sent"),
    **dict.fromkeys(("paid", "payment", "settled"), "paid"),
    **dict.fromkeys(("completed", "complete", "done", "resolved"), "completed"),
    **dict.fromkeys(("published", "publish", "posted"), "published"),
    **dict.fromkeys(("scheduled", "schedule", "planned"), "scheduled"),
    **dict.fromkeys(("closed", "close", "cancelled", "canceled"), "closed"),
}
_MONEY_ASPECTS: dict[str, str] = {
    **dict.fromkeys(("total", "gross", "grand"), "total"),
    "subtotal": "subtotal",
    **dict.fromkeys(("tax", "vat"), "tax"),
    "discount": "discount",
    "balance": "balance",
    **dict.fromkeys(("price", "unit", "rate"), "price"),
    **dict.fromkeys(("fee", "fees", "charge"), "fee"),
    **dict.fromkeys(("refund", "refunded"), "refund"),
    **dict.fromkeys(("paid", "payment"), "paid"),
    **dict.fromkeys(("due", "outstanding", "owed"), "due"),
}
_PARTY_ASPECTS: dict[str, str] = {
    **dict.fromkeys(("sender", "from", "reply", "replyto"), "sender"),
    **dict.fromkeys(("recipient", "recipients", "to", "cc", "bcc"), "recipient"),
    "owner": "owner",
    "assignee": "assignee",
    **dict.fromkeys(("billing", "invoice"), "billing"),
    **dict.fromkeys(("shipping", "delivery"), "shipping"),
    **dict.fromkeys(("work", "office", "business"), "work"),
    **dict.fromkeys(("home", "personal", "private"), "home"),
    **dict.fromkeys(("mobile", "cell", "cellphone"), "mobile"),
}
_TIME_TAGS = frozenset({S.DATE.value, S.DATETIME.value})
_MONEY_TAGS = frozenset({S.MONEY.value})
#: Time aspects the service sets itself: never a value anyone passes on.
STAMP_ASPECTS = frozenset({"created", "updated", "deleted"})


class Role(NamedTuple):
    """A field's tag and, where the vocabulary has one, which one of its kind it is."""

    semantic: str
    aspect: str | None


def id_tag(words: list[str], kind: str | None, entity: str | None) -> str | None:
    """``id:<entity>`` for a key field (``contactId``, a bare ``id`` of ``entity``), else None."""
    if kind in ("object", "boolean"):
        return None
    if words in (["id"], ["ids"]):
        return f"id:{entity}" if entity else None
    if len(words) < 2 or words[-1] not in ("id", "ids", "uuid"):
        return None
    stem = words[:-1]
    if len(stem) > 1 and stem[0] in _ROLE_PREFIXES:
        stem = stem[1:]
    if stem == ["parent"] and entity:
        return f"id:{entity}"
    if stem[-1] in _GENERIC_ID or stem[0] in _ROLE_PREFIXES:
        return None
    return "id:" + entity_name("_".join(stem))


def _contact_tag(
    words: list[str], joined: str, head: str, wset: set[str], kind: str | None, desc: str
) -> S | None:
    """Email, banking, network and phone: values that say how to reach or pay someone."""
    text = kind in ("string", None)
    if text and words[-1] == "domain":
        return None
    if text and (head in ("email", "mail") or joined.endswith("e_mail")):
        return S.EMAIL
    if text and wset & _EMAIL_ROLES and re.search(r"e-?mail", desc, re.IGNORECASE):
        return S.EMAIL
    if text and (head == "iban" or joined.endswith("_iban")):
        return S.IBAN
    if text and (head in ("bic", "swift") or joined in ("swift_code", "bic_code", "swift_bic", "bic_swift")):
        return S.BIC
    if text and head in ("ip", "ipv4", "ipv6"):
        return S.IP_ADDRESS
    if (text or kind == "integer") and head in _PHONE:
        return S.PHONE
    if text and (head in _URL or joined.endswith("web_site")):
        return S.URL
    if text and head in ("uuid", "guid"):
        return S.UUID
    return None


def _amount_tag(words: list[str], wset: set[str], kind: str | None, fmt: str) -> S | None:
    """Money, percent and quantity: numbers with a unit."""
    numeric = kind in _NUMERIC or (
        kind in ("string", None) and fmt in ("decimal", "double", "float", "money")
    )
    money = wset & _MONEY
    if numeric and money and not wset & _NOT_MONEY and not (kind == "integer" and money <= _COUNT_LIKE):
        return S.MONEY
    if kind in _NUMERIC and wset & {"percent", "percentage", "pct"}:
        return S.PERCENT
    if kind in _NUMERIC and wset & {"quantity", "qty"}:
        return S.QUANTITY
    return None


def _party_tag(words: list[str], joined: str, last: str, entity: str | None) -> S | None:
    """Names of people and organisations (the owner of a ``name`` decides which)."""
    if re.search(r"(^|_)(first_?name|given_?name|forename)$", joined):
        return S.FIRST_NAME
    if re.search(r"(^|_)(last_?name|surname|family_?name)$", joined):
        return S.LAST_NAME
    if last != "name":
        return (
            S.COMPANY_NAME
            if joined in ("company", "organization", "organisation", "employer", "org")
            else None
        )
    if re.search(r"(^|_)middle_?name$", joined):
        return None  # a second given name: neither a whole person's name nor the first name
    own = (entity or "").split("_")[-1]
    owner = words[-2] if len(words) > 1 and words[-2] != "display" else own
    if owner in PERSON_OWNERS or joined in ("full_name", "fullname", "person_name"):
        return S.PERSON_NAME
    if owner in COMPANY_OWNERS or joined in ("legal_name", "account_name", "business_name"):
        return S.COMPANY_NAME
    return S.TITLE if len(words) == 1 else None


def _place_tag(words: list[str], joined: str, last: str, wset: set[str], kind: str | None) -> S | None:
    text = kind in ("string", None)
    if text and wset & {"country", "countries"} and last not in ("count", "flag"):
        return S.COUNTRY
    if text and wset & {"city", "town", "locality"}:
        return S.CITY
    if (text or kind == "integer") and (
        wset & {"zip", "zipcode", "postcode", "postalcode"} or re.search(r"(post(al)?|zip)_code", joined)
    ):
        return S.POSTAL_CODE
    if text and (joined in _ADDRESS_LINES or (wset & {"address", "street"} and not wset & _NOT_POSTAL)):
        return S.ADDRESS
    return None


def _time_tag(words: list[str], joined: str, last: str) -> S | None:
    if joined in _STAMP_NAMES or last in ("timestamp", "datetime") or joined.endswith(("date_time", "_time")):
        return S.DATETIME
    if len(words) > 1 and words[-1] == "at":
        return S.DATETIME
    if last in ("date", "dob", "birthday", "birthdate") or (last == "day" and "birth" in words):
        return S.DATE
    if len(words) > 1 and words[-1] == "on":
        return S.DATE
    return None


def _label_tag(words: list[str], joined: str, last: str, wset: set[str], has_enum: bool) -> S | None:
    if last in _TITLE:
        return S.TITLE
    if last in _TEXT:
        return S.TEXT
    if last == "status" or (last in ("state", "stage") and has_enum):
        return S.STATUS
    if last in ("language", "lang", "locale") or joined == "language_code":
        return S.LANGUAGE
    if wset & {"language", "lang", "locale"} and last in ("code", "tag", "iso"):
        return S.LANGUAGE
    if last in ("timezone", "tz", "tzid") or joined.endswith("time_zone"):
        return S.TIMEZONE
    if last in ("color", "colour"):
        return S.COLOR
    return None


def _name_tag(
    words: list[str], kind: str | None, fmt: str, desc: str, entity: str | None, has_enum: bool
) -> S | None:
    joined = "_".join(words)
    wset = set(words) | {singular(w) for w in words}
    last = singular(words[-1])
    head_words = list(words)
    while len(head_words) > 1 and head_words[-1] in _HEAD_MODIFIERS:
        head_words.pop()
    head = singular(head_words[-1])
    text = kind in ("string", None)
    found = _contact_tag(words, joined, head, wset, kind, desc)
    if found is None and text and wset & {"currency", "currencies"}:
        found = S.CURRENCY
    found = found or _amount_tag(words, wset, kind, fmt)
    found = found or _place_tag(words, joined, last, wset, kind)
    if found is not None or not text:
        return found
    return (
        _party_tag(words, joined, last, entity)
        or _time_tag(words, joined, last)
        or _label_tag(words, joined, last, wset, has_enum)
    )


@functools.lru_cache(maxsize=1 << 14)
def _cached_name_tag(
    words: tuple[str, ...], kind: str | None, fmt: str, desc: str, entity: str | None, has_enum: bool
) -> S | None:
    """``_name_tag``, remembered: seeding asks it for the same nested fields on every row (a
    twentieth of a build went to answering the same question again)."""
    return _name_tag(list(words), kind, fmt, desc, entity, has_enum)


def _leaf(schema: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The schema a field's values follow (an array's items) and its JSON type."""
    kind = primary_type(schema)
    if kind == "array" and isinstance(schema.get("items"), dict):
        item: dict[str, Any] = schema["items"]
        return item, primary_type(item)
    return schema, kind


def value_tag(name: str, schema: Any, description: str = "", entity: str | None = None) -> str | None:
    """What a field's values look like (a SemanticType value), never ``id:<entity>``; None if unsure.

    By ``format`` first, then by name. Arrays are tagged by their items; an empty ``name``
    tags by ``format`` only.
    """
    if not isinstance(schema, dict):
        return None
    item, kind = _leaf(schema)
    fmt = text_of(item.get("format")).lower()
    if fmt in _FORMATS and kind in (None, "string"):
        return _FORMATS[fmt].value
    words = split_words(name)
    if not words:
        return None
    desc = description or text_of(item.get("description"))
    has_enum = isinstance(item.get("enum"), list)
    result = _cached_name_tag(tuple(words), kind, fmt, desc, entity, has_enum)
    if result is None or (has_enum and result not in _ENUM_TAGS):
        return None
    return result.value


def tag(name: str, schema: Any, description: str = "", entity: str | None = None) -> str | None:
    """The semantic tag of one field: ``id:<entity>`` for a key, else :func:`value_tag`.

    ``entity`` is the entity the field belongs to (so a bare ``id`` is ``id:<entity>``
    and a person's ``name`` is a person name).
    """
    if not isinstance(schema, dict):
        return None
    words = split_words(name)
    found = id_tag(words, _leaf(schema)[1], entity) if words else None
    return found or value_tag(name, schema, description, entity)


def aspect(name: str, semantic: str | None) -> str | None:
    """Which one of its kind a tagged field is: ``dueDate`` (date) -> ``due``, ``billing_email`` -> ``billing``.

    Time and money have their own aspect tables; any other tag takes the party or use
    its name states. The first matching word, from the left, wins; None when no word does.
    """
    if not semantic or semantic.startswith("id:"):
        return None
    words = split_words(name)
    table = _TIME_ASPECTS if semantic in _TIME_TAGS else _MONEY_ASPECTS if semantic in _MONEY_TAGS else None
    pairs = ["_".join(words[i : i + 2]) for i in range(len(words) - 1)]
    for word in pairs + words:
        if table is not None and word in table:
            return table[word]
        if table is None and word in _PARTY_ASPECTS:
            return _PARTY_ASPECTS[word]
    return None


def role(name: str, schema: Any, description: str = "", entity: str | None = None) -> Role | None:
    """A field's :class:`Role`: its :func:`tag` and its :func:`aspect`; None when untagged."""
    semantic = tag(name, schema, description, entity)
    return Role(semantic, aspect(name, semantic)) if semantic else None
