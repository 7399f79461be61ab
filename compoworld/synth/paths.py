"""The REST shape of an OpenAPI path: collection, item, or an action on one of them.

``/calendars/{calendarId}/events`` is the *collection* ``events`` under the parent
``calendars/{calendarId}``; ``.../events/{eventId}`` is an *item* of it; ``.../events/quickAdd``
and ``.../events/{eventId}/move`` are *actions* on the collection and on the item. Entity
inference and tool classification both read this shape, so it is computed in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from compoworld.specs.words import entity_name, split_words
from compoworld.synth.naming import match_key, snake

__all__ = ["ACTION_VERBS", "NON_RESOURCES", "PathShape", "is_plural", "parse_path", "sub_record_of"]

#: A trailing literal containing one of these words is an operation, not a collection.
ACTION_VERBS: frozenset[str] = frozenset(
    {
        "activate",
        "add",
        "approve",
        "archive",
        "assign",
        "authorize",
        "batch",
        "bulk",
        "bypass",
        "calculate",
        "cancel",
        "capture",
        "check",
        "clear",
        "clone",
        "close",
        "complete",
        "confirm",
        "convert",
        "copy",
        "count",
        "deactivate",
        "disable",
        "download",
        "duplicate",
        "enable",
        "execute",
        "export",
        "finish",
        "generate",
        "import",
        "invite",
        "lock",
        "login",
        "logout",
        "merge",
        "move",
        "pause",
        "preview",
        "publish",
        "query",
        "refresh",
        "reject",
        "reopen",
        "reset",
        "resend",
        "restore",
        "resume",
        "retry",
        "revoke",
        "run",
        "search",
        "send",
        "share",
        "start",
        "stop",
        "submit",
        "sync",
        "test",
        "trigger",
        "unarchive",
        "unlock",
        "unsubscribe",
        "upload",
        "validate",
        "verify",
        "void",
        "watch",
    }
)
#: Literals that never name a collection of rows.
NON_RESOURCES: frozenset[str] = frozenset(
    {
        "me",
        "self",
        "current",
        "my",
        "api",
        "rest",
        "v1",
        "v2",
        "v3",
        "v4",
        "admin",
        "public",
        "private",
        "internal",
    }
)

#: Literals naming a query of the collection before them, qualified by what follows (``query/count``).
_QUERY_LITERALS = frozenset({"query", "search"})
#: Literals after an item that are a view of it, not a collection under it (``/messages/{id}/details``).
_VIEWS = frozenset({"details", "detail", "dump", "raw", "content", "contents", "source"})

_PARAM = re.compile(r"^\{([^{}]+)\}$")
#: A response-format suffix on the last segment: ``/products.json``, ``/orders/{id}.xml``.
_FORMAT_SUFFIX = re.compile(r"\.(json|xml|ya?ml|csv|txt|html)$", re.IGNORECASE)
_VERSION = re.compile(r"^v\d+(\.\d+)*$|^\d{4}-\d{2}-\d{2}$")
#: Literals before an item parameter that say it is the key of the collection before them.
_LOOKUP_WORDS = frozenset({"id", "uuid", "guid"})
#: Last words of a path parameter's name that make it the key of what its other words name.
_KEY_WORDS = frozenset({"id", "slug", "key", "uuid", "guid", "sid", "code"})


@dataclass(frozen=True)
class PathShape:
    """What a path names. ``key`` identifies the collection (parameters blanked out)."""

    kind: Literal["collection", "item", "action", "other"]
    resource: str | None = None
    key: str | None = None
    item_param: str | None = None
    parents: tuple[tuple[str, str], ...] = ()
    action: str | None = None
    action_on: Literal["collection", "item"] | None = None


def is_plural(literal: str) -> bool:
    """Whether a path literal reads as a plural noun (``contacts``, ``calendarList`` is not)."""
    words = split_words(literal)
    return bool(words) and entity_name(literal) != snake(literal)


def _param(segment: str) -> str | None:
    match = _PARAM.match(segment)
    return match.group(1) if match else None


def _is_action_literal(segment: str) -> bool:
    return any(w in ACTION_VERBS for w in split_words(segment))


def _named_parent(param: str) -> str | None:
    """What a path parameter that no literal names is the key of, by its own name: ``{workspace_slug}``
    and ``{tenantId}`` scope what follows them to a workspace and a tenant; ``{format}`` names nothing."""
    words = split_words(param)
    if len(words) < 2 or words[-1] not in _KEY_WORDS or words[-2] in _KEY_WORDS:
        return None
    return "_".join(words[:-1])


def _base_shape(segments: list[str]) -> PathShape:
    """Shape of a path without a trailing action literal."""
    if not segments:
        return PathShape(kind="other")
    last = segments[-1]
    item_param = _param(last)
    coll_index = len(segments) - 2 if item_param is not None else len(segments) - 1
    if coll_index < 0:
        return PathShape(kind="other")
    literal = segments[coll_index]
    if (  # ``/company/id/{companyId}``: an item of ``company``, looked up by its key
        item_param is not None
        and literal.lower() in _LOOKUP_WORDS
        and coll_index > 0
        and _param(segments[coll_index - 1]) is None
    ):
        segments = [*segments[:coll_index], segments[-1]]
        coll_index -= 1
        literal = segments[coll_index]
    if _param(literal) is not None or "{" in literal or ":" in literal:
        return PathShape(kind="other")
    if literal.lower() in NON_RESOURCES or _VERSION.match(literal) or not split_words(literal):
        return PathShape(kind="other")
    if item_param is None and "{" in last:
        return PathShape(kind="other")
    resource = literal
    before = segments[coll_index - 1] if coll_index > 0 else None
    # ``/messages/outbound``: a one-word qualifier of the plural before it names the collection
    qualifier = (
        len(split_words(literal)) == 1 and not _is_action_literal(literal) and literal.lower() not in _VIEWS
    )
    if (
        qualifier
        and before is not None
        and _param(before) is None
        and is_plural(before)
        and not is_plural(literal)
    ):
        resource = f"{literal}_{before}"
    parents: list[tuple[str, str]] = []
    for i in range(coll_index):
        name = _param(segments[i])
        if name is None:
            continue
        if i > 0 and _param(segments[i - 1]) is None:
            parents.append((segments[i - 1], name))
        elif (owner := _named_parent(name)) is not None:  # ``/{workspace_slug}/activities``
            parents.append((owner, name))
    key = "/" + "/".join("{}" if _param(s) is not None else s for s in segments[: coll_index + 1])
    return PathShape(
        kind="item" if item_param is not None else "collection",
        resource=resource,
        key=key,
        item_param=item_param,
        parents=tuple(parents),
    )


def parse_path(path: str) -> PathShape:
    """Classify a path template by its last segments (a format suffix, ``/products/{id}.json``, aside)."""
    segments = [s for s in path.strip("/").split("/") if s]
    if not segments:
        return PathShape(kind="other")
    segments[-1] = _FORMAT_SUFFIX.sub("", segments[-1]) or segments[-1]
    last = segments[-1]
    custom = None
    if ":" in last and _param(last) is None:  # Google-style custom method: /things/{id}:archive
        head, _, custom = last.rpartition(":")
        segments = [*segments[:-1], head] if head else segments[:-1]
    elif (
        _param(last) is None and len(segments) > 1 and _is_action_literal(last) and not is_plural(last)
    ) or (last.lower() in _VIEWS and len(segments) > 2 and _param(segments[-2]) is not None):
        custom = last  # an action literal, or a view of an item (``/messages/{id}/details``)
        segments = segments[:-1]
        before = segments[-1]
        if len(segments) > 2 and _param(before) is None and before.lower() in _QUERY_LITERALS:
            custom, segments = f"{before}/{last}", segments[:-1]  # ``/Contracts/query/count``
    if custom is not None:
        base = _base_shape(segments)
        if base.kind in ("collection", "item"):
            return PathShape(
                kind="action",
                resource=base.resource,
                key=base.key,
                item_param=base.item_param,
                parents=base.parents,
                action=custom,
                action_on="item" if base.kind == "item" else "collection",
            )
        return PathShape(kind="action", action=custom)
    return _base_shape(segments)


def sub_record_of(method: str | None, path: str | None) -> tuple[str, set[str]] | None:
    """A write of a row's own sub-record (``PUT /employees/{employeeId}/emergencyContacts``): the
    parameter that names the row, and the match keys the last literal names (singular and plural);
    None for any other path or method."""
    if (method or "").upper() not in ("PUT", "PATCH", "POST"):
        return None
    segments = [s for s in (path or "").split("?")[0].strip("/").split("/") if s]
    if len(segments) < 2 or "{" in segments[-1] or not segments[-2].startswith("{"):
        return None
    key = match_key(segments[-1])
    return segments[-2][1:-1], {key, key[:-1] if key.endswith("s") else key + "s"}
