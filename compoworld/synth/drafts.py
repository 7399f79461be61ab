"""Entity drafts: fields gathered from every schema that mentions an entity, then typed columns.

Inference (REST resources or tool names) only decides *which* entities exist and which schemas
describe them; this module turns the gathered fields into an EntityDef: a key, typed columns,
references, semantic tags, read-only flags, a column cap and safe identifiers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import ColumnDef, ColumnType, EntityDef
from compoworld.specs.model import FieldSpec
from compoworld.specs.semantic import value_tag
from compoworld.specs.shapes import json_type
from compoworld.specs.words import entity_name, split_words
from compoworld.synth.naming import class_name, identifier, match_key, unique, unique_column
from compoworld.synth.schemas import merged_properties

__all__ = ["MAX_COLUMNS", "EntityDraft", "FieldDraft", "finalize_entities"]

#: Most columns an entity table gets; the rest of a very wide schema stays out of typed state.
MAX_COLUMNS = 40

_RESERVED_TABLES = {"action_log", "_cw_seq"}
_LABELS = (
    "name",
    "title",
    "display_name",
    "full_name",
    "subject",
    "summary",
    "label",
    "email",
    "description",
)
_STAMP_WORDS = {"created", "updated", "modified", "deleted", "inserted"}


@dataclass
class FieldDraft:
    """One property of an entity as some schema or parameter declared it."""

    source: str
    schema: dict[str, Any]
    description: str = ""
    semantic: str | None = None
    required_by: int = 0
    read_only: bool = False
    from_body: bool = False
    order: int = 0


@dataclass
class EntityDraft:
    """An entity while inference is still collecting evidence about it."""

    name: str
    fields: dict[str, FieldDraft] = field(default_factory=dict)
    pk_params: list[FieldSpec] = field(default_factory=list)
    #: Bare ``name``/``arn`` arguments that address a row where nothing names its key otherwise
    #: (``toolnames.bare_key_param``): the key only when ``pk_params`` is empty.
    bare_keys: list[FieldSpec] = field(default_factory=list)
    parents: dict[str, FieldSpec] = field(default_factory=dict)
    implicit: bool = False
    schema_name: str | None = None
    body_required: set[str] = field(default_factory=set)
    creates: int = 0
    singleton: bool = False
    #: Fields a list's required arguments filter on: kept when the columns are capped.
    filtered: set[str] = field(default_factory=set)

    def add_field(self, draft: FieldDraft) -> None:
        """Keep the first declaration of a property, enriched by later ones; its schema is a later
        one's where the first was cut short by the node budget and the later one less so (a
        ``NodeList``'s items inlined less deeply than the ``Node`` its read answers)."""
        current = self.field(draft.source)
        if current is None:
            draft.order = len(self.fields)
            self.fields[draft.source] = draft
            return
        if _nodes(current.schema)[1] and _nodes(draft.schema)[0] > _nodes(current.schema)[0]:
            kept = {k: current.schema[k] for k in ("enum", "format") if k in current.schema}
            current.schema = {**draft.schema, **kept}
        current.semantic = current.semantic or draft.semantic
        current.description = current.description or draft.description
        current.required_by += draft.required_by
        current.from_body = current.from_body or draft.from_body
        for key in ("enum", "format"):
            if key in draft.schema and key not in current.schema:
                current.schema = {**current.schema, key: draft.schema[key]}

    def field(self, name: str) -> FieldDraft | None:
        """The field a name denotes, blind to case and separators (``TemplateID`` is ``TemplateId``)."""
        found = self.fields.get(name)
        if found is None:
            key = match_key(name)
            found = next((f for f in self.fields.values() if match_key(f.source) == key), None)
        return found

    def add_schema(self, schema: dict[str, Any], *, from_body: bool = False) -> None:
        props, required = merged_properties(schema)
        for name, sub in props.items():
            self.add_field(
                FieldDraft(
                    source=name,
                    schema=sub,
                    description=str(sub.get("description") or "")[:300],
                    required_by=int(from_body and name in required),
                    read_only=bool(sub.get("readOnly")),
                    from_body=from_body,
                )
            )
        if from_body:
            self.body_required.update(required)
            self.creates += 1

    def add_params(self, params: list[FieldSpec], *, from_body: bool = True) -> None:
        for p in params:
            self.add_field(
                FieldDraft(
                    source=p.original_name or p.name,
                    schema=p.json_schema,
                    description=p.description[:300],
                    semantic=p.semantic,
                    required_by=int(from_body and p.required),
                    read_only=bool(p.json_schema.get("readOnly")),
                    from_body=from_body,
                )
            )
            if from_body and p.required:
                self.body_required.add(p.original_name or p.name)
        if from_body:
            self.creates += 1


def _nodes(schema: Any) -> tuple[int, int]:
    """(JSON values in a schema, references inside it the node budget cut short: ``x-truncated``)."""
    size, cut, stack = 0, 0, [schema]
    while stack:
        node = stack.pop()
        size += 1
        if isinstance(node, dict):
            cut += node.get("x-truncated") is True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return size, cut


_ENUM_TYPES: dict[str, type | tuple[type, ...]] = {
    "integer": int,
    "number": (int, float),
    "string": str,
    "boolean": bool,
}


def _enum(values: Any, ctype: ColumnType) -> list[Any] | None:
    """The enum values that fit the column type (specs list ``"1 (Plan)"`` for integer fields)."""
    if ctype == "json" or not isinstance(values, list):
        return None
    kind = _ENUM_TYPES[ctype]
    kept = [v for v in values if isinstance(v, kind) and (ctype == "boolean") == isinstance(v, bool)]
    return kept or None


def _column_type(schema: dict[str, Any]) -> ColumnType:
    kind = json_type(schema)
    if kind in ("integer", "number", "string", "boolean"):
        return kind  # type: ignore[return-value]
    return "json"


def _pk_type(draft: EntityDraft, declared: ColumnType) -> ColumnType:
    """Integer when the key field (``id: number`` too) or the id parameter says so (callers must be
    able to pass it)."""
    if declared in ("integer", "number") or any(
        json_type(p.json_schema) in ("integer", "number") for p in draft.pk_params
    ):
        return "integer"
    return "string"


def _pick_pk(draft: EntityDraft) -> str | None:
    keys = {match_key(f.source): f.source for f in draft.fields.values()}
    for p in draft.pk_params:
        for candidate in (p.original_name or p.name, p.name):
            if match_key(candidate) in keys:
                return keys[match_key(candidate)]
    for p in [] if draft.pk_params else draft.bare_keys:  # ``DeleteTrigger {Name}``: keyed by name
        if match_key(p.original_name or p.name) in keys:
            return keys[match_key(p.original_name or p.name)]
    for p in draft.pk_params:  # ``{member_slug}`` names a member by its ``slug``
        words = split_words(p.original_name or p.name)
        own = keys.get(match_key(words[-1])) if len(words) >= 2 else None
        if (
            own is not None
            and "_".join(words[:-1]) == draft.name
            and _column_type(draft.fields[own].schema) in ("integer", "string")
        ):
            return own
    last = draft.name.rsplit("_", 1)[-1] + "_id"  # ``StatID`` keys a ``player_game_stat``
    for candidate in ("id", draft.name + "_id", "uuid", "key", last):
        if match_key(candidate) in keys:
            found = keys[match_key(candidate)]
            if _column_type(draft.fields[found].schema) in ("integer", "string"):
                return found
    return None


def _ensure_pk(draft: EntityDraft) -> str:
    found = _pick_pk(draft)
    if found is not None:
        return found
    schema: dict[str, Any] = {"type": "string"}
    if draft.pk_params:
        declared = draft.pk_params[0].json_schema
        schema = {"type": "integer"} if json_type(declared) == "integer" else {"type": "string"}
        if isinstance(declared.get("format"), str) and schema["type"] == "string":
            schema["format"] = declared["format"]
    source = "id" if draft.field("id") is None else draft.name + "_id"  # ``Id`` is taken too
    draft.fields = {
        source: FieldDraft(source=source, schema=schema, read_only=True, order=-1),
        **draft.fields,
    }
    return source


#: String constraints of a path parameter that its row keys must meet to be sent on the path
#: (an ``enum`` fixes the keys themselves: ``/domains/{source_language}`` with ``en|es|de``).
_KEY_CONSTRAINTS = ("pattern", "minLength", "maxLength", "enum")


def _path_constraints(draft: EntityDraft, pk: str, scoping: list[FieldSpec]) -> None:
    """A key the path parameter constrains (``{id}`` with ``pattern: OB_EV\\d{1,7}``) that the
    body field leaves free takes the parameter's constraints, so seed keys can be sent on the path;
    so does a parent's key, from the parameter that names it in its children's paths (``scoping``:
    ``/sports/{sportId}/classes`` with ``sportId: ^OB_SP\\d{1,7}$``)."""
    field = draft.fields.get(pk)
    if field is None or _column_type(field.schema) != "string":
        return
    for p in [*draft.pk_params, *scoping]:
        if json_type(p.json_schema) not in ("string", None):
            continue
        added = {
            k: p.json_schema[k] for k in _KEY_CONSTRAINTS if k in p.json_schema and k not in field.schema
        }
        if added:
            field.schema = {**field.schema, **added}
            return


def _is_stamp(source: str, semantic: str | None) -> bool:
    """``created_at``, ``updatedAt``, ``date_modified``, ``created``: set by the service."""
    words = split_words(source)
    if not words or not _STAMP_WORDS & set(words) or words[0] not in _STAMP_WORDS | {"date", "last"}:
        return False
    return (
        semantic in ("date", "date-time") or len(words) == 1 or words[-1] in {"at", "on", "time", "timestamp"}
    )


def _rank(f: FieldDraft, pk: str, ref_sources: set[str]) -> tuple[int, int]:
    if f.source == pk:
        return (0, f.order)
    if f.source in ref_sources:
        return (1, f.order)
    if f.required_by:
        return (2, f.order)
    scalar = _column_type(f.schema) != "json"
    if f.from_body:
        return (3 if scalar else 5, f.order)
    return (4 if scalar else 6, f.order)


def _holds_key(field: dict[str, Any], param: FieldSpec) -> bool:
    """Whether a field can hold the key a path parameter passes: a numeric field cannot hold a
    name (Docker Hub's tag ``repository: integer`` is the repository's number, ``{repository}`` its
    name); an id-named text parameter (``{customerId}: string``) may well carry a number."""
    numeric = _column_type(field) in ("integer", "number")
    text = json_type(param.json_schema) in ("string", None)
    named = split_words(param.original_name or param.name)[-1:] not in (["id"], ["ids"], ["number"], ["no"])
    return not (numeric and text and named)


def _parent_sources(draft: EntityDraft) -> dict[str, str]:
    """Parent entity -> the field holding its key (added when the schemas have none)."""
    out: dict[str, str] = {}
    for parent, param in sorted(draft.parents.items()):
        keys = {match_key(f.source): f.source for f in draft.fields.values()}
        own = match_key(param.original_name or param.name)
        found = (keys.get(own) if own != "id" else None) or keys.get(match_key(parent + "_id"))
        if found is not None and not _holds_key(draft.fields[found].schema, param):
            found = keys.get(match_key(parent + "_id"))  # ``repository: integer`` is no ``{repository}``
        if found is None:
            found = parent + "_id"
            schema = dict(param.json_schema) or {"type": "string"}
            draft.add_field(FieldDraft(source=found, schema=schema, description=param.description))
        out[parent] = found
    return out


def _reference(source: str, semantic: str | None, own: str, names: set[str]) -> str | None:
    if semantic and semantic.startswith("id:"):
        target = semantic[3:]
        return target if target in names and target != own else None
    words = split_words(source)
    if len(words) >= 2 and words[-1] == "id":
        target = entity_name("_".join(words[:-1]))
        if target in names and target != own:
            return target
    return None


def _build(draft: EntityDraft, names: set[str], prefix: str, scoping: list[FieldSpec]) -> EntityDef:
    pk = _ensure_pk(draft)
    _path_constraints(draft, pk, scoping)
    parents = _parent_sources(draft)
    ref_sources = set(parents.values())
    kept = sorted(draft.fields.values(), key=lambda f: _rank(f, pk, ref_sources | draft.filtered))[
        :MAX_COLUMNS
    ]
    kept.sort(key=lambda f: (f.source != pk, f.order))
    taken: set[str] = set()
    columns: list[ColumnDef] = []
    by_parent = {v: k for k, v in parents.items()}
    for f in kept:
        name = unique_column(identifier(f.source), taken)
        ctype = _column_type(f.schema)
        is_pk = f.source == pk
        if is_pk:
            ctype = _pk_type(draft, ctype)
        enum_values = None if is_pk else _enum(f.schema.get("enum"), ctype)
        ref = None
        if not is_pk and ctype != "json" and enum_values is None:  # an enum is a category, not a reference
            ref = by_parent.get(f.source) or _reference(f.source, f.semantic, draft.name, names)
        semantic = f.semantic if f.semantic and not f.semantic.startswith("id:") else None
        if is_pk:
            semantic = f"id:{draft.name}"
        elif ref is not None:
            semantic = f"id:{ref}"
        elif semantic is None:
            semantic = value_tag(f.source, f.schema, entity=draft.name)
        fmt = f.schema.get("format")
        required = draft.creates > 0 and f.required_by >= draft.creates
        read_only = (
            f.read_only
            or (ctype == "string" and _is_stamp(f.source, semantic))
            or (is_pk and f.source not in draft.body_required)
        )
        columns.append(
            ColumnDef(
                name=name,
                source_name=f.source if f.source != name else None,
                type=ctype,
                nullable=not is_pk and not (required and not read_only),
                primary_key=is_pk,
                enum=enum_values,
                format=fmt if isinstance(fmt, str) else None,
                semantic=semantic,
                ref=ref,
                description=f.description,
                json_schema=f.schema,
                read_only=read_only,
            )
        )
    pk_col = columns[0]
    label = next((c.name for key in _LABELS for c in columns if match_key(c.name) == match_key(key)), None)
    if label is None:
        label = next(
            (c.name for c in columns if c.type == "string" and not c.primary_key and c.ref is None), None
        )
    table = (
        draft.name + "_" if draft.name in _RESERVED_TABLES or draft.name.startswith("sqlite_") else draft.name
    )
    return EntityDef(
        name=draft.name,
        class_name=class_name(draft.name),
        table=table,
        pk=pk_col.name,
        pk_type="integer" if pk_col.type == "integer" else "string",
        id_prefix=prefix if pk_col.type != "integer" else "",
        columns=columns,
        label_column=label,
        singleton=draft.singleton,
    )


def _prefixes(names: list[str]) -> dict[str, str]:
    """Short distinct id prefixes: contact -> con, company -> com, comment -> comm."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        words = [w for w in name.split("_") if w] or ["row"]
        letters = "".join(words)
        # time_off_request -> tore, task_list -> tli, contact -> con
        candidate = "".join(w[0] for w in words[:-1]) + words[-1][:2] if len(words) > 1 else letters[:3]
        size = 3
        while candidate in used and size < len(letters):
            size += 1
            candidate = letters[:size]
        out[name] = unique(candidate, used)
    return out


def _fix_class_names(entities: list[EntityDef]) -> None:
    """Make every rendered class (X, XBase) distinct across entities."""
    taken: set[str] = set()
    for entity in entities:
        base = entity.class_name
        candidate, n = base, 2
        family = ("", "Base")
        while any(candidate + s in taken for s in family):
            candidate = f"{base}{n}"
            n += 1
        entity.class_name = candidate
        taken.update(candidate + s for s in family)


def finalize_entities(drafts: list[EntityDraft]) -> list[EntityDef]:
    """EntityDefs for all drafts (sorted by name), with references resolved between them."""
    ordered = sorted(drafts, key=lambda d: d.name)
    names = {d.name for d in ordered}
    prefixes = _prefixes([d.name for d in ordered])
    scoping: dict[str, list[FieldSpec]] = {}
    for d in ordered:  # the path parameters that name each parent under its children
        for parent, param in sorted(d.parents.items()):
            scoping.setdefault(parent, []).append(param)
    entities = [_build(d, names, prefixes[d.name], scoping.get(d.name, [])) for d in ordered]
    _fix_class_names(entities)
    _align_references(entities)
    return entities


def _align_references(entities: list[EntityDef]) -> None:
    """A reference column stores the referenced key: same type (``customerId: number`` -> integer)."""
    pk_types = {e.name: e.pk_type for e in entities}
    for entity in entities:
        for column in entity.columns:
            if column.ref is not None and column.type != pk_types[column.ref]:
                column.type = pk_types[column.ref]
