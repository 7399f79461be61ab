"""REST operations whose paths are operation names, read by those names as MCP tools are.

``POST /createAccountHolder``, ``POST /getAccountHolder``, ``/v1/ProductsApi/List`` and
``GET /{format}/GamesByDate/{date}`` name no collection: their path (or operationId) spells a verb
and an entity. Where the resource structure finds no entity for such an operation, or finds one
named after the verb itself (``/deleteBankAccounts`` read as a collection ``delete_bank_account``),
the operation is read by its name (``compoworld.synth.toolnames``): ``createAccountHolder`` and
``getAccountHolder`` bind to one entity ``account_holder`` whose columns come from the request and
response schemas. A verbless ``GET`` (a data feed) reads the entity its name starts with:
``GamesByDate`` lists ``game`` rows, filtered by the date.
"""

from __future__ import annotations

import re

from compoworld.specs.model import FieldSpec, ServiceSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import entity_name, split_words
from compoworld.synth.drafts import EntityDraft
from compoworld.synth.naming import identifier, match_key
from compoworld.synth.paths import ACTION_VERBS, NON_RESOURCES, parse_path
from compoworld.synth.resources import Target, entity_name_for, implicit_parent, path_param
from compoworld.synth.schemas import unwrap
from compoworld.synth.toolnames import (
    AWS_ACTION,
    HTTP_WORDS,
    READ_ACTION_VERBS,
    VERBS,
    ParsedName,
    find_id_param,
    parse_tool_name,
    tool_entities,
)

__all__ = [
    "operation_name",
    "parse_rest_name",
    "read_by_name",
    "rpc_tools",
    "scope_by_key_args",
    "scope_by_path",
]

_VERSION = re.compile(r"^v\d+(\.\d+)*$|^\d{4}-\d{2}-\d{2}$|^\d+$")
_SUFFIX = re.compile(r"\.(json|xml|ya?ml|csv|txt|html)$", re.IGNORECASE)
_STOP = {"by", "for", "from", "with", "in", "on", "of", "to", "using", "via", "and", "or", "as"}
#: Words of a path literal that qualify no entity (``ProductsApi``, ``KeysService``).
_NOISE = {"api", "apis", "service", "services", "rest", "rpc", "endpoint", "v"}
#: Most words a data feed's name spends on its entity (``PlayerGameStats``).
_MAX_NOUN = 4
_VERB_WORDS = frozenset(VERBS) | ACTION_VERBS | READ_ACTION_VERBS | {"send", "publish", "invite"}


def _literals(path: str) -> list[str]:
    """The literal segments of a path (version and generic segments aside), dotted names split."""
    out: list[str] = []
    for raw in path.split("?")[0].strip("/").split("/"):
        segment = _SUFFIX.sub("", raw)
        if not segment or "{" in segment or _VERSION.match(segment) or segment.lower() in NON_RESOURCES:
            continue
        out.append(segment.rsplit(".", 1)[-1])
    return out


def operation_name(path: str | None) -> str | None:
    """The operation a path spells: ``/createAccountHolder`` -> ``createAccountHolder``,
    ``/v1/ProductsApi/List`` -> ``list_products``, AWS's query protocol's ``/#Action=CreateQueue`` ->
    ``CreateQueue`` (the action a request names); None for a resource-shaped path."""
    action = AWS_ACTION.search(path or "")
    if action is not None:
        words = split_words(action.group(1))
        return action.group(1) if len(words) >= 2 and words[0] in _VERB_WORDS else None
    literals = _literals((path or "").split("#")[0])
    if not literals:
        return None
    words = split_words(literals[-1])
    if not words or words[0] not in _VERB_WORDS:
        return None
    if len(words) >= 2 and words[1] not in _STOP:
        return literals[-1]
    if len(words) == 1 and len(literals) >= 2:  # ``/ProductsApi/List``: the verb after its entity
        noun = [w for w in split_words(literals[-2]) if w not in _NOISE]
        if noun and noun[0] not in _VERB_WORDS:
            return "_".join([words[0], *noun])
    return None


def _own_name(tool: ToolSpec) -> str:
    """The operationId, without a leading HTTP method (``post-checkAccountHolder``)."""
    words = split_words(tool.original_name or tool.name)
    if tool.method and words[:1] and words[0] in HTTP_WORDS and len(words) > 1:
        words = words[1:]
    return "_".join(words)


def parse_rest_name(tool: ToolSpec) -> ParsedName:
    """Operation and entity of a REST operation read by name (path first, then operationId)."""
    words = [w for w in split_words(operation_name(tool.path) or _own_name(tool)) if w not in _NOISE]
    name = "_".join(words)
    parsed = parse_tool_name(name)
    method = (tool.method or "").upper()
    found = unwrap(tool.output_schema)
    is_list = found is not None and found.is_list
    if method == "GET" and parsed.verb not in VERBS and parsed.verb not in _VERB_WORDS:
        noun = []  # a data feed: ``GamesByDate``, ``InjuredPlayers``
        for word in split_words(name):
            if word in _STOP:
                break
            if word not in _NOISE:
                noun.append(word)
        # a name of many words is a sentence (``Gets_employee_pay_statement_detail_data...``)
        entity = entity_name("_".join(noun)) if 0 < len(noun) <= _MAX_NOUN else None
        if entity:
            entity = identifier(entity).lower()
        parsed = ParsedName("list" if is_list else "read", entity, "get")
    if method == "GET" and parsed.operation == "read" and is_list:
        return ParsedName("list", parsed.entity, parsed.verb)
    no_row = parsed.entity is not None and find_id_param(tool, parsed.entity) is None
    if parsed.operation in ("read", "update", "delete") and no_row:  # a report, a computed answer
        return ParsedName("action", parsed.entity, parsed.verb)
    return parsed


def rpc_tools(spec: ServiceSpec, targets: dict[str, Target], entities: set[str]) -> set[str]:
    """Tools the resource structure could not read: no entity (or one it dropped for want of
    fields, ``/{format}/GamesByDate/{date}``), or an entity named by a verb."""
    out: set[str] = set()
    for tool in spec.tools:
        target = targets.get(tool.name)
        if target is None or not tool.path:
            continue
        orphan = target.operation == "action" and (target.entity is None or target.entity not in entities)
        name = operation_name(tool.path)
        verb = split_words(name)[:1] if name else []
        verb_named = (  # ``/deleteBankAccounts`` is no collection ``delete_bank_account``
            target.entity is not None
            and bool(verb)
            and verb[0] in VERBS
            and split_words(target.entity)[:1] == verb
        )
        if orphan or verb_named:
            out.add(tool.name)
    return out


def read_by_name(spec: ServiceSpec, names: set[str]) -> tuple[list[EntityDraft], dict[str, Target]]:
    """Entity drafts and targets of the named tools of a REST service, read by their names."""
    subset = spec.model_copy(update={"tools": [t for t in spec.tools if t.name in names]})
    return tool_entities(subset, parse=parse_rest_name)


def scope_by_path(
    spec: ServiceSpec, names: set[str], drafts: list[EntityDraft], targets: dict[str, Target]
) -> None:
    """A named operation under a parent's item (``/companies/{companyId}/customfields/{category}``,
    read by its name ``Get_All_Custom_Fields_by_category``) is scoped to that parent, as the REST
    reading scopes its collections: the row carries the parent's key, and the argument filters by it."""
    by_name = {d.name: d for d in drafts}
    for tool in spec.tools:
        target = targets.get(tool.name)
        if tool.name not in names or target is None or target.entity not in by_name or not tool.path:
            continue
        draft = by_name[target.entity or ""]
        for literal, raw in parse_path(tool.path).parents:
            param = path_param(tool, raw)
            parent = entity_name_for(literal)
            if (
                param is None
                or parent == draft.name
                or param.name in (target.pk_param, *target.parent_params)
            ):
                continue
            _scope_to(parent, param, draft, target, by_name, drafts)


def _scope_to(
    parent: str,
    param: FieldSpec,
    draft: EntityDraft,
    target: Target,
    by_name: dict[str, EntityDraft],
    drafts: list[EntityDraft],
) -> None:
    """Scope ``draft``'s rows to ``parent`` through ``param`` (an implicit parent made when unknown)."""
    if parent not in by_name:
        by_name[parent] = implicit_parent(parent, param)
        drafts.append(by_name[parent])
    draft.parents.setdefault(parent, param)
    target.parent_params[param.name] = parent


#: Last words of an argument's name that make it the key of what its other words name.
_KEY_TAILS = frozenset({"id", "key", "uuid", "guid", "code", "sid", "slug"})


def _key_parent(name: str, known: set[str]) -> str | None:
    """The entity an argument is the key of, by its name: ``branchID`` -> branch, ``teamid`` -> team
    (one word: only where ``team`` is an entity); None for ``kind`` or ``number``."""
    words = split_words(name)
    if len(words) >= 2 and words[-1] in _KEY_TAILS and words[-2] not in _KEY_TAILS:
        return identifier(entity_name("_".join(words[:-1]))).lower() or None
    low = name.lower()
    if len(words) == 1 and low.endswith("id") and len(low) > 4 and entity_name(low[:-2]) in known:
        return entity_name(low[:-2])
    return None


def scope_by_key_args(spec: ServiceSpec, drafts: list[EntityDraft], targets: dict[str, Target]) -> None:
    """A required argument of a list that is another entity's key and names no field of the rows
    (``GET /lettings/advertised?branchID=``, ``/{format}/PlayersByTeam/{teamid}``) scopes them to
    that entity, as a parent path does: the rows carry the parent's key and the argument filters by it."""
    by_name = {d.name: d for d in drafts}
    for tool in spec.tools:
        target = targets.get(tool.name)
        if target is None or target.operation not in ("list", "search") or target.entity not in by_name:
            continue
        draft = by_name[target.entity or ""]
        fields = {match_key(f) for f in draft.fields}
        for param in tool.params:
            if not param.required or param.location not in ("path", "query"):
                continue
            key = match_key(param.original_name or param.name)
            draft.filtered |= {f for f in draft.fields if match_key(f) == key}  # kept under the cap
            if param.name == target.pk_param or param.name in target.parent_params:
                continue
            if json_type(param.json_schema) not in ("string", "integer", None) or param.json_schema.get(
                "enum"
            ):
                continue
            own = param.original_name or param.name
            parent = _key_parent(own, set(by_name))
            if parent is None or parent == draft.name:
                continue
            # the row's field of that name references a known entity (``PlayerID`` of a game log); else
            # it is the row's own field (``Branch``, a ``target`` object), which the list filters on
            named = {match_key(own), match_key(parent + "_id"), match_key(parent)} & fields
            if named and (parent not in by_name or by_name[parent].implicit or match_key(parent) in named):
                continue
            _scope_to(parent, param, draft, target, by_name, drafts)
