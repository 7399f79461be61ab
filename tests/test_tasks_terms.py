"""Internal terms in an instruction: the prepared index finds exactly what a scan of every term finds."""

from __future__ import annotations

import random
import re

from orchestrator.tasks.scenario.text import TermIndex, identifier_like, internal_terms

TERMS = [
    "getUsers",
    "Search_payments",
    "list-invoices",
    "v2.accounts.get",
    "crm/contacts",
    "points",  # a plain word: never a tell
    "delete",
    "twilio_numbers_v2",
    "files.json",
    "get users",
    "a.getUsers",
    "x-v2.accounts.get",
    "ListAuthorizationDocument",
]


def _scan(text: str, terms: list[str]) -> list[str]:
    """The reference: every identifier-like term that stands alone in the text, in the terms' order."""
    found = [
        t for t in terms if identifier_like(t) and re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", text)
    ]
    return found + re.findall(r"\b[a-z]{2,5}_[0-9a-z]{6,}\b", text)


def test_the_index_finds_the_terms_that_stand_alone() -> None:
    text = "Call getUsers, then v2.accounts.get and crm/contacts; not xgetUsers or list-invoices-old. Points."
    assert internal_terms(text, TermIndex(TERMS)) == [
        "getUsers",
        "v2.accounts.get",
    ]  # crm/contacts reads as words
    assert internal_terms("see files.json, twilio_numbers_v2 and con_000123", TERMS) == [
        "twilio_numbers_v2",
        "con_000123",
    ]
    assert internal_terms("Ask for their get users record and delete it", TERMS) == []  # plain words


def test_the_index_agrees_with_a_scan_of_every_term_on_random_texts() -> None:
    rng = random.Random(4)
    pieces = [
        *TERMS,
        "the",
        "invoice",
        "-",
        ".",
        "/",
        " ",
        "x",
        "_",
        "v2",
        "accounts",
        "get",
        "json",
        "files",
    ]
    index = TermIndex(TERMS)
    for _ in range(2000):
        text = "".join(
            rng.choice(pieces) + rng.choice(["", " ", ".", ",", "-"]) for _ in range(rng.randint(1, 12))
        )
        assert index.find(text) == _scan(text, TERMS), text
