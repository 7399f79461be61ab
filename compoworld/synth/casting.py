"""Which population role an entity's rows, or a field's values, are cast from.

A CRM ``contact`` is a customer, an HR ``employee`` is staff, an ATS ``applicant`` a
candidate; an ``assignee`` or ``created_by`` field names staff whatever the row is; a
``supplier`` field an organisation that supplies. The rules are data: words of the entity's
or field's name, with the service's domain deciding the ambiguous ``user`` (staff in a CRM,
a customer in a messaging app).
"""

from __future__ import annotations

from compoworld.manifest import EntityDef
from compoworld.specs.words import split_words

__all__ = ["DEFAULT_PARTY", "entity_role", "field_role"]

_PERSON_WORDS: dict[str, frozenset[str]] = {
    "candidate": frozenset({"applicant", "candidate", "applicants", "candidates"}),
    "staff": frozenset(
        {"employee", "staff", "agent", "assignee", "recruiter", "interviewer", "technician", "operator"}
        | {"worker", "teammate", "administrator", "admin", "approver", "manager", "owner", "author"}
    ),
    "customer": frozenset(
        {"customer", "client", "contact", "lead", "recipient", "subscriber", "guest", "patient", "passenger"}
        | {"traveler", "traveller", "cardholder", "buyer", "payer", "shopper", "consumer", "member"}
        | {"attendee", "participant", "visitor", "prospect", "donor", "student", "person", "individual"}
        | {"profile", "debtor", "payee", "respondent", "audience"}
    ),
}
_ORG_WORDS: dict[str, frozenset[str]] = {
    "supplier": frozenset(
        {"supplier", "vendor", "merchant", "partner", "provider", "carrier", "manufacturer"}
    ),
    "client": frozenset({"company", "organization", "organisation", "business", "account", "firm", "tenant"}),
    "employer": frozenset({"employer", "subsidiary", "entity"}),
}
#: Where a ``user`` is a customer of the service rather than one of its staff.
_CUSTOMER_DOMAINS = frozenset({"messaging", "email", "commerce", "payments", "travel"})
#: Whom a row that is neither a person nor an organisation is about, by domain (invoices: customers).
DEFAULT_PARTY: dict[str, str] = {
    "hr": "staff",
    "recruiting": "candidate",
    "tasks": "staff",
    "storage": "staff",
}
_STAFF_FIELDS = frozenset(
    {"owner", "assignee", "assignees", "author", "creator", "created", "updated", "modified", "deleted"}
    | {"organizer", "organiser", "recruiter", "reporter", "approver", "agent", "manager", "coordinator"}
    | {"interviewer", "sourced", "adjusted", "hiring", "reviewer", "uploaded", "shared", "sender"}
)
_ORG_FIELDS = frozenset({"supplier", "vendor", "merchant", "carrier", "manufacturer"})


def _last(name: str) -> str:
    words = split_words(name)
    return words[-1] if words else ""


def entity_role(entity: EntityDef, domain: str) -> str | None:
    """The role an entity's rows are cast from, or None when its rows are not people or organisations."""
    word = _last(entity.name)
    if word == "user":
        return "customer" if domain in _CUSTOMER_DOMAINS else "staff"
    if word == "company" and domain == "hr":
        return "employer"
    for role, words in _PERSON_WORDS.items():
        if word in words:
            return role
    for role, words in _ORG_WORDS.items():
        if word in words:
            return role
    return None


def field_role(name: str) -> str | None:
    """``staff`` for a field naming someone who works on the record; ``supplier`` for a supplying org."""
    words = set(split_words(name))
    if words & _STAFF_FIELDS and not words & {"at", "date", "time", "on"}:
        return "staff"
    if words & _ORG_FIELDS:
        return "supplier"
    return None
