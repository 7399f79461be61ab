"""``$ref`` resolution for one document: deep schema inlining with cycle cuts.

Why it is shaped like this:

* Schemas are inlined so the canonical model never carries a ``$ref``. A schema
  that reaches itself is cut at the recursion point: the inner reference becomes
  ``{"type": "object", "x-recursive": true}``.
* Real documents are big (Microsoft Graph has 6,000 schemas), so a resolved
  reference is memoised whenever its result does not depend on which references
  were being expanded around it (no cut inside it points above it). Unchanged
  subtrees are returned as-is, so results share structure with the source
  document and with each other: treat them as read-only.
* A few documents tie dozens of schemas into one strongly connected tangle
  (Stripe, Bungie). Cutting only at exact recursion points would enumerate every
  simple path through the tangle, so inside a tangle of more than
  ``EXACT_CYCLE_LIMIT`` schemas a reference back into the tangle is cut as soon as
  one member of it is being expanded.
* Inlining a DAG of schemas can still multiply its size (Microsoft Graph would
  write out a billion values), so references nested more than ``max_depth``
  deep become ``{"type": ..., "x-truncated": true, "title": <name>}``, and
  callers lower ``max_depth`` further for a tool or schema that would exceed
  ``NODE_BUDGET`` values (less in documents with thousands of operations, so a
  whole document stays near ``DOC_NODE_BUDGET``).
* ``allOf`` is merged into one schema; ``oneOf``/``anyOf`` are kept (see
  ``shapes.object_view`` for the flattened object view).
* Swagger 2's ``type: file`` is ``{type: string, format: binary}``, as OpenAPI 3 spells it,
  also where a converted document wrote it ``{type: object, format: file}`` or kept
  ``type: file`` (``file_as_binary``): a file part or a binary body is bytes, never an object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote

import networkx as nx

from compoworld.specs.errors import SpecError, join_pointer

__all__ = [
    "DOC_NODE_BUDGET",
    "EXACT_CYCLE_LIMIT",
    "MAX_REF_DEPTH",
    "MIN_NODE_BUDGET",
    "NODE_BUDGET",
    "Resolver",
    "file_as_binary",
    "merge_all_of",
    "recursion_cut",
    "ref_name",
    "truncation_marker",
]

EXACT_CYCLE_LIMIT = 6
MAX_REF_DEPTH = 4
NODE_BUDGET = 8_000
DOC_NODE_BUDGET = 1_500_000
MIN_NODE_BUDGET = 1_000
_INF = 1 << 30
_MAP_KEYS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_LIST_KEYS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_ONE_KEYS = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "if",
        "then",
        "else",
        "propertyNames",
        "additionalItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
_DROP_KEYS = frozenset({"$defs", "definitions"})
_COMPOUND_KEYS = frozenset({"properties", "items", "allOf", "anyOf", "oneOf", "additionalProperties"})
_NAMED_PREFIXES = ("#/components/schemas/", "#/definitions/", "#/$defs/")


_NOT_A_FILE = frozenset({"properties", "additionalProperties", "items", "allOf", "anyOf", "oneOf"})


def file_as_binary(schema: dict[str, Any]) -> dict[str, Any]:
    """A file schema as a binary string: Swagger 2's ``{type: file}``, and ``{type: object, format:
    file}`` as converters write it (no properties: an object with members is not a file); any
    other schema as it is."""
    kind = schema.get("type")
    if kind == "file" or (
        schema.get("format") == "file" and kind in (None, "object") and not _NOT_A_FILE & schema.keys()
    ):
        return {**schema, "type": "string", "format": "binary"}
    return schema


def recursion_cut() -> dict[str, Any]:
    """What a recursive reference is replaced by (a fresh dict each time)."""
    return {"type": "object", "x-recursive": True}


def _is_compound(schema: dict[str, Any]) -> bool:
    return any(k in schema for k in _COMPOUND_KEYS) or schema.get("type") in ("object", "array")


def branch_types(
    schema: dict[str, Any], resolve: Callable[[Any], Any] = lambda node: node, depth: int = 0
) -> set[str]:
    """The JSON types a schema's own ``type`` or its anyOf/oneOf branches name (``null`` included),
    ``resolve`` following a branch that is a ``$ref``."""
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            sub = resolve(sub)
            if isinstance(sub, dict) and depth < 4:
                found |= branch_types(sub, resolve, depth + 1) or {"object"}
    return found


def truncation_marker(ref: str, target: dict[str, Any], types: set[str] | None = None) -> dict[str, Any]:
    """What a reference nested deeper than the depth limit is replaced by: its type, or where its
    alternatives (``types``) share one (an id ``anyOf`` integers or null), that type, nullable."""
    t = target.get("type")
    types = types if types is not None and not isinstance(t, str) else branch_types(target)
    kinds = types - {"null"}
    kind = next(iter(kinds)) if len(kinds) == 1 else "object"
    out: dict[str, Any] = {"type": kind, "x-truncated": True}
    if "null" in types and not isinstance(t, str):
        out["nullable"] = True
    name = ref_name(ref)
    if name:
        out["title"] = name
    if isinstance(target.get("description"), str):
        out["description"] = target["description"]
    return out


def ref_name(ref: object) -> str | None:
    """The schema name a ``$ref`` points at (``#/components/schemas/Pet`` -> ``Pet``), if it names one."""
    if not isinstance(ref, str):
        return None
    for prefix in _NAMED_PREFIXES:
        if ref.startswith(prefix):
            rest = ref[len(prefix) :]
            if rest and "/" not in rest:
                name = unquote(rest) if "%" in rest else rest
                return name.replace("~1", "/").replace("~0", "~")
    return None


def merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """Merge a schema's (already resolved) ``allOf`` members into one schema.

    Properties are united (later members win on a clash), ``required`` lists are
    united in order, other keywords keep the first member's value, and the
    composing schema's own keywords win over every member.
    """
    props: dict[str, Any] = {}
    required: list[str] = []
    out: dict[str, Any] = {}
    members = [m for m in schema.get("allOf", []) if isinstance(m, dict)]
    own = {k: v for k, v in schema.items() if k != "allOf"}
    for part, is_own in [*((m, False) for m in members), (own, True)]:
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                props.update(value)
            elif key == "required" and isinstance(value, list):
                required.extend(r for r in value if isinstance(r, str) and r not in required)
            elif key == "x-recursive" and not is_own:
                continue
            elif is_own:
                out[key] = value
            else:
                out.setdefault(key, value)
    if props:
        out["properties"] = props
        if out.get("type") not in ("object", None) and not isinstance(out.get("type"), list):
            out["type"] = "object"
        out.setdefault("type", "object")
    if required:
        out["required"] = required
    return out


class Resolver:
    """Resolves ``$ref``s inside one root document (a whole spec, or one tool's input schema).

    ``prefix`` is the pointer of ``root`` inside the file, so errors point at the
    right node when the root is a sub-document.
    """

    def __init__(
        self, root: Any, source_file: str, prefix: Sequence[object] = (), max_depth: int = MAX_REF_DEPTH
    ) -> None:
        self.root = root
        self.max_depth = max_depth
        self.file = source_file
        self.prefix = tuple(prefix)
        self.warnings: list[str] = []
        self._memo: dict[tuple[str, int], Any] = {}
        self._lookups: dict[str, tuple[Any, tuple[object, ...]]] = {}
        self._stack: dict[str, int] = {}
        self._comp: dict[str, int] = {}
        self._comp_size: list[int] = []
        self._comp_on_stack: dict[int, int] = {}
        self._low = _INF
        self._sizes: dict[int, tuple[Any, int]] = {}

    # -- errors and lookups -------------------------------------------------
    def error(self, at: Sequence[object], message: str) -> SpecError:
        """A SpecError located at ``at`` (tokens relative to the root)."""
        return SpecError(self.file, join_pointer((*self.prefix, *at)), message)

    def lookup(self, ref: str, at: Sequence[object]) -> tuple[Any, tuple[object, ...]]:
        """The node a local ``$ref`` points at, and its tokens; SpecError if it dangles."""
        hit = self._lookups.get(ref)
        if hit is not None:
            return hit
        if not ref.startswith("#"):
            raise self.error(at, f"external $ref '{ref}' is not supported (bundle the document first)")
        frag = ref[1:]
        if "%" in frag:
            frag = unquote(frag)
        if frag and not frag.startswith("/"):
            raise self.error(at, f"$ref '{ref}' is not a JSON pointer")
        node = self.root
        tokens: list[object] = []
        for raw in frag.split("/")[1:] if frag else []:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
                tokens.append(token)
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
                tokens.append(int(token))
            else:
                raise self.error(at, f"dangling $ref '{ref}': nothing at #{join_pointer((*tokens, token))}")
        hit = (node, tuple(tokens))
        self._lookups[ref] = hit
        return hit

    def deref(self, node: Any, at: Sequence[object]) -> tuple[Any, tuple[object, ...]]:
        """Follow a chain of ``$ref``s on a non-schema object (parameter, response, body)."""
        tokens = tuple(at)
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                raise self.error(tokens, f"circular $ref '{ref}'")
            seen.add(ref)
            node, tokens = self.lookup(ref, tokens)
        return node, tokens

    # -- schemas ------------------------------------------------------------
    def schema(self, node: Any, at: Sequence[object]) -> Any:
        """``node`` as a schema with every ``$ref`` inlined and ``allOf`` merged."""
        try:
            return self._schema(node, list(at))
        except RecursionError:
            raise self.error(at, "schema nesting too deep") from None

    def _schema(self, node: Any, at: list[object]) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return self._body(node, at)
        target = self._ref(ref, at)
        if len(node) == 1:
            return target
        siblings = self._body({k: v for k, v in node.items() if k != "$ref"}, at)
        if not isinstance(target, dict):
            return siblings
        return {**target, **siblings}

    def _ref(self, ref: str, at: list[object]) -> Any:
        idx = self._stack.get(ref)
        if idx is not None:
            self._low = min(self._low, idx)
            return recursion_cut()
        if not ref.startswith("#"):
            self.warnings.append(
                f"#{join_pointer((*self.prefix, *at))}: external $ref '{ref}' left unresolved"
            )
            return {"x-unresolved-ref": ref}
        depth = len(self._stack)
        key = (ref, max(self.max_depth - depth, 0))
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        target, tokens = self.lookup(ref, at)
        if depth >= self.max_depth:
            final = self._final(target)
            if isinstance(final, dict) and _is_compound(final):
                return truncation_marker(ref, final, branch_types(final, self._final))
        comp = self._component(ref)
        if self._comp_size[comp] > EXACT_CYCLE_LIMIT and comp in self._comp_on_stack:
            self._low = min(self._low, self._comp_on_stack[comp])
            return recursion_cut()
        self._stack[ref] = depth
        owns_comp = comp not in self._comp_on_stack
        if owns_comp:
            self._comp_on_stack[comp] = depth
        saved, self._low = self._low, _INF
        try:
            result = self._schema(target, list(tokens))
        finally:
            del self._stack[ref]
            if owns_comp:
                del self._comp_on_stack[comp]
            low, self._low = self._low, min(saved, self._low)
        if low >= depth:
            self._memo[key] = result
        return result

    def _final(self, node: Any) -> Any:
        """The end of a chain of pure ``$ref`` aliases (the node itself if it is not one)."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"] not in seen:
            seen.add(node["$ref"])
            try:
                node, _ = self.lookup(node["$ref"], ())
            except SpecError:
                return node
        return node

    def _body(self, node: dict[str, Any], at: list[object]) -> Any:
        out: dict[str, Any] | None = None
        for key, value in node.items():
            new: Any = value
            at.append(key)
            if key in _MAP_KEYS and isinstance(value, dict):
                new = self._map(value, at)
            elif key in _LIST_KEYS and isinstance(value, list):
                new = self._list(value, at)
            elif key in _ONE_KEYS:
                new = self._list(value, at) if isinstance(value, list) else self._schema(value, at)
            at.pop()
            if key in _DROP_KEYS:
                if out is None:
                    out = dict(node)
                del out[key]
            elif new is not value:
                if out is None:
                    out = dict(node)
                out[key] = new
        result = node if out is None else out
        if isinstance(result.get("allOf"), list):
            result = merge_all_of(result)
        return _numeric_enum(file_as_binary(result))

    def _map(self, value: dict[str, Any], at: list[object]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        changed = False
        for name, sub in value.items():
            at.append(name)
            new = self._schema(sub, at)
            at.pop()
            out[name] = new
            changed = changed or new is not sub
        return out if changed else value

    def _list(self, value: list[Any], at: list[object]) -> list[Any]:
        out: list[Any] = []
        changed = False
        for i, sub in enumerate(value):
            at.append(i)
            new = self._schema(sub, at)
            at.pop()
            out.append(new)
            changed = changed or new is not sub
        return out if changed else value

    # -- size budget ----------------------------------------------------------
    def size(self, node: Any) -> int:
        """Number of JSON values in ``node`` once written out (shared subtrees counted each time)."""
        if not isinstance(node, dict | list):
            return 1
        hit = self._sizes.get(id(node))
        if hit is not None:
            return hit[1]
        values = node.values() if isinstance(node, dict) else node
        total = 1
        for value in values:
            total += self.size(value)
        self._sizes[id(node)] = (node, total)
        return total

    def schema_within(self, node: Any, at: Sequence[object], budget: int = NODE_BUDGET) -> Any:
        """``schema(node)``, inlined less deeply when it would exceed ``budget`` JSON values."""
        saved = self.max_depth
        try:
            while True:
                result = self.schema(node, at)
                if self.max_depth <= 1 or self.size(result) <= budget:
                    return result
                self.max_depth -= 1
        finally:
            self.max_depth = saved

    # -- reference graph ----------------------------------------------------
    def _component(self, ref: str) -> int:
        """Id of the strongly connected component of ``ref`` in the reference graph."""
        comp = self._comp.get(ref)
        if comp is not None:
            return comp
        edges: dict[str, set[str]] = {}
        queue = [ref]
        while queue:
            current = queue.pop()
            if current in self._comp or current in edges:
                continue
            edges[current] = self._refs_under(current)
            queue.extend(edges[current])
        graph: nx.DiGraph[str] = nx.DiGraph()
        graph.add_nodes_from(edges)
        graph.add_edges_from((a, b) for a, targets in edges.items() for b in targets if b in edges)
        for members in nx.strongly_connected_components(graph):
            cid = len(self._comp_size)
            self._comp_size.append(len(members))
            for member in members:
                self._comp[member] = cid
        return self._comp[ref]

    def _refs_under(self, ref: str) -> set[str]:
        """Local refs anywhere below the node ``ref`` points at (none if it dangles)."""
        if not ref.startswith("#"):
            return set()
        try:
            node, _ = self.lookup(ref, ())
        except SpecError:
            return set()
        found: set[str] = set()
        seen: set[int] = set()
        todo = [node]
        while todo:
            item = todo.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                r = item.get("$ref")
                if isinstance(r, str) and r.startswith("#"):
                    found.add(r)
                todo.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                todo.extend(v for v in item if isinstance(v, dict | list))
        return found


_NUMERAL = {"integer": re.compile(r"-?\d+"), "number": re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")}


def _numeric_enum(schema: dict[str, Any]) -> dict[str, Any]:
    """A number schema whose ``enum`` spells its numbers as text (WhatsApp's ``{"type": "integer",
    "enum": ["6", "12", "18", "24"]}``, which no value satisfies): the enum of those numbers."""
    kind, enum = schema.get("type"), schema.get("enum")
    if not isinstance(kind, str) or kind not in _NUMERAL or not isinstance(enum, list) or not enum:
        return schema
    if not all(isinstance(v, str) and _NUMERAL[kind].fullmatch(v.strip()) for v in enum):
        return schema
    number = int if kind == "integer" else float
    return {**schema, "enum": [number(v.strip()) for v in enum]}
