"""Semantic tagging: what a parameter or response field means, beyond its JSON type.

The graph links tools by these tags (a tool that produces ``email`` feeds one that
consumes ``email``; ``id:contact`` links a creator of contacts to their readers),
so the rules favour precision: a name alone tags only when its type agrees. The
rules are data (tables below) read in a fixed order: ids, then ``format``, then
names (and, for ``to``/``from``/``cc``, the description).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from compoworld.specs.model import SemanticType as S
from compoworld.specs.shapes import primary_type, text_of

__all__ = ["entity_for_schema", "entity_name", "path_entity", "singular", "split_words", "tag"]

_IRREGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "data": "data",
    "media": "media",
    "criteria": "criterion",
    "indices": "index",
    "matrices": "matrix",
    "analyses": "analysis",
    "series": "series",
    "species": "species",
    "news": "news",
    "ids": "id",
    "movies": "movie",
    "cookies": "cookie",
    "calories": "calorie",
    "caches": "cache",
    "niches": "niche",
    "ties": "tie",
}
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
_PERSON = frozenset(
    {"person", "contact", "user", "customer", "employee", "member", "lead", "candidate", "applicant"}
    | {"attendee", "owner", "author", "assignee", "recipient", "sender", "patient", "student", "teacher"}
    | {"guest", "subscriber", "participant", "speaker", "driver", "passenger", "traveler", "reviewer"}
    | {"signer", "consumer", "visitor", "profile", "individual", "reporter", "organizer", "host", "agent"}
)
_COMPANY = frozenset(
    {"company", "organization", "organisation", "org", "business", "vendor", "supplier", "merchant"}
    | {"employer", "firm", "brand", "tenant", "workspace"}
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
_TEXT = frozenset(
    {"description", "body", "message", "notes", "note", "content", "text", "comment", "comments", "summary"}
    | {"details", "bio", "remarks", "memo", "instructions", "caption", "biography", "about"}
)
_NUMERIC = frozenset({"number", "integer"})


_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CACHE = 1 << 16
_LITERAL_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_VERSION_SEGMENT = re.compile(r"v\d+(\.\d+)*|api|rest", re.IGNORECASE)


@functools.lru_cache(maxsize=_CACHE)
def _split(name: str) -> tuple[str, ...]:
    spaced = _ACRONYM.sub(r"\1_\2", _LOWER_UPPER.sub(r"\1_\2", name))
    return tuple(w for w in _NON_ALNUM.split(spaced.lower()) if w)


def split_words(name: str) -> list[str]:
    """``petId`` -> ``[pet, id]``; ``CRMContact`` -> ``[crm, contact]``; ``first-name`` -> ``[first, name]``."""
    return list(_split(name))


@functools.lru_cache(maxsize=_CACHE)
def singular(word: str) -> str:
    """English singular of one lower-case word (contacts -> contact, statuses -> status)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith("uses") and not word.endswith(("ouses", "auses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=_CACHE)
def entity_name(raw: str) -> str:
    """Entity name as snake case, singular: ``Contacts`` -> ``contact``, ``people`` -> ``person``,
    ``io.k8s.api.core.v1.Pod`` -> ``pod``, ``InvoiceLines`` -> ``invoice_line``."""
    last = re.split(r"[./:]", raw.strip(" ./:"))[-1] if raw.strip(" ./:") else ""
    words = split_words(last)
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return "_".join(words)


_SCHEMA_LEAD = frozenset(
    {"new", "create", "update", "patch", "put", "post", "get", "list", "base", "abstract"}
)
_SCHEMA_TAIL = frozenset(
    {"response", "request", "input", "output", "dto", "model", "body", "payload", "object", "schema", "info"}
    | {
        "details",
        "detail",
        "summary",
        "full",
        "create",
        "update",
        "public",
        "read",
        "write",
        "view",
        "result",
    }
    | {"entity", "list", "collection", "page", "array", "resource", "params", "data", "item", "items"}
    | {"paginated", "wrapper", "envelope", "v1", "v2", "v3"}
)


@functools.lru_cache(maxsize=_CACHE)
def entity_for_schema(name: str) -> str:
    """Entity a components schema is about: ``GetContactResponse`` -> ``contact``, ``NewPet`` -> ``pet``."""
    last = re.split(r"[./:]", name.strip(" ./:"))[-1] if name.strip(" ./:") else ""
    words = split_words(last)
    while len(words) > 1 and words[0] in _SCHEMA_LEAD:
        words = words[1:]
    while len(words) > 1 and words[-1] in _SCHEMA_TAIL:
        words = words[:-1]
    return entity_name("_".join(words)) if words else ""


@functools.lru_cache(maxsize=_CACHE)
def path_entity(path: str, param: str | None = None) -> str | None:
    """Entity a REST path is about: the segment before ``{param}``, else the last literal segment."""
    segments = [s for s in path.split("/") if s]
    literal = _LITERAL_SEGMENT
    index = len(segments)
    if param is not None:
        for i, segment in enumerate(segments):
            if re.fullmatch(r"\{[+*]?" + re.escape(param) + r"\*?\}", segment):
                index = i
                break
        else:
            return None
    for segment in reversed(segments[:index]):
        word = segment.split(":")[0]
        if literal.match(word) and not _VERSION_SEGMENT.fullmatch(word):
            return entity_name(word) or None
        if param is not None:
            return None
    return None


def _id_tag(words: list[str], kind: str | None, entity: str | None) -> str | None:
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


def _name_tag(
    words: list[str], kind: str | None, fmt: str, desc: str, entity: str | None, has_enum: bool
) -> str | None:
    joined = "_".join(words)
    wset = set(words) | {singular(w) for w in words}
    last = singular(words[-1])
    text = kind in ("string", None)
    head_words = list(words)
    while len(head_words) > 1 and head_words[-1] in _HEAD_MODIFIERS:
        head_words.pop()
    head = singular(head_words[-1])
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
    if text and head in _URL:
        return S.URL
    if text and joined == "uuid":
        return S.UUID
    if text and wset & {"currency", "currencies"}:
        return S.CURRENCY
    numeric = kind in _NUMERIC or (text and fmt in ("decimal", "double", "float", "money"))
    money = wset & _MONEY
    if numeric and money and not wset & _NOT_MONEY and not (kind == "integer" and money <= _COUNT_LIKE):
        return S.MONEY
    if kind in _NUMERIC and wset & {"percent", "percentage", "pct"}:
        return S.PERCENT
    if kind in _NUMERIC and wset & {"quantity", "qty"}:
        return S.QUANTITY
    if text and wset & {"country", "countries"}:
        return S.COUNTRY
    if text and re.search(r"(^|_)(first_?name|given_?name|forename)$", joined):
        return S.FIRST_NAME
    if text and re.search(r"(^|_)(last_?name|surname|family_?name)$", joined):
        return S.LAST_NAME
    if text and re.search(r"(^|_)middle_?name$", joined):
        return None  # a second given name: neither a whole person's name nor the first name
    if text and last == "name":
        owner = words[-2] if len(words) > 1 else (entity or "").split("_")[-1]
        if owner in _PERSON or joined in ("full_name", "fullname", "person_name"):
            return S.PERSON_NAME
        if owner in _COMPANY or joined in ("legal_name", "account_name"):
            return S.COMPANY_NAME
    if text and joined in ("company", "organization", "organisation", "employer", "org"):
        return S.COMPANY_NAME
    if text and (
        joined in ("street", "line1", "line2", "line_1", "line_2", "address1", "address2", "addr")
        or (wset & {"address", "street"} and not wset & {"mac", "wallet", "contract", "hardware", "bitcoin"})
    ):
        return S.ADDRESS
    if text and wset & {"city", "town", "locality"}:
        return S.CITY
    if (text or kind == "integer") and (
        wset & {"zip", "zipcode", "postcode", "postalcode"} or re.search(r"post(al)?_code", joined)
    ):
        return S.POSTAL_CODE
    if text and last in ("title", "subject", "headline"):
        return S.TITLE
    if text and last in _TEXT:
        return S.TEXT
    if text and (last == "status" or (last in ("state", "stage") and has_enum)):
        return S.STATUS
    if text and (last in ("language", "lang", "locale") or joined == "language_code"):
        return S.LANGUAGE
    if text and (last in ("timezone", "tz", "tzid") or joined.endswith("time_zone")):
        return S.TIMEZONE
    if text and wset & {"color", "colour"}:
        return S.COLOR
    if text and (
        last in ("timestamp", "datetime")
        or joined.endswith("date_time")
        or (len(words) > 1 and words[-1] == "at")
    ):
        return S.DATETIME
    if text and last in ("date", "dob", "birthday", "birthdate"):
        return S.DATE
    return None


def tag(name: str, schema: Any, description: str = "", entity: str | None = None) -> str | None:
    """The semantic tag of one field: a SemanticType value, ``id:<entity>``, or None.

    ``entity`` is the entity the field belongs to (so a bare ``id`` is ``id:<entity>``
    and a person's ``name`` is a person name). Arrays are tagged by their items.
    An empty ``name`` tags by ``format`` only.
    """
    words = split_words(name)
    if not isinstance(schema, dict):
        return None
    kind = primary_type(schema)
    item = schema
    if kind == "array" and isinstance(schema.get("items"), dict):
        item = schema["items"]
        kind = primary_type(item)
    fmt = text_of(item.get("format"))
    found = _id_tag(words, kind, entity) if words else None
    if found:
        return found
    if fmt.lower() in _FORMATS and kind in (None, "string"):
        return _FORMATS[fmt.lower()].value
    if not words:
        return None
    desc = description or text_of(item.get("description"))
    has_enum = isinstance(item.get("enum"), list)
    result = _name_tag(words, kind, fmt.lower(), desc, entity, has_enum)
    if has_enum and result not in _ENUM_TAGS:
        return None
    return result.value if isinstance(result, S) else result
