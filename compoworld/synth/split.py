"""Split a huge document into coherent parts, each a valid document of its own, none over ``max_tools``.

An agent cannot hold 11,422 tools (Microsoft Graph) and a builder cannot hold their service, so a
document with more operations than ``max_tools`` becomes several: every operation gets a key, a
word path naming what it acts on, and operations are partitioned along those paths top-down
until every part fits. The key is, in order of preference:

* the operation's first tag, in words (``users.calendar`` -> users / calendar,
  ``CompanyWebhooks`` -> company / webhooks), when most operations are tagged; an untagged one
  takes the tag of the nearest path above it that has one (Graph tags no
  ``/deviceManagement/auditEvents/$count``: it goes with the audit events it counts, since a
  count, a cast or a subresource answers from the table of the part holding its collection);
* for query-style APIs (``/#Action=DescribeVolumes``, AWS), the noun of the action
  (volume), its verb dropped;
* otherwise the path's resource segments, after the prefix every path shares and any
  version segment (``/v1/customers/{id}/sources`` -> customers / sources).

A part is named after the words its operations share (``users_calendar``, ``volume``); parts of
fewer than ``MIN_PART`` operations under one node are pooled as ``<node>_other``. A part keeps
the document's info (its title says which part), servers and security, the path items of its
operations (a path item that is a ``$ref`` resolved), and the transitive closure of what they
reference: the components (or Swagger definitions) they reach, and, copied in place, anything
they reference inside a path item the part does not hold (``#/paths/~1other/get/responses/401``),
so each part ingests on its own and its ``spec.json`` can be re-rendered like any other document.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from compoworld.specs.naming import slugify
from compoworld.specs.words import singular, split_words

__all__ = ["DEFAULT_MAX_TOOLS", "MIN_PART", "Part", "count_operations", "part_document", "split_plan"]

DEFAULT_MAX_TOOLS = 250
MIN_PART = 4
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_COUNTED = frozenset({"get", "put", "post", "delete", "patch"})
_VERSION = re.compile(r"^(v\d+([._]\d+)*([a-z]+\d*)?|\d+(\.\d+)+|\d{4}-\d{2}-\d{2}|api|apis|rest)$", re.I)
_ACTION = re.compile(r"[#?&](?:Action|X-Amz-Target)=(?:[A-Za-z0-9_]+\.)?([A-Za-z0-9]+)")
_MAX_KEY = 30
_VERBS = frozenset(
    [
        "accept",
        "add",
        "allocate",
        "apply",
        "assign",
        "associate",
        "attach",
        "authorize",
        "batch",
        "cancel",
        "confirm",
        "copy",
        "create",
        "deactivate",
        "delete",
        "deprovision",
        "deregister",
        "describe",
        "detach",
        "disable",
        "disassociate",
        "enable",
        "export",
        "get",
        "import",
        "list",
        "modify",
        "move",
        "purchase",
        "put",
        "reboot",
        "register",
        "reject",
        "release",
        "remove",
        "replace",
        "reset",
        "restore",
        "revoke",
        "run",
        "search",
        "send",
        "set",
        "start",
        "stop",
        "tag",
        "terminate",
        "test",
        "unassign",
        "untag",
        "update",
        "upload",
        "validate",
        "activate",
        "advertise",
        "withdraw",
        "provision",
        "monitor",
        "unmonitor",
    ]
)
_ROOT = "other"
_ROUTE = "/"  # in a key, path words follow it: they name a part only as far as they were needed


@dataclass(frozen=True)
class Part:
    """One part of a split document: a name and the operations (path, method) it holds."""

    key: str
    label: str
    operations: tuple[tuple[str, str], ...]


def _operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    paths = doc.get("paths")
    if not isinstance(paths, dict):
        return
    for path, item in paths.items():
        item = _path_item(doc, item)
        if isinstance(item, dict):
            for method in METHODS:
                op = item.get(method)
                if method in _COUNTED and isinstance(op, dict):
                    yield path, method, op


def count_operations(doc: Any) -> int:
    """Operations (path x method) in an OpenAPI or Swagger document; 0 for anything else."""
    return sum(1 for _ in _operations(doc)) if isinstance(doc, dict) else 0


def _words(text: str) -> tuple[str, ...]:
    return tuple(singular(w) for w in split_words(text) if not _VERSION.match(w))


def _static_segments(path: str) -> list[str]:
    return [s for s in path.split("?")[0].split("#")[0].split("/") if s and not s.startswith("{")]


def _keys(doc: dict[str, Any]) -> dict[tuple[str, str], tuple[str, ...]]:
    """The word path of every operation (see the module docstring for the order of preference)."""
    ops = list(_operations(doc))
    tagged = sum(1 for _, _, op in ops if op.get("tags") and isinstance(op["tags"][0], str))
    by_tag = tagged >= 0.8 * len(ops) and len({str((op.get("tags") or [""])[0]) for _, _, op in ops}) > 1
    segments = {path: [s for s in _static_segments(path) if not _VERSION.match(s)] for path, _, _ in ops}
    shared = 0
    if segments:
        first = next(iter(segments.values()))
        while shared < len(first) and all(
            len(s) > shared and s[shared] == first[shared] for s in segments.values()
        ):
            shared += 1
    tags = _path_tags(ops) if by_tag else {}
    keys: dict[tuple[str, str], tuple[str, ...]] = {}
    for path, method, op in ops:
        action = _ACTION.search(path)
        route = tuple(slugify(s) for s in segments[path][shared:] if slugify(s))
        tag = (_tag(op) or _inherited_tag(path, tags)) if by_tag else None
        if tag is not None:
            # a tag too big for one part splits further along the paths of its operations
            key = tuple(w for level in re.split(r"[./:]", tag) for w in _words(level))
            key += (_ROUTE, *route)
        elif action is not None:
            words = [w for w in split_words(action.group(1))]
            while len(words) > 1 and words[0] in _VERBS:
                words = words[1:]
            key = tuple(singular(w) for w in words)
        else:
            key = (_ROUTE, *route)
        keys[(path, method)] = key
    return keys


def _tag(op: dict[str, Any]) -> str | None:
    tags = op.get("tags")
    return tags[0] if isinstance(tags, list) and tags and isinstance(tags[0], str) else None


def _path_tags(ops: list[tuple[str, str, dict[str, Any]]]) -> dict[str, str]:
    """Path (query and fragment dropped) -> the first tag of its operations, a ``get``'s first."""
    out: dict[str, str] = {}
    for path, _method, op in sorted(ops, key=lambda o: o[1] != "get"):
        tag = _tag(op)
        if tag is not None:
            out.setdefault(path.split("?")[0].split("#")[0].rstrip("/"), tag)
    return out


def _inherited_tag(path: str, tags: dict[str, str]) -> str | None:
    """The tag of the nearest path above ``path`` that has one (``/a/b/$count`` -> ``/a/b``'s)."""
    segments = path.split("?")[0].split("#")[0].rstrip("/").split("/")
    for end in range(len(segments) - 1, 1, -1):
        tag = tags.get("/".join(segments[:end]))
        if tag is not None:
            return tag
    return None


def _common(keys: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = keys[0]
    n = 0
    while n < len(first) and all(len(k) > n and k[n] == first[n] for k in keys):
        n += 1
    return first[:n]


def _partition(
    items: list[tuple[tuple[str, ...], tuple[str, str]]], depth: int, max_tools: int
) -> list[tuple[tuple[str, ...], list[tuple[str, str]]]]:
    """Split ``items`` (key, operation) along their keys from ``depth`` on into groups of at most ``max_tools``."""
    keys = [k for k, _ in items]
    name = _common(keys) if items else ()
    if len(items) <= max_tools:
        if _ROUTE in name:  # path words past the point this group was told apart name nothing
            name = name[: max(name.index(_ROUTE), depth)]
        return [(name, [op for _, op in items])]
    depth = max(depth, len(name))
    children: dict[str, list[tuple[tuple[str, ...], tuple[str, str]]]] = defaultdict(list)
    own: list[tuple[str, str]] = []
    for key, op in items:
        if depth < len(key):
            children[key[depth]].append((key, op))
        else:
            own.append(op)
    groups: list[tuple[tuple[str, ...], list[tuple[str, str]]]] = []
    for word in sorted(children):
        groups += _partition(children[word], depth + 1, max_tools)
    small = [op for key, ops in groups if len(ops) < MIN_PART for op in ops]
    groups = [(key, ops) for key, ops in groups if len(ops) >= MIN_PART]
    groups += _chunks(name[:depth], own, max_tools)  # operations whose key ends here: the node itself
    groups += _chunks((*name[:depth], _ROOT), small, max_tools)  # small branches, pooled
    return groups


def _chunks(
    name: tuple[str, ...], ops: list[tuple[str, str]], max_tools: int
) -> list[tuple[tuple[str, ...], list[tuple[str, str]]]]:
    if len(ops) <= max_tools:
        return [(name, ops)] if ops else []
    return [((*name, str(i // max_tools + 1)), ops[i : i + max_tools]) for i in range(0, len(ops), max_tools)]


def _part_key(words: tuple[str, ...]) -> str:
    """The words joined (a word repeated in another number dropped), middle words cut to stay short."""
    kept: list[str] = []
    for word in words:
        if word != _ROUTE and all(singular(word) != singular(k) for k in kept):
            kept.append(word)
    while len(kept) > 2 and len("_".join(kept)) > _MAX_KEY:
        del kept[1]
    return slugify("_".join(kept)) or _ROOT


def split_plan(doc: Any, max_tools: int = DEFAULT_MAX_TOOLS) -> list[Part] | None:
    """The parts of a document with more than ``max_tools`` operations; ``None`` when it fits whole."""
    if not isinstance(doc, dict) or count_operations(doc) <= max_tools:
        return None
    keys = _keys(doc)
    items = sorted(((key, op) for op, key in keys.items()), key=lambda kv: (kv[0], kv[1]))
    order = {op: i for i, op in enumerate(keys)}  # the document's own operation order
    parts: list[Part] = []
    taken: set[str] = set()
    for words, ops in _partition(items, 0, max_tools):
        key = _part_key(words)
        base, n = key, 2
        while key in taken:
            key, n = f"{base}_{n}", n + 1
        taken.add(key)
        label = " ".join(_part_key(words).split("_"))
        parts.append(Part(key, label, tuple(sorted(ops, key=order.__getitem__))))
    return sorted(parts, key=lambda p: p.key)


# -- the part as a document ---------------------------------------------------------------------

_REF_ROOTS = {"components": 3, "definitions": 2, "parameters": 2, "responses": 2}


def _refs(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                yield ref
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _tokens(ref: str) -> tuple[str, ...]:
    """The JSON pointer of a local ``$ref`` (``#/a/b~1c`` -> a, b/c), percent-decoded as the resolver does."""
    frag = unquote(ref[2:]) if "%" in ref else ref[2:]
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in frag.split("/"))


def _pointer(ref: str) -> tuple[str, ...] | None:
    parts = _tokens(ref)
    depth = _REF_ROOTS.get(parts[0]) if parts else None
    return parts[:depth] if depth is not None and len(parts) >= depth else None


def _lookup(doc: Any, pointer: tuple[str, ...]) -> Any:
    node: Any = doc
    for part in pointer:
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def _path_item(doc: dict[str, Any], item: Any) -> Any:
    """A path item with its ``$ref`` chain followed (to another path or ``components/pathItems``)."""
    seen: set[str] = set()
    while isinstance(item, dict) and isinstance(item.get("$ref"), str) and item["$ref"].startswith("#/"):
        ref = item["$ref"]
        target = _lookup(doc, _tokens(ref))
        if ref in seen or not isinstance(target, dict):
            return item
        seen.add(ref)
        item = target
    return item


def _carried(
    doc: dict[str, Any], node: Any, held: dict[str, Any], active: frozenset[str] = frozenset()
) -> Any:
    """``node`` with every ``$ref`` into a path item the part does not hold (``held``) replaced by a
    copy of its target, recursively; unchanged subtrees are returned as they are."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/paths/") and ref not in active:
            tokens = _tokens(ref)
            target = _lookup(doc, tokens)
            if target is not None and _lookup({"paths": held}, tokens) is None:
                return _carried(doc, target, held, active | {ref})
        out = {k: _carried(doc, v, held, active) for k, v in node.items()}
        return node if all(out[k] is v for k, v in node.items()) else out
    if isinstance(node, list):
        items = [_carried(doc, v, held, active) for v in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    return node


def _reachable(doc: dict[str, Any], roots: list[Any]) -> set[tuple[str, ...]]:
    """Every component (or Swagger definition) the roots reach through ``$ref``, transitively."""
    seen: set[tuple[str, ...]] = set()
    todo = [r for root in roots for r in _refs(root)]
    while todo:
        pointer = _pointer(todo.pop())
        if pointer is None or pointer in seen:
            continue
        seen.add(pointer)
        target = _lookup(doc, pointer)
        if target is not None:
            todo.extend(_refs(target))
    return seen


def part_document(doc: dict[str, Any], part: Part, of: int) -> dict[str, Any]:
    """The part as a standalone document: its operations and only the components they reach."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for path, method in part.operations:
        wanted[path].add(method)
    paths: dict[str, Any] = {}
    for path, item in doc["paths"].items():
        if path in wanted:
            item = _path_item(doc, item)
            paths[path] = {k: v for k, v in item.items() if k not in METHODS or k in wanted[path]}
    paths = _carried(doc, paths, paths)
    security = (
        doc.get("components", {}).get("securitySchemes") if isinstance(doc.get("components"), dict) else None
    )
    reached = _reachable(doc, [paths, doc.get("security"), security])
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key == "paths":
            out[key] = paths
        elif key in _REF_ROOTS and isinstance(value, dict):
            out[key] = _pruned(key, value, reached)
        elif key == "tags" and isinstance(value, list):
            used = {
                t
                for item in paths.values()
                for op in item.values()
                if isinstance(op, dict)
                for t in op.get("tags") or []
            }
            out[key] = [t for t in value if isinstance(t, dict) and t.get("name") in used]
        else:
            out[key] = value
    info = dict(doc.get("info") or {})
    title = str(info.get("title") or "").strip()
    info["title"] = f"{title} ({part.label})" if title else part.label
    info["x-compoworld-part"] = {"key": part.key, "label": part.label, "of": of}
    out["info"] = info
    return out


def _pruned(root: str, section: dict[str, Any], reached: set[tuple[str, ...]]) -> dict[str, Any]:
    if root != "components":
        return {name: v for name, v in section.items() if (root, name) in reached}
    out: dict[str, Any] = {}
    for kind, entries in section.items():
        if kind == "securitySchemes" or not isinstance(entries, dict):
            out[kind] = entries
        else:
            kept = {name: v for name, v in entries.items() if (root, kind, name) in reached}
            if kept:
                out[kind] = kept
    return out
