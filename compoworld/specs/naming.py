"""Names the rest of CompoWorld can rely on: tool names, parameter identifiers, service slugs.

Tool names are agent-facing (``[A-Za-z0-9_-]``, at most 64 characters); parameter
names become Python identifiers in generated code, so they are ASCII, not
keywords, and never start with ``_`` (pydantic treats those as private); a service
slug is ``[a-z0-9_]`` and names a folder. Truncation keeps a sha256 suffix so two
long names never collapse into one.
"""

from __future__ import annotations

import functools
import hashlib
import keyword
import re
import unicodedata
from pathlib import PurePath

__all__ = [
    "MAX_TOOL_NAME",
    "derive_operation_name",
    "identifier",
    "service_slug",
    "slugify",
    "tool_name",
    "unique",
    "unique_tool_name",
]

MAX_TOOL_NAME = 64
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]+")
MAX_SLUG = 40
_GENERIC_TITLE_WORDS = frozenset(
    {"api", "apis", "rest", "restful", "openapi", "swagger", "spec", "specification", "service", "services"}
    | {"the", "for", "of", "web", "http", "server", "documentation", "docs", "reference", "v", "version"}
)
_FORMAT_WORDS = frozenset(
    {
        "mcp",
        "functions",
        "function",
        "tools",
        "openapi",
        "swagger",
        "oas",
        "oas3",
        "spec",
        "compoworld",
        "api",
    }
)
_SECOND_LEVEL = frozenset({"co", "com", "gov", "ac", "org", "net", "edu", "or", "ne", "go"})


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _shorten(name: str, limit: int, sep: str = "_") -> str:
    """Cut ``name`` to ``limit`` chars, keeping it unique with a sha256 suffix."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return name[: limit - 9].rstrip("_-") + sep + digest


def tool_name(raw: str) -> str:
    """An operationId / tool name as ``[A-Za-z0-9_-]{1,64}``; ``""`` if nothing usable is left."""
    if _TOOL_NAME.fullmatch(raw) and len(raw) <= MAX_TOOL_NAME:
        return raw
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", _ascii(raw).strip())
    name = re.sub(r"_{2,}", "_", name).strip("_")
    return _shorten(name, MAX_TOOL_NAME)


def derive_operation_name(method: str, path: str) -> str:
    """``get /pets/{petId}`` -> ``get_pets_petId``: a name for an operation without operationId."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", _ascii(path)) if w]
    return tool_name("_".join([method.lower(), *words]) if words else f"{method.lower()}_root")


@functools.lru_cache(maxsize=1 << 16)
def identifier(raw: str) -> str:
    """A parameter name as an ASCII Python identifier (``first-name`` -> ``first_name``,
    ``$filter`` -> ``filter``, ``class`` -> ``class_``); ``""`` if nothing usable is left."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", _ascii(raw)).strip("_")
    if name != raw:
        name = re.sub(r"_{2,}", "_", name)
    if not name:
        return ""
    if name[0].isdigit():
        name = "n" + name
    if keyword.iskeyword(name):
        name += "_"
    return name


def unique_tool_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``... cut to stay within 64 characters; joins ``taken``."""
    candidate, n = name, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate = name[: MAX_TOOL_NAME - len(suffix)] + suffix
        n += 1
    taken.add(candidate)
    return candidate


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... whichever is not in ``taken`` (which it joins)."""
    candidate, n = name, 2
    while candidate in taken:
        candidate = f"{name}_{n}"
        n += 1
    taken.add(candidate)
    return candidate


def slugify(text: str) -> str:
    """Lower-case ``[a-z0-9_]`` slug; prefixed when it would start with a digit."""
    slug = re.sub(r"[^a-z0-9]+", "_", _ascii(text).lower()).strip("_")
    if slug and slug[0].isdigit():
        slug = "api_" + slug
    return _shorten(slug, MAX_SLUG).strip("_")


def _provider_words(domain: str) -> list[str]:
    labels = [x for x in domain.lower().split(".") if x]
    while labels and labels[0] in ("www", "api", "apis"):
        labels = labels[1:]
    if len(labels) > 1:
        labels = labels[:-1]
        if len(labels) > 1 and labels[-1] in _SECOND_LEVEL:
            labels = labels[:-1]
    return labels


def _join_provider(provider: list[str], service: str | None) -> str:
    """``xero`` + ``xero_files`` -> ``xero_files``; ``apideck`` + ``crm`` -> ``apideck_crm``."""
    lead = slugify("_".join(provider))
    tail = slugify(service or "")
    if tail and lead and (tail == lead or tail.startswith(lead + "_")):
        return tail
    return slugify("_".join(w for w in (lead, tail) if w))


def _title_slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", _ascii(title).lower())
    kept = [w for w in words if w not in _GENERIC_TITLE_WORDS and not re.fullmatch(r"v?\d+", w)]
    return slugify("_".join(kept))


def service_slug(
    source_file: str, title: str = "", provider: str | None = None, service: str | None = None
) -> str:
    """The service slug: APIs.guru provider/service names, a directory layout, the title, the file name.

    ``api/apideck.com/crm.json`` (or ``x-providerName: apideck.com``, ``x-serviceName: crm``)
    gives ``apideck_crm``; a generic title such as "API" never beats the file name.
    """
    if provider and "." in provider:
        return _join_provider(_provider_words(provider), service)
    path = PurePath(source_file)
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    parent = path.parent.name
    if "." in parent and not parent.startswith("."):
        return _join_provider(_provider_words(parent), stem)
    if "." in stem:
        return slugify("_".join(_provider_words(stem)))
    stem_words = [w for w in re.split(r"[^a-z0-9]+", stem.lower()) if w and w not in _FORMAT_WORDS]
    return _title_slug(title) or slugify("_".join(stem_words)) or slugify(stem) or "service"
