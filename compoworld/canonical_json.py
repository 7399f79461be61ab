"""Canonical pretty JSON (sorted keys, 2-space indent, UTF-8 text): the bytes of every JSON file a
service folder holds, written by orjson where that gives exactly what the standard library writes.

``json.dumps(indent=2)`` runs the standard library's pure-Python encoder (its C encoder does not
indent), and writing ``manifest.json`` once per verification round was a tenth of a build's CPU.
orjson writes the same text for plain JSON data (``str`` keys, strings, ints and floats it spells
like ``repr``, lists, dicts) 20-50x faster. Where it would not (a float under 1e-4, which it
spells positionally or without the exponent's leading zero; NaN and infinities, which it writes as
null; an int beyond 64 bits, a key that is not a string, any other type) the standard library
writes the value, so the bytes never depend on which path ran (``tests/test_canonical_json.py``).
``dumps_compact`` does the same for the compact form every state hash is taken over.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

__all__ = ["dumps_canonical", "dumps_compact"]

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
#: Floats orjson and ``repr`` spell alike: zero, and magnitudes from 1e-4 up (``repr`` switches to
#: an exponent below 1e-4; orjson writes ``0.00001`` and ``1e-7`` there).
_SMALLEST = 1e-4


def _plain(value: Any) -> bool:
    """Whether ``value`` is JSON data orjson writes exactly as ``json.dumps`` does."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            if any(type(key) is not str for key in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int:
            if not -(2**63) <= item < 2**64:
                return False
        elif kind is float:
            if not math.isfinite(item) or (item != 0 and abs(item) < _SMALLEST):
                return False
        else:
            return False
    return True


def dumps_canonical(obj: Any) -> str:
    """``json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\\n"``, byte for byte."""
    if _plain(obj):
        try:
            return orjson.dumps(obj, option=_OPTIONS).decode() + "\n"
        except orjson.JSONEncodeError:  # a lone surrogate, nesting past orjson's depth limit
            pass
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def dumps_compact(obj: Any) -> bytes:
    """``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)``
    as UTF-8, byte for byte: the text ``canonical_hash`` hashes."""
    if _plain(obj):
        try:
            return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # a lone surrogate, nesting past orjson's depth limit
            pass
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()
