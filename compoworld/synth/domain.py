"""A service's domain label (crm, email, calendar...), used to describe tasks and break reports down.

The corpus's own categories are coarse (every Apideck API is "developer_tools"), so the
service's name and title are read first; the categories are the fallback.
"""

from __future__ import annotations

import re

__all__ = ["DOMAIN_KEYWORDS", "infer_domain"]

# checked in order: the first domain with a keyword in the name/title wins
DOMAIN_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("crm", ("crm", "contact", "lead", "customer relationship")),
    ("accounting", ("accounting", "invoice", "invoicing", "ledger", "bookkeeping", "billing")),
    ("hr", ("hris", "human resource", "payroll", "employee")),
    ("recruiting", ("ats", "applicant", "recruit", "hiring")),
    ("calendar", ("calendar", "schedule", "meeting", "appointment")),
    ("tasks", ("task", "todo", "to-do")),
    ("tickets", ("issue", "ticket", "helpdesk", "incident")),
    ("email", ("email", "mail", "postmark", "smtp", "newsletter")),
    ("messaging", ("sms", "messaging", "message", "chat", "conversation")),
    ("payments", ("payment", "pay", "card", "checkout")),
    ("commerce", ("commerce", "shop", "order", "product", "store")),
    ("storage", ("file", "storage", "drive", "document", "folder")),
    ("travel", ("hotel", "travel", "booking", "flight")),
)


def infer_domain(name: str, title: str, categories: list[str]) -> str:
    """The first domain whose keywords appear as words in the name or title, else the first category."""
    text = " ".join(re.split(r"[^a-z0-9]+", f"{name} {title}".lower()))
    for domain, words in DOMAIN_KEYWORDS:
        if any(re.search(rf"\b{re.escape(w)}s?\b", text) for w in words):
            return domain
    return categories[0] if categories else "general"
