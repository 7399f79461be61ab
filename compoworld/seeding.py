"""The one way CompoWorld derives randomness from names: sha256, never Python's salted ``hash()``.

Every seeded choice in the project (seed rows, walks, world-model answers, episode shuffles,
samples of the corpus) takes its generator from here, so the same names give the same values
in every process and on every machine.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

__all__ = ["derive_seed", "seeded_rng", "value_seed"]

_SEP = "\x1f"  # unit separator: ("a/b", "c") and ("a", "b/c") never collide


def derive_seed(*parts: object) -> int:
    """A 64-bit integer from sha256 of the parts (joined by a separator no name contains)."""
    digest = hashlib.sha256(_SEP.join(str(p) for p in parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big")


def seeded_rng(*parts: object) -> random.Random:
    """A private ``random.Random`` seeded from the parts."""
    return random.Random(derive_seed(*parts))


def value_seed(*parts: Any) -> int:
    """``derive_seed`` of JSON values (call arguments, rows): canonically serialised, so key order never matters."""
    return derive_seed(json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str))
