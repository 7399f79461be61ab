"""Entity keys that are unique across the whole library, in the format the API fixes.

Two services built from different documents must never hand out the same key string for
different things (a CRM contact and a Mailsquad contact both called ``con_000006`` made
tasks join strangers). A key is therefore derived by sha256 from the entity's ``key_space``
(``<service>.<entity>``, set by synthesis) and the row's sequence number, by the seed and by
the runtime alike, so a created row's key follows the seed's:

- string keys: ``<prefix>_<10 base-32 characters>`` (``con_k4m9q2x7bd``), bent to the key's
  ``pattern`` and length bounds when the spec fixes them;
- uuid keys: a version-4 uuid from the digest;
- integer keys: ``block * 1000 + seq``, with a 6-digit block per key space (9-digit ids), or the
  plain sequence when the spec's bounds leave no room.

A key space that is empty (a manifest written before key spaces) gives the old sequential keys.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from compoworld.manifest import EntityDef
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


def entity_key(entity: EntityDef, seq: int, attempt: int = 0) -> Any:
    """The key of the ``seq``-th row of an entity (``attempt`` > 0 draws another one after a clash)."""
    if entity.pk_type == "integer":
        return _integer(entity, seq)
    pk = entity.column(entity.pk)
    space = entity.key_space
    digest = derive_seed("key", space or entity.name, seq, attempt).to_bytes(8, "big")
    if pk is not None and pk.format == "uuid":
        wide = derive_seed("uuid", space or entity.name, seq, attempt).to_bytes(8, "big") + digest
        return str(uuid.UUID(bytes=wide, version=4))
    if space:
        key = f"{entity.id_prefix or 'id'}_{base64.b32encode(digest).decode().lower()[:10]}"
    else:
        key = f"{entity.id_prefix or 'id'}_{seq:06d}"
    if pk is not None:  # a key format the API fixes (Twilio's ^BU[0-9a-f]{32}$) wins over the prefix
        key = fit_string(key, pk.json_schema, seeded_rng("key-pattern", space, seq, attempt))
    return key
