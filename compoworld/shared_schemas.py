"""Repeated subschemas of a manifest written once: ``manifest.json``'s shared table.

A spec's ``$ref`` graph is expanded into every tool's input and output schema, so a document whose
schemas nest deeply repeats the same subschema many times: Microsoft Graph's ``me_team`` part holds
181 tools in 25 MB of manifest, which a service's first call spends ~250 ms reading. ``share``
writes each object of at least ``MIN_SHARED`` bytes (canonical compact JSON) that occurs twice or
more once, under ``"$shared"`` at the top of the document, and puts ``{"$shared": key}`` where it
stood; ``unshare`` puts them back, every reference to one key the same Python object, so a loaded
manifest also holds each repeated subschema once in memory (its readers never write into a schema).

The key is the first 16 hex digits of the object's sha256, so the written bytes are a function of
the manifest alone (re-renders and resumed builds stay byte-identical). A document whose text
already holds the string ``"$shared"`` (it could read as a reference), or that nests past what
orjson writes, is written as it is; a document without the table is read as it is.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import orjson

__all__ = ["MIN_SHARED", "SHARED_KEY", "share", "unshare"]

SHARED_KEY = "$shared"
#: Objects smaller than this (bytes of compact JSON) are written where they occur.
MIN_SHARED = 512


def _text(node: dict[str, Any]) -> bytes:
    return orjson.dumps(node, option=orjson.OPT_SORT_KEYS)


def _is_reference(node: Any) -> bool:
    return type(node) is dict and len(node) == 1 and SHARED_KEY in node


def share(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with every repeated object of ``MIN_SHARED`` bytes or more written once."""
    try:
        if f'"{SHARED_KEY}"'.encode() in orjson.dumps(doc):  # its own text would read as a reference
            return doc
    except orjson.JSONEncodeError:  # nesting past orjson's limit, a value it cannot write
        return doc
    texts: dict[int, bytes] = {}
    counts: Counter[bytes] = Counter()
    # Pre-order, as ``put`` below walks: the first occurrence of an object is the one whose
    # insides are read (and later written into the table); the others are only counted.
    stack: list[Any] = list(reversed(doc.values()))
    while stack:
        node = stack.pop()
        if type(node) is list:
            stack.extend(reversed(node))
        elif type(node) is dict:
            text = _text(node)
            if len(text) < MIN_SHARED:  # nothing inside it is as large
                continue
            texts[id(node)] = text
            counts[text] += 1
            if counts[text] == 1:
                stack.extend(reversed(node.values()))
    repeated = {text for text, count in counts.items() if count > 1}
    if not repeated:
        return doc
    table_keys: set[str] = set()
    keys: dict[bytes, str] = {}
    for text in sorted(repeated):
        key = hashlib.sha256(text).hexdigest()
        keys[text] = key[:16] if key[:16] not in table_keys else key  # 16 digits unless two agree
        table_keys.add(keys[text])
    table: dict[str, Any] = {}

    def put(node: Any) -> Any:
        if type(node) is list:
            return [put(item) for item in node]
        if type(node) is not dict:
            return node
        text = texts.get(id(node))
        if text is None:
            return node
        key = keys.get(text)
        if key in table:
            return {SHARED_KEY: key}
        body = {name: put(value) for name, value in node.items()}
        if key is None:
            return body
        table[key] = body
        return {SHARED_KEY: key}

    out = {name: put(value) for name, value in doc.items()}
    out[SHARED_KEY] = table
    return out


def unshare(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its shared objects back in place (each key one object); ``ValueError`` if it
    refers to a key its table does not hold, or a shared object refers to itself."""
    table = doc.pop(SHARED_KEY, None)
    if table is None:
        return doc
    if type(table) is not dict:
        raise ValueError(f"{SHARED_KEY!r} must be an object of shared schemas")
    done: dict[str, Any] = {}
    open_keys: set[str] = set()

    def resolve(key: Any) -> Any:
        if key in done:
            return done[key]
        if type(key) is not str or key not in table:
            raise ValueError(f"a reference names the shared schema {key!r}, which the manifest does not hold")
        if key in open_keys:
            raise ValueError(f"the shared schema {key!r} refers to itself")
        open_keys.add(key)
        done[key] = fill(table[key])
        open_keys.discard(key)
        return done[key]

    def fill(node: Any) -> Any:
        if type(node) is dict:
            if _is_reference(node):
                return resolve(node[SHARED_KEY])
            for name, value in node.items():
                if type(value) is dict or type(value) is list:
                    node[name] = fill(value)
        elif type(node) is list:
            for i, value in enumerate(node):
                if type(value) is dict or type(value) is list:
                    node[i] = fill(value)
        return node

    return fill(doc)
