"""The canonical model every ingester produces: one ServiceSpec per input document.

Ingesters (OpenAPI 3.x, Swagger 2.0, MCP ``tools/list``, OpenAI function lists) all
land here, so synthesis, the graph and the runtime never look at a source format.
All ``$ref``s are resolved before a schema is stored in this model; a recursive
schema is cut at the recursion point and replaced by ``{"type": "object"}`` with
``"x-recursive": true``. So that inlining cannot blow a document up (Microsoft Graph
would expand to a billion values), a reference nested deeper than a few levels, or
past a tool's size budget, is replaced by ``{"type": <its type>, "x-truncated": true,
"title": <schema name>}``; see ``compoworld.specs.refs``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from compoworld.manifest import XmlWire

__all__ = [
    "FieldSpec",
    "ParamLocation",
    "SemanticType",
    "ServiceSpec",
    "SourceKind",
    "ToolSpec",
]


class SemanticType(StrEnum):
    """What a value means, beyond its JSON type. Entity ids are ``id:<entity>`` strings instead."""

    EMAIL = "email"
    URL = "url"
    UUID = "uuid"
    DATE = "date"
    DATETIME = "date-time"
    PHONE = "phone"
    CURRENCY = "currency"
    MONEY = "money"
    COUNTRY = "country"
    PERSON_NAME = "person_name"
    FIRST_NAME = "first_name"
    LAST_NAME = "last_name"
    COMPANY_NAME = "company_name"
    ADDRESS = "address"
    CITY = "city"
    POSTAL_CODE = "postal_code"
    TITLE = "title"
    TEXT = "text"
    STATUS = "status"
    LANGUAGE = "language"
    TIMEZONE = "timezone"
    IP_ADDRESS = "ip"
    COLOR = "color"
    QUANTITY = "quantity"
    PERCENT = "percent"
    IBAN = "iban"
    BIC = "bic"


SourceKind = Literal["openapi3", "swagger2", "mcp", "functions"]
ParamLocation = Literal["path", "query", "header", "body", "arg"]


class FieldSpec(BaseModel):
    """One input parameter or one top-level response field of a tool."""

    model_config = ConfigDict(populate_by_name=True)

    name: str = Field(
        description="The name the tool uses for the value (a valid identifier after sanitising)."
    )
    original_name: str | None = Field(
        default=None, description="The name in the source document, if it differed."
    )
    json_schema: dict[str, Any] = Field(
        default_factory=dict, alias="schema", description="JSON schema of the value, $refs resolved."
    )
    required: bool = Field(default=False, description="Whether the caller must supply it.")
    description: str = Field(default="", description="Human description from the source document.")
    location: ParamLocation = Field(default="arg", description="Where the value travels on the REST route.")
    semantic: str | None = Field(
        default=None, description="A SemanticType value, or 'id:<entity>' for the id of a named entity."
    )
    style: str | None = Field(
        default=None,
        description="How a query/header value is serialised (form, spaceDelimited, pipeDelimited, deepObject).",
    )
    explode: bool | None = Field(
        default=None, description="Whether an array or object value is exploded into repeated keys."
    )


class ToolSpec(BaseModel):
    """One operation: an OpenAPI operation, an MCP tool or an OpenAI function."""

    name: str = Field(
        description="Stable tool name: [A-Za-z0-9_-], unique within the service, at most 64 chars."
    )
    original_name: str | None = Field(
        default=None, description="operationId / tool name in the source, if sanitised."
    )
    description: str = Field(default="", description="What the tool does, from the source.")
    method: str | None = Field(default=None, description="HTTP method (upper case) for OpenAPI sources.")
    path: str | None = Field(
        default=None, description="REST path template for OpenAPI sources, e.g. /pets/{petId}."
    )
    params: list[FieldSpec] = Field(
        default_factory=list, description="Flattened inputs (path, query, body fields)."
    )
    body_is_object: bool = Field(
        default=True,
        description="False when the request body is not an object and travels as one 'body' param.",
    )
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON schema (type object) over the flattened params.",
    )
    output_schema: dict[str, Any] | None = Field(
        default=None, description="JSON schema of the success response body, if declared."
    )
    response_fields: list[FieldSpec] = Field(
        default_factory=list,
        description="Top-level fields of the response (through one wrapper level), tagged.",
    )
    response_entity: str | None = Field(
        default=None, description="Name of the components schema the response carries, if one can be named."
    )
    body_entity: str | None = Field(
        default=None, description="Name of the components schema of the request body."
    )
    success_status: int | None = Field(
        default=None, description="The success status the source declares (200, 201, 204...), if any."
    )
    body_media: str | None = Field(
        default=None,
        description="Media type of the request body (application/json, multipart/form-data...), if any.",
    )
    error_statuses: list[int] = Field(
        default_factory=list, description="The client-error statuses (4xx) the source declares."
    )
    error_schema: dict[str, Any] | None = Field(
        default=None, description="JSON schema of the declared error body (the first 4xx or default one)."
    )
    response_xml: XmlWire | None = Field(
        default=None,
        description="Where the success body is declared only in an XML media type: its media and layout.",
    )
    xml_error_statuses: dict[str, int] = Field(
        default_factory=dict,
        description="Of an XML operation: error code (not_found...) -> the status of the declared error "
        "that means it (AWS's NoSuchEntityException at 481).",
    )
    tags: list[str] = Field(default_factory=list, description="Tags / groups from the source.")
    pointer: str = Field(default="", description="JSON pointer of the operation in the source document.")
    fixed_headers: dict[str, str] = Field(
        default_factory=dict,
        description="Header -> the one value the source allows (AWS's ``X-Amz-Target``): sent, not an argument.",
    )
    fixed_query: dict[str, str] = Field(
        default_factory=dict,
        description="Query parameter -> the one value the source allows (``Action``, ``Version``): sent, not an argument.",
    )


class ServiceSpec(BaseModel):
    """One service: everything synthesis needs, whatever the source format was."""

    name: str = Field(description="Service slug: lower-case [a-z0-9_], unique in a library.")
    title: str = Field(default="", description="Human title.")
    description: str = Field(default="", description="What the API is for.")
    version: str = Field(default="", description="The API's own version string.")
    source_kind: SourceKind = Field(description="Which ingester produced it.")
    source_file: str = Field(default="", description="Path of the input document.")
    categories: list[str] = Field(
        default_factory=list, description="Domain categories (x-apisguru-categories...)."
    )
    tools: list[ToolSpec] = Field(default_factory=list, description="Operations, in source order.")
    schemas: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Named object schemas (components.schemas / definitions), $refs resolved.",
    )
    warnings: list[str] = Field(default_factory=list, description="Non-fatal problems met while ingesting.")
    defects: list[str] = Field(
        default_factory=list,
        description="Operations left out because they are defective, each 'file#pointer: message'.",
    )
