"""Words of a name: the one ``split_words`` and the one ``singular`` every layer uses.

``split_words`` breaks an identifier into lower-case words (camelCase, acronyms, snake,
kebab, spaces); ``singular`` is the English singular of one such word; ``entity_name``
applies both to a whole collection or schema name (``InvoiceLines`` -> ``invoice_line``).
The semantic vocabulary (:mod:`compoworld.specs.semantic`), synthesis' code names and the
graph all read names through these, so an entity is spelt the same everywhere.
"""

from __future__ import annotations

import functools
import re

__all__ = ["entity_for_schema", "entity_name", "path_entity", "singular", "split_words"]

_IRREGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "data": "data",
    "media": "media",
    "criteria": "criterion",
    "indices": "index",
    "matrices": "matrix",
    "analyses": "analysis",
    "series": "series",
    "species": "species",
    "news": "news",
    "ids": "id",
    "movies": "movie",
    "cookies": "cookie",
    "calories": "calorie",
    "caches": "cache",
    "niches": "niche",
    "ties": "tie",
}
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CACHE = 1 << 16
_LITERAL_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_VERSION_SEGMENT = re.compile(r"v\d+(\.\d+)*|api|rest", re.IGNORECASE)
_SCHEMA_LEAD = frozenset(
    {"new", "create", "update", "patch", "put", "post", "get", "list", "base", "abstract"}
)
_SCHEMA_TAIL = frozenset(
    {"response", "request", "input", "output", "dto", "model", "body", "payload", "object", "schema", "info"}
    | {"details", "detail", "summary", "full", "create", "update", "public", "read", "write", "view"}
    | {"result", "entity", "list", "collection", "page", "array", "resource", "params", "data", "item"}
    | {"items", "paginated", "wrapper", "envelope", "v1", "v2", "v3"}
)


@functools.lru_cache(maxsize=_CACHE)
def _split(name: str) -> tuple[str, ...]:
    spaced = _ACRONYM.sub(r"\1_\2", _LOWER_UPPER.sub(r"\1_\2", name))
    return tuple(w for w in _NON_ALNUM.split(spaced.lower()) if w)


def split_words(name: str) -> list[str]:
    """``petId`` -> ``[pet, id]``; ``CRMContact`` -> ``[crm, contact]``; ``first-name`` -> ``[first, name]``."""
    return list(_split(name))


@functools.lru_cache(maxsize=_CACHE)
def singular(word: str) -> str:
    """English singular of one lower-case word (contacts -> contact, statuses -> status)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith("uses") and not word.endswith(("ouses", "auses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=_CACHE)
def entity_name(raw: str) -> str:
    """Entity name as snake case, singular: ``Contacts`` -> ``contact``, ``people`` -> ``person``,
    ``io.k8s.api.core.v1.Pod`` -> ``pod``, ``InvoiceLines`` -> ``invoice_line``."""
    last = re.split(r"[./:]", raw.strip(" ./:"))[-1] if raw.strip(" ./:") else ""
    words = split_words(last)
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return "_".join(words)


@functools.lru_cache(maxsize=_CACHE)
def entity_for_schema(name: str) -> str:
    """Entity a components schema is about: ``GetContactResponse`` -> ``contact``, ``NewPet`` -> ``pet``."""
    last = re.split(r"[./:]", name.strip(" ./:"))[-1] if name.strip(" ./:") else ""
    words = split_words(last)
    while len(words) > 1 and words[0] in _SCHEMA_LEAD:
        words = words[1:]
    while len(words) > 1 and words[-1] in _SCHEMA_TAIL:
        words = words[:-1]
    return entity_name("_".join(words)) if words else ""


@functools.lru_cache(maxsize=_CACHE)
def path_entity(path: str, param: str | None = None) -> str | None:
    """Entity a REST path is about: the segment before ``{param}``, else the last literal segment."""
    segments = [s for s in path.split("/") if s]
    index = len(segments)
    if param is not None:
        for i, segment in enumerate(segments):
            if re.fullmatch(r"\{[+*]?" + re.escape(param) + r"\*?\}", segment):
                index = i
                break
        else:
            return None
    for segment in reversed(segments[:index]):
        word = segment.split(":")[0]
        if _LITERAL_SEGMENT.match(word) and not _VERSION_SEGMENT.fullmatch(word):
            return entity_name(word) or None
        if param is not None:
            return None
    return None
