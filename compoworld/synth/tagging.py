"""Name- and format-based semantic tags for entity columns the spec left untagged.

The task graph links services through semantic types (an ``email`` produced here is consumed
there), and seed data looks plausible only if a column's meaning is known, so a column named
``billing_email`` or ``createdAt`` gets a tag even when the source document gave none.
"""

from __future__ import annotations

from typing import Any

from compoworld.synth.naming import split_words

__all__ = ["ORG_ENTITIES", "PERSON_ENTITIES", "json_type", "tag_column"]

#: Entities whose ``name`` column is a person's name.
PERSON_ENTITIES = frozenset(
    {
        "applicant",
        "candidate",
        "contact",
        "customer",
        "employee",
        "lead",
        "member",
        "owner",
        "participant",
        "person",
        "recipient",
        "user",
        "attendee",
        "agent",
        "student",
        "patient",
        "driver",
        "guest",
        "subscriber",
        "author",
    }
)
#: Entities whose ``name`` column is an organisation's name.
ORG_ENTITIES = frozenset(
    {
        "company",
        "organization",
        "organisation",
        "supplier",
        "vendor",
        "partner",
        "account",
        "tenant",
        "merchant",
    }
)

_FORMATS = {
    "email": "email",
    "idn-email": "email",
    "uri": "url",
    "url": "url",
    "iri": "url",
    "uri-reference": "url",
    "uuid": "uuid",
    "date": "date",
    "date-time": "date-time",
    "datetime": "date-time",
    "ipv4": "ip",
    "ipv6": "ip",
    "ip": "ip",
    "phone": "phone",
}
#: Single-word names that hold a timestamp (Google-style ``updated``, ``due``).
_STAMP_NAMES = {"created", "updated", "modified", "completed", "due", "published", "expires", "deadline"}
_MONEY_WORDS = {
    "amount",
    "price",
    "total",
    "subtotal",
    "balance",
    "cost",
    "fee",
    "revenue",
    "salary",
    "budget",
}


def json_type(schema: dict[str, Any]) -> str | None:
    """The first non-null JSON type a schema names (``["string", "null"]`` -> ``string``)."""
    raw = schema.get("type")
    if isinstance(raw, list):
        raw = next((t for t in raw if t != "null"), None)
    if isinstance(raw, str):
        return raw
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict) and json_type(sub) is not None:
                return json_type(sub)
    if "properties" in schema:
        return "object"
    return None


def _text_tag(words: list[str], entity: str, has_enum: bool) -> str | None:
    last = words[-1]
    joined = "_".join(words)
    if last == "domain":
        return None
    if "email" in words or "emails" in words or "e_mail" in joined:
        return "email"
    if last == "iban" or joined.endswith("_iban"):
        return "iban"
    if last in {"bic", "swift"} or joined in {"swift_code", "bic_code", "swift_bic", "bic_swift"}:
        return "bic"
    if joined in _STAMP_NAMES:
        return "date-time"
    if last in {
        "url",
        "uri",
        "link",
        "website",
        "homepage",
        "href",
        "urls",
        "uris",
        "hrefs",
        "links",
        "websites",
    } or joined.endswith("web_site"):
        return "url"
    if last == "uuid" or last == "guid":
        return "uuid"
    if last == "at" or last in {"timestamp", "datetime"} or joined.endswith(("_time", "date_time")):
        return "date-time"
    if last in {"date", "birthday", "dob", "on"} or (last == "day" and "birth" in words):
        return "date"
    if last in {"phone", "mobile", "fax", "tel", "telephone", "msisdn", "phones"} or (
        "phone" in words and last in {"number", "numbers", "no", "num"}
    ):
        return "phone"
    if last == "currency" or joined in {"currency_code", "currency_iso"}:
        return "currency"
    if {"country", "countries"} & set(words) and last not in {"id", "ids", "uuid", "count", "flag"}:
        return "country"
    if joined in {"first_name", "given_name", "firstname", "forename"}:
        return "first_name"
    if joined in {"last_name", "family_name", "surname", "lastname"}:
        return "last_name"
    if joined in {
        "full_name",
        "display_name",
        "person_name",
        "contact_name",
        "employee_name",
        "customer_name",
    }:
        return "person_name"
    if joined in {
        "company",
        "company_name",
        "organization",
        "organization_name",
        "business_name",
        "legal_name",
    }:
        return "company_name"
    if joined == "name":
        if entity in PERSON_ENTITIES:
            return "person_name"
        if entity in ORG_ENTITIES:
            return "company_name"
        return "title"
    if last in {"street", "line1", "line2", "address"} or joined in {"address_line1", "street_address"}:
        return "address"
    if last in {"city", "town", "locality"}:
        return "city"
    if last in {"zip", "postcode", "zipcode"} or joined.endswith(("postal_code", "zip_code", "post_code")):
        return "postal_code"
    if last in {"title", "subject", "headline", "summary", "label"}:
        return "title"
    if last in {"description", "body", "content", "notes", "note", "comment", "message", "text", "bio"}:
        return "text"
    if last == "status" or (last == "state" and has_enum):
        return "status"
    if last in {"language", "locale", "lang", "languages", "locales"} or (
        {"language", "lang", "locale"} & set(words) and last in {"code", "tag", "iso", "codes"}
    ):
        return "language"
    if last in {"timezone", "tz"} or joined.endswith("time_zone"):
        return "timezone"
    if joined in {"ip", "ip_address", "ipaddress"}:
        return "ip"
    if last in {"color", "colour"}:
        return "color"
    return None


def tag_column(name: str, schema: dict[str, Any], entity: str = "") -> str | None:
    """A SemanticType value for a column from its format, then its name; None when unsure."""
    kind = json_type(schema)
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt.lower() in _FORMATS and kind in (None, "string"):
        return _FORMATS[fmt.lower()]
    words = split_words(name)
    if not words:
        return None
    if kind in ("integer", "number"):
        if words[-1] in {"quantity", "qty"}:
            return "quantity"
        if words[-1] in {"percent", "percentage", "pct"}:
            return "percent"
        if kind == "number" and (words[-1] in _MONEY_WORDS or "amount" in words):
            return "money"
        return None
    if kind not in (None, "string"):
        return None
    return _text_tag(words, entity, isinstance(schema.get("enum"), list))
