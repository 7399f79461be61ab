"""Reading spec files and dispatching them to the right ingester.

The kind of a document is read from its content, never its extension: JSON and
YAML are both parsed (JSON first when the text looks like JSON), and YAML values
that JSON lacks (dates, integer keys such as ``200``) are turned into strings so
every ingester sees plain JSON data.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, cast

import yaml

from compoworld.specs.errors import SpecError
from compoworld.specs.model import ServiceSpec, SourceKind
from compoworld.specs.naming import slugify
from compoworld.specs.registry import INGESTERS, IngesterRegistry

__all__ = ["detect_kind", "ingest_document", "load_spec", "parse_document", "read_document"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_UNEXPECTED = (KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError)


def _plain(value: Any, depth: int = 0) -> Any:
    """YAML data as JSON data: string keys, ISO dates, no other exotic scalars."""
    if depth > 500:
        raise RecursionError("nesting too deep")
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else _scalar_key(k)): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, set):
        return sorted(str(v) for v in value)
    return value


def _scalar_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, dt.date | dt.datetime):
        return key.isoformat()
    return str(key)


def parse_document(text: str, source_file: str = "<document>") -> Any:
    """Parse JSON or YAML text into plain JSON data; SpecError (with line and column) if neither."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise SpecError(source_file, "", "empty document")
    if stripped[0] in "{[":
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            json_error = exc
        except RecursionError:
            raise SpecError(source_file, "", "JSON nesting too deep") from None
    else:
        json_error = None
    try:
        data = yaml.load(stripped, Loader=_Loader)
    except yaml.YAMLError as exc:
        if json_error is not None:
            raise SpecError(
                source_file,
                "",
                f"malformed JSON at line {json_error.lineno} column {json_error.colno}: {json_error.msg}",
            ) from None
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(source_file, "", f"malformed YAML{where}: {problem}") from None
    except RecursionError:
        raise SpecError(source_file, "", "YAML nesting too deep") from None
    try:
        return _plain(data)
    except RecursionError:
        raise SpecError(source_file, "", "YAML aliases form a cycle or nest too deep") from None


def read_document(path: str | Path) -> Any:
    """Read and parse a spec file (JSON or YAML, whatever its extension)."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SpecError(source, "", f"cannot read file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(source, "", f"not UTF-8 text (byte {exc.start})") from None
    return parse_document(text, source)


def detect_kind(
    doc: Any, source_file: str = "<document>", registry: IngesterRegistry | None = None
) -> SourceKind:
    """Which registered ingester claims ``doc`` (``openapi3``, ``swagger2``, ``mcp``, ``functions``)."""
    found = (registry or INGESTERS).detect(doc)
    if found is None:
        hint = f"keys {sorted(map(str, doc))[:8]}" if isinstance(doc, dict) else type(doc).__name__
        raise SpecError(
            source_file, "", f"unrecognised document ({hint}): not OpenAPI 3, Swagger 2, MCP or functions"
        )
    return cast(SourceKind, found.name)


def ingest_document(
    doc: Any,
    source_file: str = "<document>",
    *,
    name: str | None = None,
    kind: str | None = None,
    registry: IngesterRegistry | None = None,
) -> ServiceSpec:
    """Ingest already-parsed data; ``kind`` forces an ingester, ``name`` overrides the service slug."""
    reg = registry or INGESTERS
    if kind is None:
        kind = detect_kind(doc, source_file, reg)
    elif kind not in reg:
        raise SpecError(source_file, "", f"unknown source kind {kind!r} (known: {', '.join(reg.names())})")
    try:
        spec = reg.get(kind).ingest(doc, source_file)
    except SpecError:
        raise
    except _UNEXPECTED as exc:
        raise SpecError(source_file, "", f"cannot ingest as {kind}: {type(exc).__name__}: {exc}") from exc
    if name is not None:
        slug = slugify(name)
        if not slug:
            raise SpecError(source_file, "", f"service name {name!r} cannot be made a slug")
        spec = spec.model_copy(update={"name": slug})
    return spec


def load_spec(
    path: str | Path,
    name: str | None = None,
    *,
    kind: str | None = None,
    registry: IngesterRegistry | None = None,
) -> ServiceSpec:
    """Read a spec file and ingest it into a ServiceSpec (SpecError on any problem with the file)."""
    return ingest_document(read_document(path), str(path), name=name, kind=kind, registry=registry)
