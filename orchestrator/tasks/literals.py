"""Plausible literal values for arguments a walk must fill itself (a new invoice's amount, an event's date).

Deterministic in the walk's rng; typed by the argument's semantic where known, else
the runtime's schema-faithful generator (``compoworld.runtime.world.generate_value``).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from compoworld.runtime.world import generate_value

__all__ = ["literal_value"]

_FIRST = [
    "Alma",
    "Bruno",
    "Carmen",
    "Dario",
    "Edith",
    "Felix",
    "Greta",
    "Hugo",
    "Irene",
    "Jakob",
    "Lena",
    "Marco",
    "Nadia",
    "Oscar",
    "Paula",
    "Rafael",
]
_LAST = [
    "Arnaud",
    "Berger",
    "Costa",
    "Dahl",
    "Ekström",
    "Ferreira",
    "Gomez",
    "Holm",
    "Iversen",
    "Jovanovic",
    "Keller",
    "Lund",
    "Moreau",
    "Novak",
]
_WORDS = [
    "quarterly",
    "renewal",
    "onboarding",
    "budget",
    "roadmap",
    "launch",
    "follow-up",
    "migration",
    "review",
    "workshop",
]


def _day(today: str, rng: random.Random) -> dt.date:
    try:
        base = dt.date.fromisoformat(today)
    except ValueError:
        base = dt.date(2026, 1, 15)
    return base + dt.timedelta(days=rng.randint(3, 90))


def literal_value(
    rng: random.Random,
    name: str,
    schema: dict[str, Any],
    semantic: str | None,
    today: str,
    enum: list[Any] | None = None,
    avoid: Any = None,
) -> Any:
    """A value for one argument; never ``avoid`` when an alternative exists (an update must change something)."""
    choices = [v for v in (enum or schema.get("enum") or []) if v != avoid and v is not None]
    if choices:
        return rng.choice(choices)
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    typed: dict[str, Any] = {
        "date": lambda: _day(today, rng).isoformat(),
        "date-time": lambda: f"{_day(today, rng).isoformat()}T{rng.randint(8, 17):02d}:00:00Z",
        "email": lambda: f"{first.lower()}.{last.lower()}@example.org".replace("ö", "o"),
        "person_name": lambda: f"{first} {last}",
        "first_name": lambda: first,
        "last_name": lambda: last,
        "company_name": lambda: f"{last} {rng.choice(['Labs', 'Group', 'Partners', 'Works'])}",
        "money": lambda: round(rng.uniform(20, 2000), 2),
        "phone": lambda: f"+1555{rng.randint(1000000, 9999999)}",
        "title": lambda: " ".join(rng.sample(_WORDS, 2)).capitalize(),
        "text": lambda: f"Notes on the {' '.join(rng.sample(_WORDS, 2))} for {first}.",
        "country": lambda: rng.choice(["DE", "FR", "ES", "IT", "NL", "SE", "US", "CA", "JP", "BR"]),
        "currency": lambda: rng.choice(["USD", "EUR", "GBP", "JPY", "CHF"]),
        "city": lambda: rng.choice(["Lyon", "Porto", "Bergen", "Graz", "Leeds", "Osaka", "Austin", "Turin"]),
        "address": lambda: (
            f"{rng.randint(1, 200)} {rng.choice(['Harbour', 'Mill', 'Station', 'Elm'])} Street"
        ),
        "postal_code": lambda: f"{rng.randint(10000, 99999)}",
        "url": lambda: f"https://{last.lower()}.example.org/{rng.choice(_WORDS)}",
        "language": lambda: rng.choice(["en", "fr", "de", "es", "ja"]),
        "timezone": lambda: rng.choice(["Europe/Paris", "America/New_York", "Asia/Tokyo", "UTC"]),
        "quantity": lambda: rng.randint(1, 20),
        "percent": lambda: rng.randint(1, 99),
    }
    raw = schema.get("type")
    base = next((k for k in raw if k != "null"), None) if isinstance(raw, list) else raw
    numeric = semantic in ("money", "quantity", "percent")
    if semantic in typed and (
        base is None or ((base in ("number", "integer")) == numeric and base != "boolean")
    ):
        value = typed[semantic]()
        if base == "integer" and isinstance(value, float):
            value = int(value)
        if value != avoid:
            return value
    value = generate_value(schema, rng, name, today)
    if value == avoid and isinstance(value, str):
        value = f"{value} {rng.choice(_WORDS)}"
    elif value == avoid and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = value + 1
    return value
