"""Entities of an MCP or function-calling service, read from tool names and parameters.

``create_contact``, ``get_contact``, ``list_contacts``, ``contacts_search``, ``updateContact``
all name the entity ``contact``; the create tool's parameters are its fields, the read tool's
id argument its key. A name without a recognised verb (``contacts`` with an ``operation``
enum) is an action.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from compoworld.manifest import Operation
from compoworld.specs.model import FieldSpec, ServiceSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import entity_name, split_words
from compoworld.synth.drafts import EntityDraft
from compoworld.synth.naming import identifier, match_key
from compoworld.synth.paths import ACTION_VERBS
from compoworld.synth.resources import Target
from compoworld.synth.schemas import merged_properties, unwrap

__all__ = [
    "AWS_ACTION",
    "HTTP_WORDS",
    "READ_ACTION_VERBS",
    "VERBS",
    "ParsedName",
    "bare_key_param",
    "find_id_param",
    "parse_tool_name",
    "tool_entities",
]

#: Verb -> operation; the first verb found in a tool name decides.
VERBS: dict[str, Operation] = {
    **dict.fromkeys(["get", "fetch", "retrieve", "read", "show", "view", "describe"], "read"),
    **dict.fromkeys(["list", "all", "browse", "enumerate"], "list"),
    **dict.fromkeys(["search", "find", "query", "lookup", "filter"], "search"),
    **dict.fromkeys(["create", "add", "new", "insert", "register", "make", "post"], "create"),
    **dict.fromkeys(["update", "edit", "modify", "set", "patch", "rename", "change", "upsert"], "update"),
    **dict.fromkeys(["delete", "remove", "destroy", "erase", "drop", "purge", "trash"], "delete"),
}
#: Words after which a tool name stops naming its entity (``get_contact_by_email``).
_STOP = {"by", "for", "from", "with", "in", "on", "of", "to", "using", "via", "and", "or"}
_FILLER = {"a", "an", "the", "all", "one", "single", "many", "multiple", "details", "info", "detail", "data"}
#: Verbs of action tools that only read (everything else an action does is a write).
READ_ACTION_VERBS: frozenset[str] = frozenset(
    {
        "check",
        "calculate",
        "compute",
        "convert",
        "count",
        "estimate",
        "export",
        "download",
        "preview",
        "validate",
        "verify",
        "analyze",
        "analyse",
        "summarize",
        "translate",
        "resolve",
        "ping",
        "health",
        "status",
        "whoami",
        "me",
        "info",
        "stats",
        "report",
        "geocode",
    }
)


_KNOWN_ACTION_VERBS = (
    READ_ACTION_VERBS | ACTION_VERBS | {"send", "notify", "email", "message", "publish", "invite", "put"}
)


@dataclass(frozen=True)
class ParsedName:
    """Verb-derived operation and the entity a tool name mentions (singular snake case)."""

    operation: Operation
    entity: str | None
    verb: str | None


def parse_tool_name(name: str) -> ParsedName:
    """``contacts_search`` -> (search, contact); ``sendEmail`` -> (action, email)."""
    words = split_words(name)
    idx = next((i for i, w in enumerate(words) if w in VERBS), None)
    if idx is None:
        rest = [w for w in words[1:] if w not in _FILLER]
        return ParsedName("action", entity_name("_".join(rest)) or None, words[0] if words else None)
    verb = words[idx]
    operation = VERBS[verb]
    after = words[idx + 1 :]
    if verb == "get" and after[:1] == ["all"]:
        operation = "list"
    noun: list[str] = []
    for w in after:
        if w in _STOP:
            break
        if w not in _FILLER:
            noun.append(w)
    if not noun and idx > 0:
        noun = [w for w in words[:idx] if w not in _FILLER][-2:]
    if verb == "post" and noun and noun[-1] not in {"post", "posts"}:
        operation = "action"
    entity = entity_name("_".join(noun)) if noun else None
    return ParsedName(operation, identifier(entity).lower() if entity else None, verb)


#: Argument names that key a row on their own (``DeleteTrigger {Name}``, ``UpdateChannel {arn}``).
_BARE_KEYS = {"name", "arn"}


def bare_key_param(tool: ToolSpec, entity: str) -> FieldSpec | None:
    """The one bare ``name`` or ``arn`` argument the operation requires (or one named by the
    entity's last word: ``GetDevEndpoint {EndpointName}``), or None: the row's key where no
    argument names the entity (``GetModelManifest {name}``) and no other tool of the entity names
    its key otherwise (``tool_entities`` and ``drafts._pick_pk`` take it last)."""
    last = entity.rsplit("_", 1)[-1]
    names = _BARE_KEYS | {match_key(f"{last}_{key}") for key in ("name", "arn", "id")}
    bare = [
        p
        for p in tool.params
        if p.required
        and json_type(p.json_schema) not in ("array", "object")
        and match_key(p.original_name or p.name) in names
    ]
    return bare[0] if len(bare) == 1 else None


def find_id_param(tool: ToolSpec, entity: str) -> FieldSpec | None:
    """The argument naming a row: ``id``, ``<entity>_id``/``<entity>Id``, or one tagged ``id:<entity>``."""
    wanted = {match_key("id")} | {
        match_key(f"{entity}_{suffix}")
        for suffix in ("id", "key", "uuid", "arn", "name", "code", "number", "sid")
    }
    scalars = [p for p in tool.params if json_type(p.json_schema) not in ("array", "object")]
    for p in scalars:
        if match_key(p.name) in wanted or p.semantic == f"id:{entity}":
            return p
    required_ids = [p for p in scalars if p.required and split_words(p.name)[-1:] == ["id"]]
    return required_ids[0] if len(required_ids) == 1 else None


def _nested_body(tool: ToolSpec, entity: str) -> FieldSpec | None:
    """A single object argument that carries the entity (``{"contact": {...}}``)."""
    objects = [
        p for p in tool.params if json_type(p.json_schema) == "object" and "properties" in p.json_schema
    ]
    for p in objects:
        if match_key(p.name) in (
            match_key(entity),
            "data",
            "body",
            "payload",
            "fields",
            "properties",
            "attributes",
        ):
            return p
    return objects[0] if len(objects) == 1 and len(tool.params) <= 2 else None


#: HTTP methods as words of an operation's name (``post-checkAccountHolder``, ``GET_CreateQueue``).
HTTP_WORDS = frozenset({"get", "post", "put", "patch", "delete", "head"})
#: The action an AWS query-protocol path names (``/#Action=CreateQueue``).
AWS_ACTION = re.compile(r"#Action=([A-Za-z][A-Za-z0-9]*)")


def own_name(tool: ToolSpec) -> str:
    """The name a tool is read by: without the HTTP method its operationId starts with where the rest
    is the action its path names (AWS's query protocol: ``GET_CreateQueue`` at ``/#Action=CreateQueue``;
    read as ``get``, every GET variant was a read); ``GetCertificate`` stays as it is."""
    name = tool.original_name or tool.name
    action = AWS_ACTION.search(tool.path or "")
    words = split_words(name)
    if action is None or not tool.method or len(words) < 2 or words[0] not in HTTP_WORDS:
        return name
    rest = "_".join(words[1:])
    return rest if match_key(rest) == match_key(action.group(1)) else name


def _listing(tool: ToolSpec, parsed: ParsedName) -> ParsedName:
    """A read whose answer is a list of rows (``DescribePolicies`` -> ``{ScalingPolicies: [...]}``,
    ``GetWorkflowRuns {Name}``) is the entity's list, where no argument names one row."""
    if parsed.operation != "read" or parsed.entity is None or find_id_param(tool, parsed.entity):
        return parsed
    found = unwrap(tool.output_schema)
    if found is None or not found.is_list or not merged_properties(found.schema)[0]:
        return parsed
    return ParsedName("list", parsed.entity, parsed.verb)


def tool_entities(
    spec: ServiceSpec, parse: Callable[[ToolSpec], ParsedName] | None = None
) -> tuple[list[EntityDraft], dict[str, Target]]:
    """Entity drafts and per-tool targets of tools read by their names (MCP and function tools,
    RPC-style REST operations with ``parse`` = ``compoworld.synth.rpcpaths.parse_rest_name``)."""
    parsed = {t.name: _listing(t, parse(t) if parse else parse_tool_name(own_name(t))) for t in spec.tools}
    drafts: dict[str, EntityDraft] = {}
    for tool in spec.tools:
        p = parsed[tool.name]
        if p.entity is None or p.operation == "action":
            continue
        draft = drafts.setdefault(p.entity, EntityDraft(name=p.entity))
        id_param = find_id_param(tool, p.entity)
        reads_row = p.operation in ("read", "update", "delete")
        if reads_row and id_param is not None and all(q.name != id_param.name for q in draft.pk_params):
            draft.pk_params.append(id_param)
        bare = bare_key_param(tool, p.entity) if reads_row and id_param is None else None
        if bare is not None and all(q.name != bare.name for q in draft.bare_keys):
            draft.bare_keys.append(bare)
            id_param = bare  # a create or update does not set its key's column from it either
        if p.operation in ("create", "update"):
            nested = _nested_body(tool, p.entity)
            if nested is not None:
                draft.add_schema(nested.json_schema, from_body=p.operation == "create")
            else:
                fields = [q for q in tool.params if q is not id_param or p.operation == "create"]
                draft.add_params(fields, from_body=p.operation == "create")
        found = unwrap(tool.output_schema)
        wanted_list = p.operation in ("list", "search")
        if found is not None and merged_properties(found.schema)[0] and found.is_list == wanted_list:
            draft.add_schema(found.schema)
    usable = {n: d for n, d in drafts.items() if _has_fields(d)}
    targets: dict[str, Target] = {}
    for tool in spec.tools:
        p = parsed[tool.name]
        if p.entity in usable and p.operation != "action":
            target = Target(p.entity, p.operation)
            id_param = find_id_param(tool, p.entity)
            if id_param is None and not usable[p.entity].pk_params:
                id_param = bare_key_param(tool, p.entity)
            if p.operation in ("read", "update", "delete") and id_param is not None:
                target.pk_param = id_param.name
            targets[tool.name] = target
        else:
            entity = p.entity if p.entity in usable else None
            reason = None
            if p.operation != "action":
                reason = "no entity with known fields"
            elif p.verb not in VERBS and p.verb not in _KNOWN_ACTION_VERBS:
                reason = "the tool name names no create/read/update/delete verb (custom and multi-operation tools are simulated)"
            target = Target(entity, "action", reason=reason)
            id_param = find_id_param(tool, entity) if entity is not None else None
            target.pk_param = id_param.name if id_param is not None else None
            targets[tool.name] = target
    return list(usable.values()), targets


def _has_fields(draft: EntityDraft) -> bool:
    """An entity needs at least one field besides its key to be worth a table."""
    keys = {match_key(q.name) for q in draft.pk_params} | {"id", match_key(draft.name + "_id")}
    return any(match_key(f) not in keys for f in draft.fields)
