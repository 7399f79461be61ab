"""Entity keys that are unique across the whole library, in the format the API fixes.

Two services built from different documents must never hand out the same key string for
different things (a CRM contact and a Mailsquad contact both called ``con_000006`` made
tasks join strangers). A key is therefore derived by sha256 from the entity's ``key_space``
(``<service>.<entity>``, set by synthesis) and the row's sequence number, by the seed and by
the runtime alike, so a created row's key follows the seed's:

- string keys: ``<prefix>_<10 base-32 characters>`` (``con_k4m9q2x7bd``), bent to the key's
  ``pattern`` and length bounds when the spec fixes them (a key whose format is a URL or an email
  is one);
- uuid keys: a version-4 uuid from the digest;
- integer keys: ``block * 1000 + seq``, with a 6-digit block per key space (9-digit ids), or the
  plain sequence when the spec's bounds leave no room.

A key that is itself a typed value (``key_kind``: a country code, a currency, a date, a phone
number, as in ``/countries/{country}``) is a valid, distinct value of its kind instead.

A key space that is empty (a manifest written before key spaces) gives the old sequential keys.
"""

from __future__ import annotations

import base64
import uuid
from datetime import date, timedelta
from typing import Any

import pycountry

from compoworld.manifest import EntityDef
from compoworld.people import phone_number
from compoworld.seeding import derive_seed, seeded_rng
from compoworld.values import fit_string

__all__ = ["entity_key", "key_block"]

_BLOCK = 1000


def key_block(key_space: str) -> int:
    """The 6-digit block of integer keys of one key space."""
    return 100_000 + derive_seed("key-block", key_space) % 900_000


def _integer(entity: EntityDef, seq: int) -> int:
    pk = entity.column(entity.pk)
    schema = pk.json_schema if pk is not None else {}
    key = key_block(entity.key_space) * _BLOCK + seq if entity.key_space else seq
    high = schema.get("maximum")
    low = schema.get("minimum")
    if isinstance(high, (int, float)) and not isinstance(high, bool) and key > high:
        key = seq + (int(low) if isinstance(low, (int, float)) and not isinstance(low, bool) else 0)
    return key


def _typed_key(kind: str, space: str, seq: int, attempt: int) -> str | None:
    """A key that is a valid value of its kind, distinct for each ``seq``: a country, a date, a phone..."""
    if kind in ("country", "currency", "language"):
        table = {
            "country": sorted(c.alpha_2 for c in pycountry.countries),
            "currency": sorted(c.alpha_3 for c in pycountry.currencies),
            "language": sorted(lang.alpha_2 for lang in pycountry.languages if hasattr(lang, "alpha_2")),
        }[kind]
        start = derive_seed("key-offset", space) % len(table)
        return table[(start + seq - 1 + attempt * 7919) % len(table)]
    if kind in ("date", "date-time"):
        day = date(2026, 1, 15) - timedelta(days=seq - 1 + attempt * 1000)
        return day.isoformat() if kind == "date" else f"{day.isoformat()}T00:00:00Z"
    if kind == "phone":
        return phone_number("US", seeded_rng("key-phone", space, seq, attempt))
    return None


def entity_key(entity: EntityDef, seq: int, attempt: int = 0) -> Any:
    """The key of the ``seq``-th row of an entity (``attempt`` > 0 draws another one after a clash)."""
    if entity.pk_type == "integer":
        return _integer(entity, seq)
    pk = entity.column(entity.pk)
    fixed = [v for v in (pk.json_schema.get("enum") or []) if isinstance(v, str)] if pk is not None else []
    if fixed:  # the path parameter lists the keys (``source_language: en|es|de``): one row each
        return fixed[(seq - 1 + attempt) % len(fixed)]
    space = entity.key_space
    if entity.key_kind is not None:
        typed = _typed_key(entity.key_kind, space or entity.name, seq, attempt)
        if typed is not None:
            return fit_string(typed, pk.json_schema, seeded_rng("key-pattern", space, seq)) if pk else typed
    digest = derive_seed("key", space or entity.name, seq, attempt).to_bytes(8, "big")
    if pk is not None and pk.format == "uuid":
        wide = derive_seed("uuid", space or entity.name, seq, attempt).to_bytes(8, "big") + digest
        return str(uuid.UUID(bytes=wide, version=4))
    code = base64.b32encode(digest).decode().lower()[:10]
    key = f"{entity.id_prefix or 'id'}_{code if space else f'{seq:06d}'}"
    if entity.key_kind == "url" or (pk is not None and pk.format in ("uri", "url", "iri")):  # a webhook
        key = f"https://hooks.example.com/{entity.name.replace('_', '-')}/{code}"
    elif entity.key_kind == "email" or (pk is not None and pk.format in ("email", "idn-email")):
        key = f"{entity.name.replace('_', '.')}.{code}@example.com"
    if pk is not None:  # a key format the API fixes (Twilio's ^BU[0-9a-f]{32}$) wins over the prefix
        key = fit_string(key, pk.json_schema, seeded_rng("key-pattern", space, seq, attempt))
    return key
