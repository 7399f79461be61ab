"""Entities of an OpenAPI service, read from its REST resource structure.

A collection path (``/contacts``: POST creates, GET lists) and its item path
(``/contacts/{id}``: GET/PUT/PATCH/DELETE) make an entity; its fields come from the read and
list responses (unwrapped from ``data``/``items`` envelopes) and the create/update bodies. Two
paths whose last literal names the same entity are merged when their schemas agree
(``/refunds`` and ``/payments/{id}/refunds``), else the weaker one stays an action.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from compoworld.manifest import Operation
from compoworld.specs.model import FieldSpec, ServiceSpec, ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import entity_for_schema, entity_name, singular, split_words
from compoworld.synth.drafts import EntityDraft, FieldDraft
from compoworld.synth.naming import identifier, match_key, snake
from compoworld.synth.paths import ACTION_VERBS, NON_RESOURCES, PathShape, is_plural, parse_path
from compoworld.synth.schemas import WRAPPERS, SchemaIndex, Unwrapped, is_meta, merged_properties, unwrap

__all__ = ["Target", "entity_name_for", "implicit_parent", "path_param", "rest_entities"]

_SEARCH_WORDS = {"search", "find", "query", "lookup"}
#: Path words too generic to name an entity when the schema offers a better name.
_GENERIC = {
    "list",
    "item",
    "entry",
    "record",
    "object",
    "entity",
    "resource",
    "element",
    "node",
    "info",
    "detail",
}
#: Last words of a path literal that name the endpoint rather than the entity.
_ENDPOINT_WORDS = frozenset({"api", "apis", "controller", "endpoint", "endpoints"})


@dataclass
class Target:
    """What a tool acts on, as far as its source structure tells."""

    entity: str | None
    operation: Operation
    pk_param: str | None = None
    parent_params: dict[str, str] = field(default_factory=dict)
    reason: str | None = None


@dataclass
class _Op:
    tool: ToolSpec
    shape: PathShape
    resp: Unwrapped | None
    resp_name: str | None


@dataclass
class _Key:
    key: str
    literal: str
    ops: list[_Op] = field(default_factory=list)
    first: int = 0

    def methods(self, kind: str) -> set[str]:
        return {(o.tool.method or "").upper() for o in self.ops if o.shape.kind == kind}


def entity_name_for(literal: str) -> str:
    """Singular snake entity name of a collection literal (a valid identifier); a trailing ``Api``
    or ``Controller`` names the endpoint, not the entity (``/v1/ProductsApi`` -> ``product``)."""
    words = split_words(literal)
    if len(words) > 1 and words[-1] in _ENDPOINT_WORDS:
        literal = "_".join(words[:-1])
    name = entity_name(literal) or "item"
    return identifier(name, fallback="item").lower().rstrip("_") or "item"


def path_param(tool: ToolSpec, raw: str) -> FieldSpec | None:
    """The tool parameter a ``{raw}`` path variable stands for."""
    for p in tool.params:
        if p.location == "path" and (p.original_name or p.name) == raw:
            return p
    for p in tool.params:
        if p.name == raw or match_key(p.name) == match_key(raw):
            return p
    return None


def _resp(tool: ToolSpec, index: SchemaIndex, spec: ServiceSpec) -> tuple[Unwrapped | None, str | None]:
    found = unwrap(tool.output_schema)
    if found is None and tool.response_entity in spec.schemas:
        found = unwrap(spec.schemas[tool.response_entity or ""])
    name = index.name_of(found.schema) if found is not None else None
    return found, name or tool.response_entity


def _is_entity(k: _Key) -> bool:
    words = split_words(k.literal)
    if not words or k.literal.lower() in NON_RESOURCES:
        return False
    lists = [o for o in k.ops if o.shape.kind == "collection" and (o.tool.method or "").upper() == "GET"]
    name = entity_name_for(k.literal)
    if k.key.rsplit("/", 1)[-1] != k.literal:  # a qualified collection (``/messages/outbound``) is one
        return any(o.resp is not None and o.resp.is_list for o in lists)  # only where it lists rows
    plural = is_plural(k.literal)
    if not plural and not k.methods("item") and any(_named_rows(o, k.literal) for o in lists):
        return True  # ``GET /sms/incoming`` -> ``{"incomingMessages": [...], "resultsTotalAvailable": 9}``
    if any(w in ACTION_VERBS for w in words) and not plural:
        return False
    if k.methods("item"):
        return plural or "POST" in k.methods("collection") or "GET" in k.methods("item")
    if not plural:
        return False
    if "POST" in k.methods("collection"):
        return True
    return any(o.resp is None or o.resp.is_list or _own_rows(o, k, name) for o in lists)


def _own_rows(op: _Op, k: _Key, name: str) -> bool:
    """Whether a top-level GET answers the collection's own rows beside paging and status scalars:
    an array named for the collection or by a wrapper word (``/subaccounts`` -> ``{"subAccounts":
    [...], "statusCode": 200}``, ``{"data": [...], "object": "list"}``). An array under another
    name is what a report breaks its figures down by (``/deliverystats`` -> ``{"Bounces": [...],
    "InactiveMails": 3}``), and one under an item is a view of that item (``/payments/{id}/events``)."""
    key = _rows_key(op, name) if "{" not in k.key else None
    if key is None:
        return False
    return match_key(key) == match_key(k.literal) or entity_name(key) == name or key.lower() in WRAPPERS


def _named_rows(op: _Op, literal: str) -> str | None:
    """The entity a keyless GET's answer names for its rows where the path's literal only qualifies
    them (``/sms/scheduled`` answers ``scheduledMessages: [...]``, rows of ``scheduled_message``): a
    plural array whose name holds the literal's words, beside paging and status scalars only."""
    key = _rows_key(op, "") if op.resp is not None and not op.resp.is_list else None
    if key is None or not is_plural(key):
        return None
    words, own = split_words(key), split_words(literal)
    if not own or len(words) <= len(own) or not set(own) <= set(words):
        return None
    return entity_name_for(key)


def _score(k: _Key) -> tuple[int, int, int]:
    """Strongest first: most CRUD methods, then the plainer path (``/templates`` keeps the name
    ``template`` and ``/designer/templates`` qualifies, whichever the document lists first)."""
    crud = len(k.methods("item")) + len(k.methods("collection") & {"GET", "POST"})
    return (-crud, k.key.count("/"), k.first)


def _schema_vote(k: _Key) -> str | None:
    """The schema a key's reads return: item GETs first (detail schema), else list GETs."""
    for kind in ("item", "collection"):
        votes = Counter(
            o.resp_name
            for o in k.ops
            if o.resp_name and o.shape.kind == kind and (o.tool.method or "").upper() == "GET"
        )
        if votes:
            return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return None


def _maybe_rename(name: str, schema_name: str | None) -> str:
    """``list`` + schema ``TaskList`` -> ``task_list``: a generic path word yields to its schema."""
    if not schema_name or name not in _GENERIC:
        return name
    candidate = entity_name(schema_name)
    if candidate.endswith("_" + name) and len(candidate.split("_")) <= 4:
        return identifier(candidate).lower()
    return name


def _group(spec: ServiceSpec, index: SchemaIndex) -> tuple[dict[str, _Key], dict[str, _Op]]:
    keys: dict[str, _Key] = {}
    ops: dict[str, _Op] = {}
    for i, tool in enumerate(spec.tools):
        if not tool.path:
            continue
        shape = parse_path(tool.path)
        resp, resp_name = _resp(tool, index, spec)
        op = _Op(tool, shape, resp, resp_name)
        ops[tool.name] = op
        if shape.key is None or shape.resource is None:
            continue
        k = keys.setdefault(shape.key, _Key(shape.key, shape.resource, first=i))
        k.ops.append(op)
    return keys, ops


@dataclass
class _Accepted:
    """Collection key -> entity, entity -> its schema name, schema name -> entity."""

    owner: dict[str, str] = field(default_factory=dict)
    schema_of: dict[str, str | None] = field(default_factory=dict)
    schema_owner: dict[str, str] = field(default_factory=dict)


def _generic_schemas(keys: dict[str, _Key]) -> set[str]:
    """Schemas that the reads of three or more differently named collections return (a catch-all
    response type such as BBC iBL's ``ibl``): they say nothing about which entity a key is."""
    literals: dict[str, set[str]] = {}
    for k in keys.values():
        for o in k.ops:
            if o.resp_name and (o.tool.method or "").upper() == "GET":
                literals.setdefault(o.resp_name, set()).add(entity_name_for(k.literal))
    return {name for name, found in literals.items() if len(found) >= 3}


def _qualified(k: _Key, name: str, schema_name: str | None) -> str | None:
    """Another name for a collection whose plain name is taken by a different entity: its schema's
    entity (``DesignerTemplate``), else the literal before it (``/designer/templates``)."""
    if schema_name:
        candidate = identifier(entity_for_schema(schema_name) or "", fallback="").lower()
        if candidate and candidate != name:
            return candidate
    segments = [s for s in k.key.strip("/").split("/") if s != "{}"]
    if len(segments) >= 2 and segments[-2].lower() not in NON_RESOURCES:
        before = entity_name_for(segments[-2])
        if before and before != name:
            return f"{before}_{name}"
    return None


def _accept(keys: dict[str, _Key]) -> _Accepted:
    """Decide which collection keys are entities, strongest keys first. Keys of the same name merge
    when their schemas agree (``/refunds``, ``/payments/{id}/refunds``; both unknown agrees too);
    one whose schema differs takes a qualified name (``/designer/templates``: ``designer_template``)."""
    out = _Accepted()
    generic = _generic_schemas(keys)
    for k in sorted(keys.values(), key=_score):
        if not _is_entity(k):
            continue
        schema_name = _schema_vote(k)
        if schema_name in generic:
            schema_name = None
        name = _maybe_rename(entity_name_for(k.literal), schema_name)
        if not is_plural(k.literal) and not k.methods("item"):
            lists = [
                o for o in k.ops if o.shape.kind == "collection" and (o.tool.method or "").upper() == "GET"
            ]
            name = next((n for o in lists if (n := _named_rows(o, k.literal))), name)
        if schema_name and out.schema_owner.get(schema_name, name) != name:
            continue
        if name in out.schema_of and out.schema_of[name] != schema_name:
            other = _qualified(k, name, schema_name)
            if other is None or other in out.schema_of:
                continue
            name = other
        out.schema_of[name] = schema_name
        if schema_name:
            out.schema_owner[schema_name] = name
        out.owner[k.key] = name
    return out


def _operation(op: _Op) -> Operation:
    method = (op.tool.method or "").upper()
    kind = op.shape.kind
    if kind == "collection":
        return {"POST": "create", "GET": "list"}.get(method, "action")  # type: ignore[return-value]
    if kind == "item":
        if method == "POST" and not _body_params(op.tool) and _named_delete(op.tool):
            return "delete"  # ``POST /v1/ProductsApi/{serial}`` named ``DeleteProduct2``, no body
        return {"GET": "read", "PUT": "update", "PATCH": "update", "POST": "update", "DELETE": "delete"}.get(
            method, "action"
        )  # type: ignore[return-value]
    on_collection = kind == "action" and op.shape.action_on == "collection" and method in ("GET", "POST")
    if on_collection and set(split_words(op.shape.action or "")) & _SEARCH_WORDS:
        return "search"
    return "action"


def _named_delete(tool: ToolSpec) -> bool:
    """Whether an operation's name says it deletes (``ProductsApi_DeleteProduct2``, ``removeTag``)."""
    return bool({"delete", "remove"} & set(split_words(tool.original_name or tool.name)))


def _returns(op: _Op, name: str, operation: Operation, accepted: _Accepted, spec: ServiceSpec) -> bool:
    """Whether a read returns one row of the entity and a list/search a list of them. A response
    schema another entity owns still returns this one's rows where it is this entity's own schema
    under another name (the same schema, nested fields included)."""
    owner = accepted.schema_owner.get(op.resp_name or "", name)
    if op.resp_name and owner != name:
        own = spec.schemas.get(accepted.schema_of.get(name) or "")
        other = spec.schemas.get(op.resp_name)
        if not own or not other or json.dumps(own, sort_keys=True) != json.dumps(other, sort_keys=True):
            return False
    if op.resp is None:
        return True
    return op.resp.is_list == (operation != "read")


def _listed(op: _Op, name: str) -> Unwrapped | None:
    """The rows of a list answer whose array of objects sits beside paging and status fields, which
    no envelope name announces (``{"card": [...], "code": 1}``, ``{"posts": [...], "group_ids": ["7"],
    "num_posts": 40}``, ``{"orders": [...], "warnings": [...], "total": 3}``): the one array of
    objects, or of several the one named for the collection (the others ride along); beside it
    only scalars, arrays of scalars, and paging or link objects (``links``, ``meta``)."""
    key = _rows_key(op, name)
    if key is None or op.resp is None:
        return None
    return Unwrapped(dict(merged_properties(op.resp.schema)[0][key]["items"]), True)


#: Arrays of link objects beside an answer's rows (``{"aggregations": [...], "links": [...]}``), never rows.
_LINKS = frozenset({"links", "link"})


def _rows_key(op: _Op, name: str) -> str | None:
    """The property of a non-list answer that holds its rows (see :func:`_listed`)."""
    if op.resp is None or op.resp.is_list:
        return None
    props = merged_properties(op.resp.schema)[0]
    arrays = [
        k
        for k, v in props.items()
        if json_type(v) == "array" and _object_schema(v.get("items")) and k.lower().lstrip("_") not in _LINKS
    ]
    rows = arrays
    if len(arrays) > 1:  # ``orders`` beside ``warnings``: the array named for the collection
        literal = match_key(op.shape.resource or "")
        rows = [k for k in arrays if entity_name(k) == name or match_key(k) == literal]
    if len(rows) != 1:
        return None
    for key, value in props.items():
        if key in arrays or json_type(value) != "object":
            continue
        if not is_meta(key):  # an object beside the rows may be what the answer is about
            return None
    return rows[0]


def _object_schema(schema: object) -> bool:
    return isinstance(schema, dict) and bool(merged_properties(schema)[0])


def _body_params(tool: ToolSpec) -> list[FieldSpec]:
    return [p for p in tool.params if p.location == "body"]


def _collect(draft: EntityDraft, op: _Op, operation: Operation, schema_name: str | None) -> None:
    full_row = operation in ("create", "update") and bool(op.resp_name) and op.resp_name == schema_name
    if op.resp is not None and (operation in ("read", "list", "search") or full_row):
        draft.add_schema(op.resp.schema)
    if operation in ("create", "update") and op.tool.body_is_object:
        body = _body_params(op.tool)
        if (
            len(body) == 1
            and match_key(body[0].name) == match_key(draft.name)
            and "properties" in body[0].json_schema
        ):
            draft.add_schema(body[0].json_schema, from_body=operation == "create")
        else:
            draft.add_params(body, from_body=operation == "create")
            if operation == "update":
                for p in body:
                    found = draft.field(p.original_name or p.name)
                    if found is not None:
                        found.from_body = True


def rest_entities(spec: ServiceSpec) -> tuple[list[EntityDraft], dict[str, Target]]:
    """Entity drafts and per-tool targets of an OpenAPI/Swagger service."""
    index = SchemaIndex(spec.schemas)
    keys, ops = _group(spec, index)
    accepted = _accept(keys)
    owner, schema_of = accepted.owner, accepted.schema_of
    literal_entity = {snake(keys[key].literal): name for key, name in owner.items()}
    drafts: dict[str, EntityDraft] = {}
    targets: dict[str, Target] = {}
    for tool in spec.tools:
        op = ops.get(tool.name)
        name = owner.get(op.shape.key or "") if op is not None else None
        if op is None or name is None:
            targets[tool.name] = _orphan_action(tool, op, literal_entity)
            continue
        operation = _operation(op)
        schema_name = schema_of.get(name)
        if operation in ("read", "list", "search") and not _returns(op, name, operation, accepted, spec):
            listed = _listed(op, name) if operation != "read" else None
            if listed is None:
                operation = "action"
            else:  # ``{"card": [...], "code": 1, "message": "..."}``: the rows beside a status
                op = _Op(op.tool, op.shape, listed, op.resp_name)
        draft = drafts.setdefault(name, EntityDraft(name=name, schema_name=schema_name))
        target = Target(name, operation)
        if op.shape.item_param is not None:
            pk = path_param(tool, op.shape.item_param)
            if pk is not None and (op.shape.kind == "item" or op.shape.action_on == "item"):
                target.pk_param = pk.name
                if all(p.name != pk.name for p in draft.pk_params):
                    draft.pk_params.append(pk)
        for literal, raw in op.shape.parents:
            param = path_param(tool, raw)
            if param is None:
                continue
            parent = literal_entity.get(snake(literal)) or entity_name_for(literal)
            if parent == name:
                continue
            if parent not in drafts and parent not in owner.values():
                drafts[parent] = implicit_parent(parent, param)
            draft.parents.setdefault(parent, param)
            target.parent_params[param.name] = parent
        if operation != "action":
            _collect(draft, op, operation, schema_name)
        targets[tool.name] = target
    _singletons(spec, ops, drafts, targets, set(drafts) | set(owner.values()))
    return _prune(drafts, targets), targets


#: Words of a read's parameters that make its answer computed for them (a report for a period).
_COMPUTED = frozenset({"filter", "from", "to", "start", "end", "date", "since", "until", "period", "range"})


def _computed(tool: ToolSpec) -> bool:
    """Whether a read answers for its inputs (``balance-sheet?filter[start_date]=...``), not a record."""
    return any(set(split_words(p.original_name or p.name)) & (_COMPUTED | _SEARCH_WORDS) for p in tool.params)


#: Words of a read's name or path that make each answer a new draw, not a record (``/gifs/random``).
_DRAWN = frozenset(
    {"random", "translate", "suggest", "suggestions", "recommend", "recommendations", "predict", "guess"}
)


def _drawn(tool: ToolSpec) -> bool:
    """Whether a read's answer is a new draw for each call (``/gifs/random``, ``/gifs/translate``)."""
    return bool((set(split_words(tool.name)) | set(split_words(tool.path or ""))) & _DRAWN)


def _singletons(
    spec: ServiceSpec,
    ops: dict[str, _Op],
    drafts: dict[str, EntityDraft],
    targets: dict[str, Target],
    taken: set[str],
) -> None:
    """A record the API addresses without a key (``GET``/``PUT /server``, ``GET /company-info``,
    ``GET /device``): one row of an entity of its own, where the path can also write it, the
    record carries its own id, or an argument-free read answers it (a read-only record, served
    from its seeded row as a read-only collection is from its rows). A qualified path names the
    record by its last literal (``/credits/balance`` is one balance, not a list of credits)."""
    by_path: dict[str, list[_Op]] = {}
    for tool in spec.tools:
        op, target = ops.get(tool.name), targets.get(tool.name)
        if op is None or target is None or target.entity is not None or "{" in (tool.path or "{"):
            continue
        last = (tool.path or "").split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        if op.shape.kind == "collection" and op.shape.resource and not is_plural(last):
            by_path.setdefault(tool.path or "", []).append(op)
    for group in by_path.values():
        methods = [(o.tool.method or "").upper() for o in group]
        reads = [
            o for o, m in zip(group, methods, strict=True) if m == "GET" and o.resp and not o.resp.is_list
        ]
        writes = [o for o, m in zip(group, methods, strict=True) if m in ("PUT", "PATCH")]
        if len(reads) != 1 or reads[0].resp is None:
            continue
        props = merged_properties(reads[0].resp.schema)[0]
        keyed = any(split_words(k)[-1:] == ["id"] for k in props)
        name = _record_name(group[0])
        held = writes or keyed or not reads[0].tool.params  # an argument-free read answers a record
        computed = _computed(reads[0].tool) or _drawn(reads[0].tool)
        if not props or not held or name in taken or (not writes and computed):
            continue
        draft = EntityDraft(name=name, schema_name=reads[0].resp_name, singleton=True)
        draft.add_schema(reads[0].resp.schema)
        for write in writes:
            draft.add_params(_body_params(write.tool), from_body=False)
        drafts[name] = draft
        taken.add(name)
        for o in group:
            targets[o.tool.name] = Target(name, "action")


def _record_name(op: _Op) -> str:
    """A keyless record's entity name: its collection's, or for a qualified path the literal after
    the plural it qualifies (``/credits/balance`` -> ``credit_balance``, not ``balance_credit``)."""
    resource = op.shape.resource or ""
    segments = [s for s in (op.tool.path or "").split("?")[0].strip("/").split("/") if s]
    if len(segments) >= 2 and snake(segments[-1]) != snake(resource):
        before = "_".join(singular(w) for w in split_words(segments[-2]))
        return entity_name_for(f"{before}_{snake(segments[-1])}")
    return entity_name_for(resource)


def _prune(drafts: dict[str, EntityDraft], targets: dict[str, Target]) -> list[EntityDraft]:
    """Drop entities nothing is known about (a key and no field); their tools become actions."""
    parents = {p for d in drafts.values() for p in d.parents}
    kept: list[EntityDraft] = []
    for name, draft in drafts.items():
        keys = {match_key(p.name) for p in draft.pk_params} | {"id", match_key(name + "_id")}
        if draft.implicit or any(match_key(f) not in keys for f in draft.fields):
            kept.append(draft)
        elif name in parents:
            draft.add_field(FieldDraft(source="name", schema={"type": "string"}))
            kept.append(draft)
        else:
            for target in targets.values():
                if target.entity == name and target.operation != "action":
                    target.operation = "action"
                    target.reason = f"nothing is known about the fields of {name}"
    return kept


def _orphan_action(tool: ToolSpec, op: _Op | None, literal_entity: dict[str, str]) -> Target:
    """An action under an entity's item (``/pets/{petId}/vaccinate``) keeps that entity as context."""
    target = Target(None, "action", reason="the path names no entity collection")
    if op is not None and op.shape.parents:
        literal, raw = op.shape.parents[-1]
        param = path_param(tool, raw)
        if snake(literal) in literal_entity and param is not None:
            target.entity = literal_entity[snake(literal)]
            target.pk_param = param.name
            target.reason = None
    return target


def implicit_parent(name: str, param: FieldSpec) -> EntityDraft:
    """A parent that only appears as a path parameter (``/accounts/{accountId}/...``): key and name."""
    draft = EntityDraft(name=name, implicit=True, pk_params=[param])
    schema = {"type": "integer"} if param.json_schema.get("type") == "integer" else {"type": "string"}
    draft.add_field(FieldDraft(source="id", schema=schema, read_only=True, description=param.description))
    draft.add_field(FieldDraft(source="name", schema={"type": "string"}))
    return draft
