"""The service manifest: what synthesis writes and the runtime serves.

``generated_services/<svc>/manifest.json`` is the typed contract between
``compoworld.synth`` (which infers entities and binds tools to operations on them)
and ``compoworld.runtime`` (which executes those bindings against per-episode SQLite
state). The rendered ``models.py`` (SQLModel families) is derived from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from compoworld.errors import LibraryError
from compoworld.shared_schemas import unshare

__all__ = [
    "PAGING_ROLES",
    "ActionDef",
    "ColumnDef",
    "ColumnType",
    "EntityDef",
    "FilterExpressions",
    "ListBinding",
    "ListFilter",
    "Operation",
    "ResponseShape",
    "ServiceManifest",
    "ToolDef",
    "XmlWire",
    "default_response",
    "library_folders",
    "load_manifest",
    "load_manifests",
    "parse_manifest",
]

ColumnType = Literal["integer", "number", "string", "boolean", "json"]
Operation = Literal["create", "read", "list", "search", "update", "delete", "action"]
READ_OPERATIONS: frozenset[str] = frozenset({"read", "list", "search"})
#: What a paging field of a list body says: matching rows, rows in this page, page size, offset,
#: page number, page count, the next/previous page's cursor (or URL), whether more rows follow.
PAGING_ROLES: frozenset[str] = frozenset(
    {"total", "count", "limit", "offset", "page", "pages", "next", "prev", "has_more"}
)


class ColumnDef(BaseModel):
    """One column of an entity table."""

    name: str = Field(description="Column name: a valid Python identifier, not a keyword.")
    source_name: str | None = Field(default=None, description="The field's name in the spec, if it differed.")
    type: ColumnType = Field(description="Storage type; nested objects and arrays are 'json'.")
    nullable: bool = Field(default=True, description="Whether the column may be NULL.")
    primary_key: bool = Field(default=False, description="Whether this is the entity's key.")
    enum: list[Any] | None = Field(default=None, description="Allowed values, if the spec restricts them.")
    format: str | None = Field(default=None, description="JSON schema format (email, date-time...).")
    semantic: str | None = Field(default=None, description="Semantic type, or 'id:<entity>' for references.")
    ref: str | None = Field(
        default=None, description="Entity this column references (a foreign key), if any."
    )
    description: str = Field(default="", description="From the spec.")
    json_schema: dict[str, Any] = Field(
        default_factory=dict, description="The field's JSON schema in the spec."
    )
    read_only: bool = Field(
        default=False, description="Set by the service (ids, timestamps), never by a caller."
    )


class EntityDef(BaseModel):
    """A typed state table inferred from the spec."""

    name: str = Field(description="Entity name in snake case, singular (contact, invoice_line).")
    class_name: str = Field(description="Python class name of the SQLModel table class (Contact).")
    table: str = Field(description="SQLite table name.")
    pk: str = Field(description="Primary key column name.")
    pk_type: Literal["integer", "string"] = Field(
        description="Integer keys count up; string keys get a prefix."
    )
    id_prefix: str = Field(default="", description="Prefix of generated string ids (con_000042).")
    columns: list[ColumnDef] = Field(description="All columns, key first.")
    seed_rows: int = Field(default=0, description="How many rows the seed holds.")
    label_column: str | None = Field(
        default=None, description="Column that names a row to a person (name, title)."
    )
    key_space: str = Field(
        default="",
        description="What makes this entity's keys unique in the library (<service>.<entity>); see compoworld.keys.",
    )
    key_kind: str | None = Field(
        default=None,
        description="When the key is itself a typed value (a country code, a phone number, a date): its kind.",
    )
    singleton: bool = Field(
        default=False,
        description="One row only: a record the API addresses without a key (``/server``, ``/company-info``).",
    )
    population_role: str | None = Field(
        default=None,
        description="The population role its rows are cast from (customer, staff, client...), if any.",
    )

    def column(self, name: str) -> ColumnDef | None:
        return next((c for c in self.columns if c.name == name), None)


class ActionDef(BaseModel):
    """How an action tool changes typed state: the binding of the ``action`` backend.

    Paths name a column, or a field inside a JSON column (``state.status``). A transition writes
    ``sets`` on the row ``pk_arg`` names, refused with a reason when the row does not satisfy
    ``requires`` or holds a value in ``refuses`` (already cancelled, in a terminal state).
    """

    kind: Literal["transition", "insert", "copy", "clear", "set", "lookup", "count"] = Field(
        description="transition: move the row's status/flags; insert: add the row the read side "
        "lists; copy: insert a copy of the row; clear: delete the row's children (without an "
        "addressed row, every row of the target: ``DELETE /__admin/mappings``); set: write the "
        "columns the arguments name; lookup: a read action answered from the addressed row; count: "
        "a read answering how many rows of the target hold the values its arguments name."
    )
    verb: str = Field(description="The spec's verb (cancel, pause, send...).")
    target: str = Field(description="Entity whose rows the action writes.")
    sets: dict[str, Any] = Field(default_factory=dict, description="Path -> the value the action writes.")
    stamps: list[str] = Field(default_factory=list, description="Paths set to the episode's 'now'.")
    requires: dict[str, list[Any]] = Field(
        default_factory=dict, description="Path -> the values the row must hold for the action to apply."
    )
    refuses: dict[str, list[Any]] = Field(
        default_factory=dict, description="Path -> values in which the action is refused."
    )
    scope: dict[str, str] = Field(
        default_factory=dict,
        description="Parent argument -> the reference column the addressed row must hold it in.",
    )
    parent_column: str | None = Field(
        default=None, description="clear: the target's column that references the addressed row."
    )
    where: dict[str, list[Any]] = Field(
        default_factory=dict, description="clear: only target rows holding these values."
    )
    returns: Literal["row", "body"] = Field(
        default="row",
        description="row: the written row is the response; body: the spec's own response, filled from it.",
    )
    upsert: bool = Field(
        default=False,
        description="insert (``add_or_update``): a call whose arguments name an existing row's key "
        "updates that row instead of being refused as a conflict.",
    )
    each: str | None = Field(
        default=None,
        description="lookup: the one-row read that answers each key of a batch read's body (``POST "
        "/articles/get [1, 2]``); the answer is that read's answer per key, in order.",
    )
    member: str | None = Field(
        default=None,
        description="set: the JSON column of the addressed row the request body is written into "
        "(``PUT /employees/{id}/emergencyContacts``): an object column takes the body (a PATCH merges "
        "it), a list column gets the body as one more item (a list body replaces it).",
    )
    patch: str | None = Field(
        default=None,
        description="set: the argument carrying a JSON Patch document (RFC 6902: ``[{op, path, value}]``, "
        "hetras's and Visma's PATCH bodies); its operations are applied to the addressed row, each "
        "``path`` naming a field of it.",
    )
    answer: str | None = Field(
        default=None,
        description='count: the field of the spec\'s answer that holds the number (``{"count": 3}``); '
        "None: the answer is the bare number.",
    )
    match: dict[str, str] = Field(
        default_factory=dict,
        description="lookup without a key: argument -> the column whose value it names "
        "(``/PlayerSeasonStatsByPlayer/{season}/{playerid}``: ``season`` -> ``Season``, ``playerid`` -> "
        "``PlayerID``; a date argument names a timestamp column by its day); the answer is the first "
        "row, by key, holding every value, ``not_found`` when none does.",
    )

    @model_serializer(mode="wrap")
    def _omit_unset_match(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``match``, ``answer`` and ``patch`` are written only where they bind something, so manifests written
        before they existed (the starter's) stay byte for byte what they were."""
        out: dict[str, Any] = handler(self)
        if not self.match:
            out.pop("match", None)
        if self.answer is None:
            out.pop("answer", None)
        if self.patch is None:
            out.pop("patch", None)
        return out


FilterOp = Literal[
    "in", "gt", "gte", "lt", "lte", "contains", "prefix", "suffix", "is_true", "is_false", "ops"
]


class ListFilter(BaseModel):
    """A list parameter that filters rows by one column other than by equality."""

    column: str = Field(description="The column the parameter filters on.")
    op: FilterOp = Field(
        description=(
            "in: the column is one of the values (an array, or comma-separated text); gt/gte/lt/lte: a "
            "range bound; contains/prefix/suffix: text; is_true/is_false: a flag (a false argument negates); ops: "
            "an object of operators (``created[gte]=...&created[lt]=...``: eq, ne, gt, gte, lt, lte, in)."
        )
    )


class FilterExpressions(BaseModel):
    """A list argument that is a list of filter expressions (Autotask's ``{"filter": [{"field": "id",
    "op": "gt", "value": 0}]}``): the keys of one expression's field, operator, value and, for a
    group (``{"op": "or", "items": [...]}``), its member expressions."""

    arg: str = Field(description="The argument holding the expressions.")
    field: str = Field(description="Key of the field an expression tests.")
    op: str = Field(description="Key of its operator (eq, noteq, gt, gte, lt, lte, beginsWith, contains...).")
    value: str = Field(description="Key of the value it compares with.")
    group: str | None = Field(default=None, description="Key of a group's member expressions, if any.")
    within: str | None = Field(
        default=None,
        description='Where the argument is JSON text (Autotask\'s ``GET /query?search={"filter": [...]}``, '
        "the body of its POST twin): the key of that object holding the expressions.",
    )


class ListBinding(BaseModel):
    """What every declared parameter of a list/search tool does (equality filters, free text, page size and
    offset live in ``ToolDef.arg_columns``/``search_arg``/``limit_arg``/``offset_arg``)."""

    filters: dict[str, ListFilter] = Field(
        default_factory=dict, description="Argument -> range, set, text or flag filter."
    )
    sort_arg: str | None = Field(
        default=None, description="Argument naming the sort field (``-created_at``, ``name:desc``)."
    )
    order_arg: str | None = Field(default=None, description="Argument giving the sort direction.")
    cursor_arg: str | None = Field(default=None, description="Argument carrying the next page's cursor.")
    before_arg: str | None = Field(default=None, description="Argument carrying the previous page's cursor.")
    cursor_by: Literal["key", "offset"] = Field(
        default="key",
        description="What a cursor holds: the key of the last row seen (rows after it follow) or an offset.",
    )
    defaults: dict[str, Any] = Field(
        default_factory=dict,
        description="Declared defaults of the page size and sort arguments, applied when absent.",
    )
    refused: dict[str, str] = Field(
        default_factory=dict,
        description="Argument -> why it cannot be bound; a call giving it a value other than its default fails.",
    )
    headers: list[str] = Field(
        default_factory=list,
        description="Required request headers that select no rows (an application key, an API version), "
        "and required parameters of one allowed value that name the operation (AWS's ``Action``, "
        "``Version``): taken as given, as a read or a write takes them, where refusing every value would "
        "refuse every call.",
    )
    expressions: FilterExpressions | None = Field(
        default=None, description="The argument that is a list of filter expressions, if any."
    )

    @model_serializer(mode="wrap")
    def _omit_no_headers(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``headers`` and ``expressions`` are written only where a list has them, so earlier
        manifests stay byte for byte."""
        out: dict[str, Any] = handler(self)
        if not self.headers:
            out.pop("headers", None)
        if self.expressions is None:
            out.pop("expressions", None)
        return out


XmlProtocol = Literal["xml", "aws-query", "aws-ec2", "aws-rest-xml"]


class XmlWire(BaseModel):
    """A body the spec declares only in an XML media type, and the layout its elements follow.

    ``xml``: the OpenAPI XML object's rules (the root named by ``xml.name`` or the schema's component
    name, an array's items repeated unless ``xml.wrapped``, ``xml.attribute``, ``xml.prefix`` and
    ``xml.namespace``). The AWS protocols add their envelopes: ``aws-query`` answers
    ``<OpResponse><OpResult>..</OpResult><ResponseMetadata><RequestId/></ResponseMetadata></OpResponse>``
    with lists as ``<member>`` elements; ``aws-ec2`` has no Result element and a ``<requestId>``;
    ``aws-rest-xml`` is the body's own root; all three answer errors as
    ``<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>``.
    """

    media: str = Field(default="application/xml", description="The declared Content-Type (text/xml...).")
    root: str = Field(default="response", description="The root element of a success body.")
    protocol: XmlProtocol = Field(default="xml", description="Whose element layout the body follows.")
    result: str | None = Field(
        default=None, description="aws-query: the element the body sits in (CreateUserResult)."
    )
    namespace: str | None = Field(default=None, description="The root element's default namespace, if any.")
    error_root: str | None = Field(
        default=None, description="xml: the root element of the declared error body (its component name)."
    )
    error_codes: dict[str, str] = Field(
        default_factory=dict,
        description="Error code (not_found...) -> the error name the spec declares for it (NoSuchEntity).",
    )
    request_root: str | None = Field(
        default=None,
        description="The root element of a request body the spec declares in XML (its xml.name or component "
        "name; None: the request body is no XML one).",
    )


class ResponseShape(BaseModel):
    """The success body a tool answers with, as its spec declares it, and where the rows sit in it.

    Written by synthesis, read by the runtime's shaper (``compoworld.runtime.shape``) and by
    everything that reads tool results (task generation, the graph): ask it, never guess, where
    an entity row is in a body and under which key a column travels.
    """

    status: int = Field(default=200, description="The success status the spec declares (200, 201, 204...).")
    body: bool = Field(default=True, description="False when the success answer has no body (204).")
    declared: bool = Field(
        default=False,
        description="Whether the body follows a schema the spec declares (False: CompoWorld's own shape).",
    )
    rows_at: list[str] = Field(
        default_factory=list,
        description="Keys from the body root to the row, or the list of rows ([]: root).",
    )
    many: bool = Field(default=False, description="Whether ``rows_at`` holds a list of rows.")
    fields: dict[str, str] = Field(
        default_factory=dict,
        description="Column -> key of that column in a body row (the columns it carries).",
    )
    paging: dict[str, str] = Field(
        default_factory=dict, description="Dotted body path of a paging field -> its role (PAGING_ROLES)."
    )
    errors: dict[str, int] = Field(
        default_factory=dict,
        description="Error code (not_found, invalid_arguments...) -> declared HTTP status.",
    )
    error_schema: dict[str, Any] | None = Field(
        default=None, description="JSON schema of the spec's declared error body, if it declares one."
    )
    xml: XmlWire | None = Field(
        default=None,
        description="Where the spec declares the body only as XML: its media and element layout (None: JSON).",
    )

    @model_serializer(mode="wrap")
    def _omit_json_wire(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``xml`` is written only for an XML body, so manifests written before it stay byte for byte."""
        out: dict[str, Any] = handler(self)
        if self.xml is None:
            out.pop("xml", None)
        return out

    def rows(self, body: Any) -> list[tuple[str, dict[str, Any]]] | None:
        """(concrete path prefix, row as in the body) of every row of a success body; None if it holds none."""
        node = body
        prefix = ""
        for key in self.rows_at:
            if not isinstance(node, dict) or key not in node:
                return None
            node, prefix = node[key], f"{prefix}{key}."
        if self.many:
            if not isinstance(node, list):
                return None
            return [(f"{prefix}{i}.", r) for i, r in enumerate(node) if isinstance(r, dict)]
        return [(prefix, node)] if isinstance(node, dict) else None

    def key_of(self, column: str) -> str:
        """The body key a column travels under in a row."""
        return self.fields.get(column, column)

    def to_columns(self, row: dict[str, Any]) -> dict[str, Any]:
        """A body row keyed by column names (the keys of typed state)."""
        if not self.fields:
            return dict(row)
        back = {key: column for column, key in self.fields.items()}
        return {back[k]: v for k, v in row.items() if k in back}


def default_response(operation: str, status: int | None = None) -> ResponseShape:
    """CompoWorld's own shape, for a tool whose spec declares no body: a row, or ``{items, total}``."""
    if operation in ("list", "search"):
        return ResponseShape(status=status or 200, rows_at=["items"], many=True, paging={"total": "total"})
    return ResponseShape(status=status or (201 if operation == "create" else 200))


class ToolDef(BaseModel):
    """One tool and how it is executed."""

    name: str = Field(description="Tool name, unique in the service.")
    description: str = Field(default="", description="What the tool does.")
    kind: Literal["read", "write"] = Field(description="Whether the tool can change state.")
    operation: Operation = Field(description="What the tool does to its entity.")
    backend: Literal["implemented", "action", "simulated"] = Field(
        description="CRUD on typed state, a state transition on typed state, or the world model."
    )
    simulated_reason: str | None = Field(default=None, description="Why the tool is simulated, if it is.")
    entity: str | None = Field(default=None, description="Entity the tool operates on.")
    method: str = Field(default="POST", description="HTTP method of the spec's own REST route.")
    path: str | None = Field(
        default=None, description="The spec's REST path (FastAPI syntax), if it has one."
    )
    input_schema: dict[str, Any] = Field(description="JSON schema of the flat arguments (type object).")
    output_schema: dict[str, Any] = Field(default_factory=dict, description="JSON schema of envelope 'data'.")
    arg_locations: dict[str, str] = Field(
        default_factory=dict,
        description="Where each argument travels on the REST route: path|query|header|body.",
    )
    wire_names: dict[str, str] = Field(
        default_factory=dict,
        description="Argument -> its name on the REST route, where the spec's name is no safe argument name.",
    )
    arg_styles: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Argument -> how a query/header array or object travels, where not one repeated key per "
            "value: csv, spaceDelimited, pipeDelimited, deepObject."
        ),
    )
    body_media: str | None = Field(
        default=None,
        description="Media type the spec declares for the request body (JSON, form or multipart).",
    )
    body_whole: str | None = Field(
        default=None, description="Argument that is the whole request body (a body that is not an object)."
    )
    arg_columns: dict[str, str] = Field(
        default_factory=dict,
        description="Argument -> column it sets (create/update) or filters on (list/search).",
    )
    pk_arg: str | None = Field(default=None, description="The argument naming the row (read/update/delete).")
    body_arg: str | None = Field(
        default=None, description="Argument holding the entity as a nested object, if the spec nests it."
    )
    search_arg: str | None = Field(default=None, description="Free-text query argument of a search tool.")
    limit_arg: str | None = Field(default=None, description="Page size argument of list/search tools.")
    offset_arg: str | None = Field(default=None, description="Offset/page argument of list/search tools.")
    listing: ListBinding | None = Field(
        default=None, description="What the other declared list parameters do (list/search tools)."
    )
    arg_semantics: dict[str, str] = Field(default_factory=dict, description="Argument -> semantic type.")
    output_semantics: dict[str, str] = Field(
        default_factory=dict,
        description="Dotted response field path -> semantic type ('[]' marks list items).",
    )
    action: ActionDef | None = Field(default=None, description="The state change of an action-backend tool.")
    response: ResponseShape | None = Field(
        default=None,
        description="The declared success body and where its rows sit (None: CompoWorld's own shape).",
    )
    fixed_headers: dict[str, str] = Field(
        default_factory=dict,
        description="Header -> the one value the spec allows (``X-Amz-Target``): sent on the REST route, not an argument.",
    )
    fixed_query: dict[str, str] = Field(
        default_factory=dict,
        description="Query parameter -> the one value the spec allows (``Action``): sent, not an argument.",
    )

    @model_serializer(mode="wrap")
    def _omit_no_fixed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fixed parameters are written only where a tool has them, so manifests written
        before they existed (the starter's) stay byte for byte what they were."""
        out: dict[str, Any] = handler(self)
        for key in ("fixed_headers", "fixed_query"):
            if not out.get(key):
                out.pop(key, None)
        return out

    @property
    def shape(self) -> ResponseShape:
        """The response shape, CompoWorld's own when synthesis recorded none."""
        if self.response is not None:
            return self.response
        shape = default_response(self.operation)
        if shape.many and self.output_schema.get("type") == "array":
            shape.rows_at = []
        return shape

    def rows_in(self, body: Any) -> list[tuple[str, dict[str, Any]]] | None:
        """(path prefix, row keyed by column names) of every entity row in a success body of this tool."""
        found = self.shape.rows(body)
        if found is None:
            return None
        shape = self.shape
        return [(prefix, shape.to_columns(row)) for prefix, row in found]

    @property
    def is_write(self) -> bool:
        return self.kind == "write"


class ServiceManifest(BaseModel):
    """Everything the runtime needs to serve one service."""

    name: str = Field(description="Service slug.")
    title: str = Field(default="", description="Human title.")
    description: str = Field(default="", description="What the service is for.")
    version: str = Field(default="", description="API version from the spec.")
    source_kind: str = Field(default="", description="openapi3 | swagger2 | mcp | functions.")
    domain: str = Field(default="general", description="Domain label used for tasks and reports.")
    categories: list[str] = Field(default_factory=list, description="Source categories.")
    entities: list[EntityDef] = Field(default_factory=list, description="Typed state tables.")
    tools: list[ToolDef] = Field(default_factory=list, description="Tools in source order.")
    seed: int = Field(default=0, description="Seed used for the seed data (sha256-derived).")
    generator_version: str = Field(default="1", description="Bumped when synthesis output changes shape.")

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)

    def entity(self, name: str) -> EntityDef | None:
        return next((e for e in self.entities if e.name == name), None)


def parse_manifest(text: bytes | str) -> ServiceManifest:
    """A ``manifest.json`` text as the model, its shared subschemas put back (``shared_schemas``);
    ``ValueError`` saying why not."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN, an integer past 64 bits: what only the stdlib reads
        doc = json.loads(text)
    if not isinstance(doc, dict):
        raise ValueError("a manifest is a JSON object")
    return ServiceManifest.model_validate(unshare(doc))


def load_manifest(folder: Path) -> ServiceManifest:
    """Read ``folder/manifest.json``."""
    return parse_manifest((folder / "manifest.json").read_bytes())


def library_folders(library: Path) -> list[Path]:
    """The service folders of a library (those holding a manifest.json), sorted: services are found by scanning."""
    if not library.is_dir():
        raise LibraryError(f"library folder {library} does not exist or is not a directory")
    return sorted(p.parent for p in library.glob("*/manifest.json"))


def load_manifests(library: Path) -> list[ServiceManifest]:
    """Every manifest of a library, sorted by name; a bad one, or one whose folder is not its name, is named."""
    manifests: list[ServiceManifest] = []
    for folder in library_folders(library):
        path = folder / "manifest.json"
        try:
            manifest = load_manifest(folder)
        except (OSError, ValueError) as exc:
            raise LibraryError(f"{path} is not a valid service manifest: {exc}") from exc
        if manifest.name != folder.name:
            raise LibraryError(
                f"{path} names the service {manifest.name!r} but lives in folder {folder.name!r}; "
                "the folder must carry the service's name"
            )
        manifests.append(manifest)
    return manifests
