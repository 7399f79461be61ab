"""Free text that reads like the field it fills: a ticket's title, an email's subject, a note, a bio.

Typed values (emails, phones, IBANs, codes) come from libraries (``compoworld.people``);
this module writes the human text around them, from what the row is about: the entity
(a ticket, a meeting, an invoice), the member it concerns (their name, company, city), and
its dates and numbers. Each kind of record has a few phrasings; Faker (seeded by the caller)
adds the corporate filler a real CRM is full of ("streamline scalable e-markets").
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Topic", "body_text", "industry_text", "label_text", "note_text", "reason_text", "title_text"]


@dataclass(frozen=True)
class Topic:
    """What a piece of text is about."""

    noun: str  # the entity, in words: "ticket", "time off request"
    person: str  # the member's full name
    first: str  # the member's first name
    company: str  # the member's organisation (or the member itself)
    city: str
    day: str  # a date the text may mention, "12 March 2026"
    amount: str  # an amount the text may mention, "1,250.00 EUR"
    reference: str  # a number the text may mention, "INV-2025-0042"
    pitch: str  # Faker's bs(): "engineer innovative portals"
    job: str  # the member's job title


_GROUPS: dict[str, frozenset[str]] = {
    "note": frozenset({"note", "comment", "annotation", "memo", "remark"}),
    "ticket": frozenset({"ticket", "issue", "bug", "incident", "case", "problem", "request", "dispute"}),
    "task": frozenset({"task", "todo", "activity", "action", "reminder", "followup", "chore"}),
    "meeting": frozenset(
        {"event", "meeting", "appointment", "calendar", "booking", "call", "session", "slot"}
    ),
    "deal": frozenset({"deal", "opportunity", "lead", "quote", "proposal", "contract", "subscription"}),
    "message": frozenset(
        {"message", "email", "mail", "sms", "template", "campaign", "newsletter", "notification", "broadcast"}
        | {"conversation", "thread", "chat", "reply", "bounce", "click", "open", "batch"}
    ),
    "file": frozenset({"file", "document", "attachment", "upload", "image", "photo", "report", "export"}),
    "folder": frozenset({"folder", "drive", "directory", "collection", "album", "library", "space"}),
    "money": frozenset({"invoice", "bill", "payment", "refund", "credit", "order", "transaction", "receipt"}),
    "group": frozenset(
        {"pipeline", "stage", "list", "tag", "category", "group", "team", "department", "label"}
    ),
    "product": frozenset(
        {"product", "item", "plan", "sku", "variant", "service", "package", "price", "rate"}
    ),
    "place": frozenset({"hotel", "room", "location", "venue", "store", "warehouse", "site", "office"}),
}

_TICKETS = (
    "Password reset email never arrives",
    "Invoice PDF shows the wrong VAT rate",
    "Cannot export contacts to CSV",
    "Checkout fails with a card declined error",
    "Sync with the accounting system stopped",
    "Duplicate charges on the last statement",
    "Mobile app crashes when uploading a photo",
    "Shipping address not saved on the order",
    "Login loops back to the sign-in page",
    "Report totals do not match the dashboard",
)
_TASK_CALLS = ("Call", "Email", "Follow up with", "Meet", "Check in with")
_TASK_VERBS = ("Send", "Review", "Prepare", "Update", "Schedule", "Share")
_TASK_OBJECTS = (
    "the renewal quote",
    "the signed contract",
    "the onboarding checklist",
    "the revised proposal",
    "the quarterly forecast",
    "the overdue invoice",
    "the product demo",
    "the delivery schedule",
)
_MEETINGS = (
    "Intro call",
    "Quarterly business review",
    "Contract review",
    "Product demo",
    "Onboarding session",
    "Pricing discussion",
    "Kick-off meeting",
    "Support check-in",
)
_DEALS = ("renewal", "expansion", "new licence", "upgrade to Enterprise", "support contract", "pilot")
_SUBJECTS = (
    "Your invoice {reference} is ready",
    "Welcome to {company}, {first}!",
    "Reminder: your appointment on {day}",
    "Your order {reference} has shipped",
    "Action needed: confirm your email address",
    "{first}, your subscription renews on {day}",
    "Receipt for your payment of {amount}",
    "Following up on our call",
)
_DOCS = ("contract", "invoice", "proposal", "statement", "purchase order", "presentation", "report")
_EXTENSIONS = ("pdf", "docx", "xlsx", "pdf", "pptx", "csv")
_FOLDERS = (
    "Contracts",
    "Invoices",
    "Proposals",
    "Onboarding",
    "Marketing assets",
    "Board papers",
    "Receipts",
)
_GROUP_LABELS = (
    "Enterprise sales",
    "Renewals",
    "Support queue",
    "VIP customers",
    "Partners",
    "Newsletter subscribers",
    "Finance",
    "Customer success",
    "Inbound leads",
    "Operations",
)
_PRODUCTS = (
    "Standard plan",
    "Premium support",
    "Wireless headset",
    "Ergonomic office chair",
    "Annual maintenance",
    "Starter kit",
    "Cloud storage 1 TB",
    "Implementation package",
    "Training workshop",
    "Replacement battery",
)
_NEEDS = (
    "they want a revised quote",
    "they asked to move the delivery",
    "they need two more licences",
    "they are comparing us with another vendor",
    "they asked for the invoice to be reissued",
    "they are happy with the pilot",
)
_NEXT = (
    "send the updated proposal",
    "book a follow-up call",
    "loop in finance",
    "confirm the new date",
    "share the onboarding guide",
)
_MESSAGES = (
    "Hi {first}, your order {reference} has shipped and should arrive by {day}.",
    "Hi {first}, this is a reminder of your appointment on {day}. Reply YES to confirm.",
    "Hi {first}, your invoice {reference} for {amount} is due on {day}.",
    "Hello {first}, thanks for getting in touch with {company}. We will reply within one working day.",
    "Hi {first}, your verification code is {code}. It expires in 10 minutes.",
    "Dear {first}, we received your payment of {amount}. Thank you.",
)


def _group(noun: str) -> str:
    words = set(noun.split())
    for group, members in _GROUPS.items():
        if words & members:
            return group
    return ""


def title_text(topic: Topic, rng: random.Random) -> str:
    """A title, subject line or name for a record of ``topic.noun``."""
    group = _group(topic.noun)
    if group == "ticket":
        return rng.choice(_TICKETS)
    if group == "task":
        if rng.random() < 0.5:
            return f"{rng.choice(_TASK_CALLS)} {topic.person} about {rng.choice(_TASK_OBJECTS)}"
        return f"{rng.choice(_TASK_VERBS)} {rng.choice(_TASK_OBJECTS)} for {topic.company}"
    if group == "meeting":
        return f"{rng.choice(_MEETINGS)} with {topic.company if rng.random() < 0.5 else topic.person}"
    if group == "deal":
        return f"{topic.company} - {rng.choice(_DEALS)}"
    if group == "message":
        return _fill(rng.choice(_SUBJECTS), topic, rng)
    if group == "file":
        return f"{topic.company} {rng.choice(_DOCS)} {topic.day[-4:]}.{rng.choice(_EXTENSIONS)}"
    if group == "folder":
        return (
            rng.choice(_FOLDERS)
            if rng.random() < 0.6
            else f"{topic.company} - {rng.choice(_FOLDERS).lower()}"
        )
    if group == "money":
        return f"{topic.noun.capitalize()} {topic.reference} for {topic.company}"
    if group == "group":
        return rng.choice(_GROUP_LABELS)
    if group == "product":
        return rng.choice(_PRODUCTS)
    if group == "place":
        return f"{topic.company} {topic.city}" if "hotel" not in topic.noun else f"Hotel {topic.city}"
    return f"{topic.noun.capitalize()} for {topic.company}"


_INDUSTRIES = (
    "Software",
    "Retail",
    "Manufacturing",
    "Healthcare",
    "Financial services",
    "Logistics",
    "Education",
    "Hospitality",
    "Construction",
    "Media",
    "Energy",
    "Professional services",
)
_REASONS = (
    "Chose a cheaper vendor",
    "Budget cut for this year",
    "Needed a feature we do not have",
    "Timing: revisit next quarter",
    "Signed after a successful pilot",
    "Best fit for their workflow",
    "No response after the demo",
)


def industry_text(rng: random.Random) -> str:
    """An industry label."""
    return rng.choice(_INDUSTRIES)


def reason_text(rng: random.Random) -> str:
    """Why something was won, lost, closed or cancelled."""
    return rng.choice(_REASONS)


def label_text(topic: Topic, rng: random.Random) -> str:
    """A short name for a category-like value (a source, a channel, a segment)."""
    return rng.choice(_GROUP_LABELS)


def note_text(topic: Topic, rng: random.Random) -> str:
    """A note or comment someone would leave on the record."""
    if _group(topic.noun) == "ticket":
        return f"Reproduced on {topic.day}; {topic.first} confirmed the workaround helps. Next: {rng.choice(_NEXT)}."
    return f"Spoke with {topic.first} on {topic.day}: {rng.choice(_NEEDS)}. Next step: {rng.choice(_NEXT)}."


def body_text(topic: Topic, rng: random.Random, field: str = "description") -> str:
    """A description, message body or bio for the record."""
    group = _group(topic.noun)
    if field in ("bio", "about", "biography"):
        return f"{topic.job} at {topic.company}, based in {topic.city}."
    if group == "note":
        return note_text(topic, rng)
    if group == "message" or field in ("message", "body", "sms"):
        return _fill(rng.choice(_MESSAGES), topic, rng)
    if group == "ticket":
        return f"{topic.first} reports: {rng.choice(_TICKETS).lower()} since {topic.day}. Customer ref {topic.reference}."
    if group == "money":
        return f"{topic.noun.capitalize()} {topic.reference} to {topic.company} for {topic.amount}, issued {topic.day}."
    if group == "meeting":
        return f"Agenda: {rng.choice(_TASK_OBJECTS)}, then how to {topic.pitch}. Attendees: {topic.person}."
    return f"{topic.noun.capitalize()} for {topic.company}: a plan to {topic.pitch}."


def _fill(template: str, topic: Topic, rng: random.Random) -> str:
    return template.format(
        first=topic.first,
        company=topic.company,
        day=topic.day,
        amount=topic.amount,
        reference=topic.reference,
        code=f"{rng.randint(0, 999999):06d}",
    )
