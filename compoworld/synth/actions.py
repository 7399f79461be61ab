"""Bind non-CRUD operations to typed state changes: the ``action`` backend.

An operation the REST structure does not make a create/read/update/delete
(``POST /documents/{id}/cancel``, ``POST /message/send``, ``pauseCampaign``) is an action. Where
its verb (``compoworld.synth.transitions``) and the entity's columns make the effect evident,
it becomes an ``ActionDef``: cancel moves the addressed document's status or flag, send inserts
the message the read side lists, clone inserts a copy, clear deletes the children, update_X writes
the columns its arguments name. Anything else stays with the world model, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import ActionDef, ColumnDef, EntityDef, ListBinding
from compoworld.specs.model import ToolSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import entity_name, split_words
from compoworld.synth.action_args import arg_columns, column_named, destination_arg, parent_columns, text_arg
from compoworld.synth.collection_actions import bind_clear_all, bind_count
from compoworld.synth.entities import EntityInference, Target
from compoworld.synth.listparams import json_choices
from compoworld.synth.naming import match_key
from compoworld.synth.paths import is_plural, parse_path, sub_record_of
from compoworld.synth.readside import (
    READ_REASON,
    bind_field_match,
    bind_lookup,
    read_params,
    row_param_target,
    unhonoured,
)
from compoworld.synth.resources import entity_name_for, path_param
from compoworld.synth.schemas import merged_properties, unwrap
from compoworld.synth.transitions import (
    OUTGOING,
    TERMINAL,
    Verb,
    action_verb,
    flag_column,
    state_value,
    status_columns,
    vocabulary,
)
from compoworld.synth.unbound import Unbound

__all__ = ["ActionBinding", "bind_action", "bind_patch", "patch_columns", "patch_param", "response_is_row"]

_READ_METHODS = {"GET", "HEAD", "OPTIONS"}
#: Words of operations over many rows at once: their payload is a list of requests, not one row.
_BULK = {"bulk", "batch", "batches", "many", "multiple", "all"}
_ID_WORDS = {"id", "ids", "key", "uuid", "sid", "guid"}
_NUMBERS = {"integer", "number"}


@dataclass
class ActionBinding:
    """What classification needs to serve an action tool from typed state."""

    entity: str
    action: ActionDef
    pk_arg: str | None = None
    arg_columns: dict[str, str] = field(default_factory=dict)
    body_arg: str | None = None
    refused: dict[str, str] = field(default_factory=dict)  # argument -> why it cannot be honoured
    listing: ListBinding | None = None  # a count bound as a list: its filters, refusals, defaults
    search_arg: str | None = None  # a count bound as a list: its free-text query


def _verb_words(tool: ToolSpec) -> tuple[list[str], list[str], bool]:
    """The words that carry an action's verb (its path literal, its operation name), and whether
    the path addresses one row (``/x/{id}/verb``)."""
    words: list[str] = []
    on_item = False
    if tool.path:
        shape = parse_path(tool.path)
        literals = [s for s in tool.path.split("?")[0].strip("/").split("/") if s and "{" not in s]
        if shape.action:
            words += split_words(shape.action)
            on_item = shape.action_on == "item"
        elif literals:
            words += split_words(literals[-1])
        segments = [s for s in tool.path.strip("/").split("/") if s]
        on_item = on_item or (len(segments) >= 2 and "{" in segments[-2] and "{" not in segments[-1])
    name = split_words(tool.original_name or tool.name)
    # ``postMessagesFailed`` names the method; AWS's ``PutScalingPolicy`` (a POST) names its verb
    if tool.method and name[:1] and name[0] == tool.method.lower():
        name = name[1:]
    return words, name, on_item


def _part_literal(tool: ToolSpec) -> bool:
    """Whether the path's last segment names one part of the row before it (``/{name}/concurrency``,
    ``/{id}/logging-configuration``), not a collection under it (``/{id}/tracks``)."""
    segments = [s for s in (tool.path or "").split("?")[0].split("#")[0].strip("/").split("/") if s]
    return bool(segments) and "{" not in segments[-1] and not is_plural(segments[-1])


def _entity_from_path(tool: ToolSpec, inference: EntityInference) -> EntityDef | None:
    """The entity a path literal before the verb names (``/message/send`` -> message)."""
    if not tool.path:
        return None
    literals = [s for s in tool.path.split("?")[0].strip("/").split("/") if s and "{" not in s]
    for literal in reversed(literals[:-1] or literals):
        plain = entity_name(literal)  # ``/v1/ProductsApi/Save``: the endpoint names the product
        for name in (plain, entity_name_for(literal)) if plain else ():
            found = inference.entity(name)
            if found is not None:
                return found
    return None


def _qualified(noun: str, verb: Verb, inference: EntityInference) -> EntityDef | None:
    """The one collection of ``noun`` qualified by its path (``outbound_message``), or where a
    sending verb has both directions to choose from, the outgoing one."""
    found = [e for e in inference.entities if e.name.endswith("_" + noun)]
    if len(found) > 1 and "sent" in verb.states:
        found = [e for e in found if e.name.split("_")[0] in OUTGOING]
    return found[0] if len(found) == 1 else None


def _entity_from_response(tool: ToolSpec, inference: EntityInference, verb: Verb) -> EntityDef | None:
    """The entity whose key the response carries (``{"MessageID": ...}`` -> message, or the
    ``outbound_message`` a send adds where the service keeps messages by direction)."""
    found = unwrap(tool.output_schema)
    props = merged_properties(found.schema)[0] if found is not None else {}
    for key in sorted(props):
        words = split_words(key)
        if len(words) >= 2 and words[-1] in _ID_WORDS:
            noun = entity_name("_".join(words[:-1]))
            entity = inference.entity(noun) or _qualified(noun, verb, inference)
            if entity is not None:
                return entity
    return None


def response_is_row(tool: ToolSpec, entity: EntityDef) -> bool:
    """Whether the spec answers with the entity itself (or declares nothing): then the row is the answer."""
    found = unwrap(tool.output_schema)
    if found is None:
        return True
    props = merged_properties(found.schema)[0]
    if not props or found.is_list:
        return not props
    keys = {match_key(c.source_name or c.name) for c in entity.columns}
    hits = sum(1 for k in props if match_key(k) in keys)
    return hits * 2 >= len(props) and hits >= min(2, len(props))


def _nested_status(entity: EntityDef) -> list[tuple[str, ColumnDef, dict[str, Any]]]:
    """Status fields inside a JSON column named for the lifecycle (``state: {status: ...}``):
    (path, column, field schema). A ``lastMessage.status`` is another row's status, not this one's."""
    out = []
    lifecycle = {"state", "status", "lifecycle", "stage", "phase"}
    for column in entity.columns:
        if column.type != "json" or json_type(column.json_schema) != "object":
            continue
        if not set(split_words(column.source_name or column.name)) & lifecycle:
            continue
        props = merged_properties(column.json_schema)[0]
        for key in sorted(props):
            if split_words(key)[-1:] in (["status"], ["state"]) and json_type(props[key]) in ("string", None):
                out.append((f"{column.name}.{key}", column, props[key]))
    return out


def _status_path(entity: EntityDef, states: tuple[str, ...]) -> tuple[str, Any, list[str]] | None:
    """(path, value, vocabulary) of the status the verb moves the row to, if the entity has one."""
    candidates = [(c.name, c, c.json_schema) for c in status_columns(entity.columns) if c.type == "string"]
    candidates += _nested_status(entity)
    for path, column, schema in candidates:  # a closed vocabulary that names the state wins
        vocab = vocabulary(column, schema)
        value = state_value(states, vocab, open_vocabulary=False)
        if value is not None:
            return path, value, vocab
    for path, column, schema in candidates:  # else a free status string takes the verb's word
        if not schema.get("enum") and not column.enum:
            vocab = vocabulary(column, schema)
            value = state_value(states, vocab, open_vocabulary=True)
            if value is not None:
                return path, value, vocab
    return None


def _stamps(entity: EntityDef, states: tuple[str, ...]) -> list[str]:
    """Timestamp columns named for the state reached (``cancelled_at``, ``sentAt``, ``date_completed``)."""
    wanted = {match_key(s) for s in states[:3]}
    out = []
    for c in entity.columns:
        words = split_words(c.source_name or c.name)
        timed = c.format in ("date", "date-time") or (words and words[-1] in {"at", "on", "date", "time"})
        if c.type == "string" and timed and wanted & {match_key(w) for w in words}:
            out.append(c.name)
    return out


def _transition(verb: Verb, name: str, entity: EntityDef) -> ActionDef:
    sets: dict[str, Any] = {}
    requires: dict[str, list[Any]] = {}
    refuses: dict[str, list[Any]] = {}
    status = _status_path(entity, verb.states) if verb.states else None
    if status is not None:
        path, value, vocab = status
        sets[path] = value
        wanted = {match_key(r) for r in verb.requires}
        needed = [v for v in vocab if match_key(v) in wanted]
        if needed:
            requires[path] = needed
        terminal = [v for v in vocab if match_key(v) in TERMINAL and v not in needed and v != value]
        refuses[path] = [value, *terminal]
    flagged = flag_column(entity.columns, verb.flag)
    if flagged is not None:
        sets.setdefault(flagged.name, True)
    unflagged = flag_column(entity.columns, verb.unflag)
    if unflagged is not None and unflagged.name not in sets:
        sets[unflagged.name] = False
        if verb.requires:
            requires.setdefault(unflagged.name, [True])
    if not sets:
        raise Unbound(f"'{name}' moves no column of {entity.name} (no status value or flag for it)")
    primary = next(iter(sets))
    refuses.setdefault(primary, [sets[primary]])
    for c in entity.columns:  # a row cancelled by flag leaves that state only by a reversal
        if c.type == "boolean" and c.name not in sets and match_key(c.source_name or c.name) in TERMINAL:
            refuses.setdefault(c.name, [True])
    return ActionDef(
        kind="transition",
        verb=name,
        target=entity.name,
        sets=sets,
        stamps=_stamps(entity, verb.states),
        requires=requires,
        refuses=refuses,
    )


def _key_arg(tool: ToolSpec, entity: EntityDef) -> str | None:
    """The argument that gives a row's key where the caller chooses it (``earningCode``)."""
    pk = entity.column(entity.pk)
    if pk is None:
        return None
    for p in tool.params:
        if column_named(entity, p.original_name or p.name) is pk:
            return p.name
    return None


def _insert(verb: Verb, name: str, tool: ToolSpec, entity: EntityDef, target: Target) -> ActionBinding:
    parents = parent_columns(target, entity)
    columns, body_arg = arg_columns(tool, entity, set(parents))
    text = text_arg(tool, entity, set(parents)) if not columns and body_arg is None else None
    if text is not None:  # a quick add: the free text becomes the new row's label
        columns = {text[0]: text[1]}
    if not columns and body_arg is None:
        raise Unbound(f"'{name}' sets no column of {entity.name}")
    sets: dict[str, Any] = {}
    status = _status_path(entity, verb.states) if verb.states else None
    if status is not None and status[0] not in columns.values():
        sets[status[0]] = status[1]
    keyed = _key_arg(tool, entity) if verb.upsert else None
    if keyed is not None:  # add or update: the caller's key says which
        columns[keyed] = entity.pk
    action = ActionDef(
        kind="insert",
        verb=name,
        target=entity.name,
        sets=sets,
        stamps=_stamps(entity, verb.states),
        returns="row" if response_is_row(tool, entity) else "body",
        upsert=keyed is not None,
    )
    return ActionBinding(entity.name, action, None, {**parents, **columns}, body_arg)


def _children(entity: EntityDef, inference: EntityInference) -> list[tuple[EntityDef, ColumnDef]]:
    return [
        (e, c) for e in inference.entities if e.name != entity.name for c in e.columns if c.ref == entity.name
    ]


def _clear(name: str, tool: ToolSpec, entity: EntityDef, inference: EntityInference) -> ActionDef:
    """Delete the addressed row's children (only those in the states the description names)."""
    children = _children(entity, inference)
    text = set(split_words(tool.description)) | set(split_words(tool.original_name or tool.name))
    text |= {entity_name(w) for w in text}
    named = [ch for ch in children if {ch[0].name, ch[0].table} & text]
    pick = named[0] if len(named) == 1 else children[0] if len(children) == 1 else None
    if pick is None:
        raise Unbound(f"'{name}' names no single child entity of {entity.name} to clear")
    child, ref = pick
    where: dict[str, list[Any]] = {}
    for column in status_columns(child.columns):
        states = [v for v in vocabulary(column) if match_key(v) in {match_key(w) for w in text}]
        if states and column.type == "string":
            where[column.name] = states
            break
    for column in child.columns:
        if not where and column.type == "boolean" and match_key(column.source_name or column.name) in text:
            where[column.name] = [True]
    return ActionDef(kind="clear", verb=name, target=child.name, parent_column=ref.name, where=where)


def _path_row(tool: ToolSpec, target: Target, inference: EntityInference) -> Target:
    """``/lists/{tasklist}/clear``: the path parameter before the verb names a row of an entity
    (by its ``id:<entity>`` tag or its name) even where the literal before it does not."""
    segments = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s]
    raw = segments[-2][1:-1] if len(segments) >= 2 and segments[-2].startswith("{") else None
    param = path_param(tool, raw) if raw else None
    if param is None:
        return target
    wanted = param.semantic[3:] if param.semantic and param.semantic.startswith("id:") else None
    key = match_key(param.original_name or param.name)
    for entity in inference.entities:
        pk = entity.column(entity.pk)
        names = {match_key(entity.name), match_key(entity.name + "_id")}
        if pk is not None:
            names.add(match_key(pk.source_name or pk.name))
        if entity.name == wanted or (key in names and key != "id"):
            return Target(
                entity.name, "action", pk_param=param.name, parent_params=dict(target.parent_params)
            )
    return target


def _body_row(
    tool: ToolSpec, target: Target, verb: Verb, rest: list[str], inference: EntityInference
) -> Target:
    """``POST /v1/SubscriptionsApi/Disable {serial}``, ``/updateAccountHolderState
    {accountHolderCode}``: an argument that is the key of the entity the operation names (by the
    key's own name, not a bare ``id``) addresses the row the path does not."""
    noun = (
        [w for w in rest[: rest.index(stop)]]
        if (stop := next((w for w in rest if w in _STOP), None))
        else rest
    )
    named = [inference.entity(entity_name("_".join(noun[:k]))) for k in range(len(noun), 0, -1)]
    candidates = [*named, inference.entity(target.entity), _entity_from_path(tool, inference)]
    scalars = [p for p in tool.params if json_type(p.json_schema) in ("string", "integer", None)]
    for entity in candidates:
        pk = entity.column(entity.pk) if entity is not None else None
        if entity is None or pk is None:
            continue
        own = match_key(pk.source_name or pk.name)
        names = {match_key(entity.name + "_id")} | ({own} if own != "id" else set())
        found = [p for p in scalars if match_key(p.original_name or p.name) in names]
        if len(found) == 1:
            parents = dict(target.parent_params)
            return Target(entity.name, "action", pk_param=found[0].name, parent_params=parents)
    return target


def _addressed(target: Target, tool: ToolSpec, inference: EntityInference) -> EntityDef | None:
    entity = inference.entity(target.entity)
    if entity is None and target.pk_param is not None:
        entity = _entity_from_path(tool, inference)
    return entity


_STOP = {"by", "for", "from", "with", "in", "on", "of", "to", "using", "via", "and", "or", "as"}
_ARTICLES = {"a", "an", "the", "new"}


def _named_entity(rest: list[str], inference: EntityInference) -> EntityDef | None:
    """The entity the words after a verb name (``create_ads_by_reference`` -> ad)."""
    noun: list[str] = []
    for word in rest:
        if word in _STOP:
            break
        if word not in _ARTICLES or noun:  # ``add_an_employee_earning``: the noun after the article
            noun.append(word)
    for candidate in ("_".join(noun), *(noun[-1:] or []), *(noun[:1] or [])):
        if candidate:
            found = inference.entity(entity_name(candidate))
            if found is not None:
                return found
    return None


def _insert_target(
    tool: ToolSpec, target: Target, verb: Verb, rest: list[str], inference: EntityInference
) -> EntityDef | None:
    return (
        _named_entity(rest, inference)
        or inference.entity(target.entity)
        or _entity_from_path(tool, inference)
        or _entity_from_response(tool, inference, verb)
    )


def _body_fields(tool: ToolSpec) -> list[str]:
    """The request body's field names, as the spec spells them."""
    return [p.original_name or p.name for p in tool.params if p.location in ("body", "arg")]


def _member(
    tool: ToolSpec, target: Target, entity: EntityDef, added: list[str] | None = None
) -> ColumnDef | None:
    """The JSON column of the addressed row that a write's last path literal names and its body
    fits (``PUT /employees/{employeeId}/emergencyContacts`` -> ``employee.emergencyContacts``): the
    operation writes that part of the row, which the row's read returns. ``added``: the words after
    an adding verb in that literal (``/payment_dispute/{id}/add_evidence``, ``.../{policy}/addRule``),
    which name a *list* column the body is one more item of."""
    sub = sub_record_of(tool.method, tool.path)
    if sub is None or target.pk_param is None:
        return None
    param = path_param(tool, sub[0])
    if param is None or param.name != target.pk_param:
        return None
    names = sub[1]
    column = next(
        (c for c in entity.columns if c.type == "json" and match_key(c.source_name or c.name) in names), None
    )
    if column is None and added:
        key = match_key("_".join(added))
        listed = {key, key[:-1] if key.endswith("s") else key + "s"}
        column = next(
            (
                c
                for c in entity.columns
                if c.type == "json"
                and json_type(c.json_schema) == "array"
                and match_key(c.source_name or c.name) in listed
            ),
            None,
        )
    if column is None:
        return None
    schema: dict[str, Any] = column.json_schema or {}
    if json_type(schema) == "array":  # a list of sub-records: the body is one of them
        items = schema.get("items")
        schema = items if isinstance(items, dict) else {}
    props = merged_properties(schema)[0] if json_type(schema) == "object" else {}
    fields = _body_fields(tool)
    hits = sum(1 for f in fields if f in props)
    whole = not tool.body_is_object and any(p.location == "body" for p in tool.params)
    return column if whole or (hits and hits * 2 >= len(fields)) else None


def _added_words(tool: ToolSpec, rest: list[str]) -> list[str] | None:
    """The words after the verb where the verb and its object are the path's last literal
    (``add_evidence``, ``addRule``): the member the literal adds to; None where the verb came
    from elsewhere (the operation's name) or nothing follows it."""
    segments = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s]
    last = split_words(segments[-1].rsplit(":", 1)[-1]) if segments and "{" not in segments[-1] else []
    if not rest or last[-len(rest) :] != rest or len(last) != len(rest) + 1:
        return None
    return rest


def _on_row(
    name: str, verb: Verb, rest: list[str], tool: ToolSpec, target: Target, inference: EntityInference
) -> ActionBinding:
    """An action on the row ``target.pk_param`` names."""
    entity = _addressed(target, tool, inference)
    if entity is None or target.pk_param is None:
        raise Unbound(f"'{name}' addresses no row of an entity")
    parents = parent_columns(target, entity)
    if verb.kind == "insert":  # the child the words after the verb name, else the path before it
        child = _named_entity(rest, inference)  # (``/podcasts/{key}/episodes/create``)
        if child is None or child.name == entity.name:
            child = _entity_from_path(tool, inference)
        link = next((c for c in child.columns if c.ref == entity.name), None) if child else None
        if child is not None and link is not None:  # /campaigns/{id}/create_ads: a child row
            child_target = Target(child.name, "action", parent_params={target.pk_param: entity.name})
            return _insert(verb, name, tool, child, child_target)
    added = _added_words(tool, rest) if verb.kind == "insert" else None
    member = _member(tool, target, entity, added) if verb.kind in ("insert", "set") else None
    if member is not None:  # the row's own sub-record (a list of them: one more)
        action = ActionDef(kind="set", verb=name, target=entity.name, member=member.name, scope=parents)
        action.returns = "row" if response_is_row(tool, entity) else "body"
        return ActionBinding(entity.name, action, target.pk_param)
    if verb.kind == "insert":
        if "from" not in rest[:1]:
            raise Unbound(f"'{name}' on a {entity.name} names no child entity to insert")
        verb = Verb("copy")  # create-from-proforma: a new row from the addressed one
    skip = {target.pk_param, *parents}
    if verb.kind == "transition":
        action = _transition(verb, name, entity)
        columns, body_arg = arg_columns(tool, entity, skip)
        # a number sent with the act is its amount (``cancellation-request {value}``, ``capture
        # {amount}``: how much is cancelled or captured), never the row's new total
        columns = {
            a: c
            for a, c in columns.items()
            if c not in action.sets and (col := entity.column(c)) is not None and col.type not in _NUMBERS
        }
    elif verb.kind == "clear":
        action, columns, body_arg = _clear(name, tool, entity, inference), {}, None
    else:
        columns, body_arg = arg_columns(tool, entity, skip)
        moved = destination_arg(tool, entity, target, skip) if verb.kind == "set" else None
        if moved is not None and moved[1] not in columns.values():  # a move: to another parent
            columns[moved[0]] = moved[1]
        if verb.kind == "set" and not columns and body_arg is None:
            raise Unbound(f"'{name}' writes no column of {entity.name}")
        action = ActionDef(kind=verb.kind, verb=name, target=entity.name)
    action.scope = parents
    action.returns = "row" if action.kind != "clear" and response_is_row(tool, entity) else "body"
    return ActionBinding(entity.name, action, target.pk_param, columns, body_arg)


def _delete_children(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionBinding:
    """``DELETE /buckets/{bucketKey}/messages``: a DELETE on a collection under a parent's item
    deletes that parent's rows of the collection (a ``clear`` of the addressed parent row)."""
    child = inference.entity(target.entity)
    if any(p.location != "path" for p in tool.params):  # ``{"uid": ...}`` names which rows go
        raise Unbound("a DELETE on a collection names which of its rows by its arguments (world model)")
    segments = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s]
    under_item = len(segments) >= 2 and segments[-2].startswith("{") and not segments[-1].startswith("{")
    for arg, parent_name in reversed(list(target.parent_params.items())):
        parent = inference.entity(parent_name)
        ref = next((c for c in child.columns if c.ref == parent_name), None) if child else None
        if not under_item or child is None or parent is None or ref is None:
            break
        action = ActionDef(kind="clear", verb="delete", target=child.name, parent_column=ref.name)
        action.scope = {a: c for a, c in parent_columns(target, parent).items() if a != arg}
        action.returns = "body"
        return ActionBinding(parent.name, action, arg)
    raise Unbound("the operation's verb names no state change")


def _answers_row(tool: ToolSpec, entity: EntityDef) -> bool:
    """Whether a read action answers with the row itself: no schema, or an object of its columns
    that carries no list the row does not hold (``{"payment_id", "events": [...]}`` is about it)."""
    if not tool.output_schema:
        return True
    if json_type(tool.output_schema) not in ("object", None) or not response_is_row(tool, entity):
        return False
    found = unwrap(tool.output_schema)
    props = merged_properties(found.schema)[0] if found is not None else {}
    lists = [k for k, v in props.items() if json_type(v) == "array"]
    return all((c := column_named(entity, k)) is not None and c.type == "json" for k in lists)


def _describes(tool: ToolSpec, entity: EntityDef) -> bool:
    """Whether the answer is one row of ``entity`` with more fields than it keeps columns: most of
    its columns are fields of the answer (sportsdata's 117-field season stat holds the 40 kept); a
    map about many rows (``{"equipments": {code: {url}}}``) is not."""
    found = unwrap(tool.output_schema)
    props = merged_properties(found.schema)[0] if found is not None and not found.is_list else {}
    keys = {match_key(k) for k in props}
    hits = sum(1 for c in entity.columns if match_key(c.source_name or c.name) in keys)
    return hits * 2 > len(entity.columns)


def _lookup(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionBinding:
    """A read action on one row answers from that row (``compoworld.synth.readside``)."""
    target = row_param_target(tool, target, inference)
    entity = _addressed(target, tool, inference)
    if entity is not None and target.pk_param is None and json_type(tool.output_schema or {}) == "object":
        row = _answers_row(tool, entity)
        if not (row or _describes(tool, entity)):  # a map or report about many rows, not one of them
            raise Unbound(READ_REASON)
        found = bind_field_match(tool, entity)  # ``/PlayerSeasonStatsByPlayer/{season}/{playerid}``
        found.returns = "row" if row else "body"
        refused = unhonoured(tool, set(found.match))  # ``units``, ``days``: refused by name
        return ActionBinding(entity.name, found, refused=refused)
    if entity is None or target.pk_param is None:
        raise Unbound(READ_REASON)
    target = Target(entity.name, "action", pk_param=target.pk_param, parent_params=target.parent_params)
    found = bind_lookup(tool, target, inference)
    found.returns = "row" if _answers_row(tool, entity) else "body"
    named, refused = read_params(tool, entity, {target.pk_param or "", *target.parent_params, *found.scope})
    found.scope.update(named)  # ``?status=open`` on one row: the row must hold it
    return ActionBinding(entity.name, found, target.pk_param, refused=refused)


def _singleton(tool: ToolSpec, entity: EntityDef) -> ActionBinding:
    """A record addressed without a key: a GET reads its one row, a PUT/PATCH writes it."""
    method = (tool.method or "POST").upper()
    if method == "GET":
        named, refused = read_params(tool, entity, set())  # ``?companyId=``: the row holding it
        action = ActionDef(kind="lookup", verb="read", target=entity.name, match=named)
        action.returns = "row" if _answers_row(tool, entity) else "body"
        return ActionBinding(entity.name, action, refused=refused)
    if method not in ("PUT", "PATCH"):
        raise Unbound(f"a {method} on the {entity.name} record names no state change")
    columns, body_arg = arg_columns(tool, entity, set())
    if not columns and body_arg is None:
        raise Unbound(f"'{tool.name}' writes no column of {entity.name}")
    action = ActionDef(kind="set", verb="update", target=entity.name)
    action.returns = "row" if response_is_row(tool, entity) else "body"
    return ActionBinding(entity.name, action, None, columns, body_arg)


def _writes_collection_path(tool: ToolSpec) -> bool:
    """A PUT or PATCH on a collection's own path, no verb after it (``PATCH /v1/ProductsApi``): the
    method is the verb, an update of the row whose key its body carries (``_body_row``). Under an
    item (``PUT /bundles/{id}/tracks``) it replaces the item's children instead: not this."""
    if (tool.method or "").upper() not in ("PUT", "PATCH") or not tool.path:
        return False
    segments = [s for s in tool.path.split("?")[0].strip("/").split("/") if s]
    under_item = len(segments) >= 2 and "{" in segments[-2]
    return parse_path(tool.path).kind == "collection" and not under_item


def bind_action(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionBinding:
    """The typed state change of an action tool; :class:`Unbound` says why it has none.

    A path parameter the binding does not use is the parent its literal names, where the row
    references one (``/calendars/{calendarId}/events/{eventId}/instances``: the event must lie
    under that calendar), or after the row's key a field the row must hold (paylocity's
    ``.../earnings/{earningCode}/{startDate}``). One after the row's own key must be used: an action that addressed a
    table by ``{tableName}`` and left ``{index}`` unread would answer or change the whole table for
    any element asked for, so it stays with the world model. (One before the key that no reference
    holds, a tenant such as ``/bot/{app_id}/{botname}``, is accepted as CRUD routes accept it.)"""
    return _path_checked(tool, _bind(tool, target, inference), inference)


def _path_checked(tool: ToolSpec, bound: ActionBinding, inference: EntityInference) -> ActionBinding:
    """``bound`` with every path parameter it leaves unused placed (see :func:`bind_action`)."""
    used = {bound.pk_arg, *bound.action.scope, *bound.action.match, *bound.arg_columns}
    names = [p.name for raw in _path_vars(tool) if (p := path_param(tool, raw)) is not None]
    after = set(names[names.index(bound.pk_arg) + 1 :]) if bound.pk_arg in names else set()
    for p in tool.params:
        if p.location != "path" or p.name in used or json_choices(p) is not None:
            continue
        column = _parent_column(tool, p.name, bound, inference)
        if column is None and p.name in after and bound.action.kind != "insert":
            row = inference.entity(bound.entity)
            own = column_named(row, p.original_name or p.name) if row is not None else None
            column = own.name if own is not None and own.type != "json" and not own.primary_key else None
        if column is None and p.name in after:
            raise Unbound(f"path parameter '{p.name}' after the row's key names nothing the action reads")
        if column is None:
            continue
        if bound.action.kind == "insert":  # the new row lies under that parent
            bound.arg_columns[p.name] = column
        else:  # the addressed row must lie under it (``/calendars/{calendarId}/events/{eventId}/...``)
            bound.action.scope[p.name] = column
    return bound


def patch_param(tool: ToolSpec) -> str | None:
    """The argument carrying a JSON Patch document (RFC 6902): the request body, or its one field,
    an array of operations with an ``op`` and a ``path`` (``[{op, path, value, from}]``)."""
    body = [p for p in tool.params if p.location in ("body", "arg")]
    if len(body) != 1:
        return None
    schema = body[0].json_schema
    items = schema.get("items") if json_type(schema) == "array" else None
    props = merged_properties(items)[0] if isinstance(items, dict) else {}
    return body[0].name if {"op", "path"} <= set(props) else None


_SCALARS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def patch_columns(value_schema: Any, entity: EntityDef) -> list[ColumnDef]:
    """The columns a JSON Patch ``value`` of this schema can write: any writable field where the
    schema leaves the value open, else those of its type (hetras types every ``value`` as an
    object, so only its rows' object fields can be patched)."""
    kind = json_type(value_schema) if isinstance(value_schema, dict) else None
    out = []
    for c in entity.columns:
        if c.primary_key or c.read_only or c.ref is not None:
            continue
        if (
            kind is None
            or (kind in _SCALARS and c.type == _SCALARS[kind])
            or (kind in ("object", "array") and c.type == "json" and json_type(c.json_schema) == kind)
        ):
            out.append(c)
    return out


def patch_value_schema(tool: ToolSpec, arg: str) -> Any:
    """The schema of a JSON Patch operation's ``value`` in argument ``arg``."""
    param = next((p for p in tool.params if p.name == arg), None)
    items = param.json_schema.get("items") if param is not None else None
    return merged_properties(items)[0].get("value") if isinstance(items, dict) else None


def bind_patch(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionBinding | None:
    """An update whose body is a JSON Patch document (``PATCH /rooms/{roomNumber} [{op, path,
    value}]``): a ``set`` applying its operations to the addressed row, each path naming a field of
    it; None for any other update."""
    entity = inference.entity(target.entity)
    arg = patch_param(tool)
    if entity is None or entity.singleton or target.pk_param is None or arg is None:
        return None
    if not patch_columns(patch_value_schema(tool, arg), entity):  # no field its values can write
        return None
    action = ActionDef(kind="set", verb="update", target=entity.name, patch=arg)
    action.scope = parent_columns(target, entity)
    action.returns = "row" if response_is_row(tool, entity) else "body"
    try:
        return _path_checked(tool, ActionBinding(entity.name, action, target.pk_param), inference)
    except Unbound:
        return None


def _path_vars(tool: ToolSpec) -> list[str]:
    """The path's variables, in order (``/a/{x}/b/{y}`` -> x, y)."""
    return [s[1:-1] for s in (tool.path or "").split("?")[0].strip("/").split("/") if s.startswith("{")]


def _parent_column(tool: ToolSpec, arg: str, bound: ActionBinding, inference: EntityInference) -> str | None:
    """The reference column of the row the action reads or writes that a path parameter names: the
    parameter follows a literal naming the referenced entity (``/calendars/{calendarId}``)."""
    row = inference.entity(bound.action.target if bound.action.kind == "insert" else bound.entity)
    segments = [s for s in (tool.path or "").split("?")[0].strip("/").split("/") if s]
    param = path_param(tool, arg)
    raw = next((s for s in segments if s.startswith("{") and path_param(tool, s[1:-1]) is param), None)
    at = segments.index(raw) if raw is not None else 0
    if row is None or param is None or at == 0 or "{" in segments[at - 1]:
        return None
    named = inference.entity(entity_name(segments[at - 1])) or inference.entity(
        entity_name_for(segments[at - 1])
    )
    refs = [c for c in row.columns if named is not None and c.ref == named.name and not c.primary_key]
    return refs[0].name if len(refs) == 1 else None


def _bind(tool: ToolSpec, target: Target, inference: EntityInference) -> ActionBinding:
    record = inference.entity(target.entity)
    if record is not None and record.singleton:
        return _singleton(tool, record)
    whole = bind_count(tool, target, inference) or bind_clear_all(tool, target, inference)
    if whole is not None:  # ``POST /v1/ProductsApi/Count {key}``, ``DELETE /__admin/mappings``
        return ActionBinding(
            whole.entity,
            whole.action,
            None,
            whole.arg_columns,
            listing=whole.listing,
            search_arg=whole.search_arg,
        )
    if (tool.method or "POST").upper() in _READ_METHODS:
        return _lookup(tool, target, inference)
    path_words, name_words, on_item = _verb_words(tool)
    if set(path_words + name_words) & _BULK:
        raise Unbound("a bulk operation carries many requests (world model)")
    collection = target  # ``/bundles/{bundle_id}/tracks``: the tracks, under the bundle's item
    if target.pk_param is None and on_item:
        target = _path_row(tool, target, inference)
    on_row = on_item and target.pk_param is not None
    found = action_verb(path_words, on_item=on_row) or action_verb(name_words, on_item=on_row)
    if found is None and _writes_collection_path(tool):  # ``PATCH /v1/ProductsApi {serial, name}``
        found = ("update", Verb("set"), [])
    if found is None and on_row and (tool.method or "").upper() in ("PUT", "PATCH") and _part_literal(tool):
        found = ("update", Verb("set"), [])  # ``PUT /functions/{name}/concurrency``: the row's part
    deletes = found is None and (tool.method or "").upper() == "DELETE"
    clears = deletes or (found is not None and found[1].kind == "clear")
    if clears and target.pk_param is None and target.parent_params:
        return _delete_children(tool, target, inference)
    if deletes and collection.pk_param is None and collection.parent_params and collection.entity:
        return _delete_children(tool, collection, inference)  # the item's param named the parent's row
    if found is None:
        raise Unbound("the operation's verb names no state change")
    name, verb, rest = found
    if target.pk_param is None and verb.kind != "insert":  # ``/archive/calculatorConfiguration/{id}``
        target = row_param_target(tool, target, inference)
    if target.pk_param is None and verb.kind != "insert":
        target = _body_row(tool, target, verb, rest, inference)
    if target.pk_param is not None:
        return _on_row(name, verb, rest, tool, target, inference)
    if verb.kind != "insert":
        raise Unbound(f"'{name}' addresses no row of an entity")
    entity = _insert_target(tool, target, verb, rest, inference)
    if entity is None:
        raise Unbound(f"'{name}' inserts into no entity the read side lists")
    return _insert(verb, name, tool, entity, target)
