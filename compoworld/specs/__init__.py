"""Spec ingestion: OpenAPI 3.x, Swagger 2.0, MCP ``tools/list`` and OpenAI functions -> ServiceSpec.

``load_spec(path)`` reads a JSON or YAML file, picks the ingester that claims its
content (``detect_kind``) and returns the canonical ``ServiceSpec``; every problem
with the input is a ``SpecError`` naming the file and JSON pointer. Ingesters are
data in a registry (``INGESTERS``): each module below registers itself on import.
"""

from compoworld.specs import functions as _functions
from compoworld.specs import mcp as _mcp
from compoworld.specs import openapi as _openapi
from compoworld.specs import swagger as _swagger
from compoworld.specs.errors import SpecError
from compoworld.specs.loader import detect_kind, ingest_document, load_spec, parse_document, read_document
from compoworld.specs.model import FieldSpec, ParamLocation, SemanticType, ServiceSpec, SourceKind, ToolSpec
from compoworld.specs.registry import INGESTERS, Ingester, IngesterRegistry, register
from compoworld.specs.words import entity_name

__all__ = [
    "BUILTIN_INGESTERS",
    "INGESTERS",
    "FieldSpec",
    "Ingester",
    "IngesterRegistry",
    "ParamLocation",
    "SemanticType",
    "ServiceSpec",
    "SourceKind",
    "SpecError",
    "ToolSpec",
    "detect_kind",
    "entity_name",
    "ingest_document",
    "load_spec",
    "parse_document",
    "read_document",
    "register",
]

BUILTIN_INGESTERS = (_openapi.INGESTER, _swagger.INGESTER, _mcp.INGESTER, _functions.INGESTER)
