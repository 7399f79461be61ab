"""Tools whose inputs are one JSON schema object: MCP tools and OpenAI functions.

Each tool's schema is its own ``$ref`` root (``#/$defs/...`` resolves inside it).
Parameters keep the source's ``required`` list as found (upstream lists are
sometimes over-broad; synthesis decides what to enforce). The entity a tool is
about is read from its name (``create_branch`` -> ``branch``) so a bare ``id``
argument can be tagged ``id:branch``.
"""

from __future__ import annotations

from typing import Any

from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.fields import input_schema, object_fields, response_fields
from compoworld.specs.model import ServiceSpec, SourceKind, ToolSpec
from compoworld.specs.naming import service_slug, slugify, tool_name, unique_tool_name
from compoworld.specs.refs import Resolver
from compoworld.specs.shapes import object_view
from compoworld.specs.words import entity_name, split_words

__all__ = ["ArgTool", "build_arg_service", "tool_entity"]

_VERBS = frozenset(
    {"get", "list", "create", "update", "delete", "add", "remove", "set", "search", "find", "fetch"}
    | {"retrieve", "send", "post", "put", "patch", "read", "write", "new", "edit", "modify", "upsert"}
    | {"query", "lookup", "cancel", "archive", "describe", "show", "start", "stop", "run", "execute"}
    | {"check", "count", "bulk", "batch", "import", "export", "manage", "all", "my", "one", "many"}
)


def tool_entity(name: str) -> str | None:
    """The entity a tool name is about: ``create_branch`` -> ``branch``, ``get_contact_by_email`` -> ``contact``."""
    words = split_words(name)
    for stop in ("by", "for", "from", "to", "in", "with", "of"):
        if stop in words[1:]:
            words = words[: words.index(stop, 1)]
    rest = [w for w in words if w not in _VERBS]
    return (entity_name("_".join(rest)) or None) if rest else None


class ArgTool:
    """One source tool: its raw name, description, input schema, and where it sits."""

    __slots__ = (
        "at",
        "defect",
        "description",
        "meta",
        "name",
        "output",
        "output_key",
        "schema",
        "schema_key",
    )

    def __init__(
        self,
        name: Any,
        description: Any,
        schema: Any,
        at: tuple[object, ...],
        schema_key: str,
        output: Any = None,
        output_key: str = "outputSchema",
        meta: Any = None,
        defect: str | None = None,
    ) -> None:
        self.defect = defect  # why the source entry is unusable, when the ingester already knows
        self.name = name
        self.description = description
        self.schema = schema
        self.at = at
        self.schema_key = schema_key
        self.output = output
        self.output_key = output_key
        self.meta = meta


def _tool(t: ArgTool, name: str, original: str | None, file: str, warnings: list[str]) -> ToolSpec:
    pointer = join_pointer(t.at)
    entity = tool_entity(t.name)
    params = []
    if t.schema is not None:
        if not isinstance(t.schema, dict):
            raise SpecError(file, f"{pointer}/{t.schema_key}", "input schema must be an object")
        resolver = Resolver(t.schema, file, (*t.at, t.schema_key))
        schema = resolver.schema(t.schema, ())
        warnings.extend(resolver.warnings)
        view = object_view(schema)
        if view is not None:
            params = object_fields(
                view, location="arg", file=file, pointer=(*t.at, t.schema_key), taken=set(), entity=entity
            )
    output_schema = None
    fields = []
    if isinstance(t.output, dict):
        out_resolver = Resolver(t.output, file, (*t.at, t.output_key))
        output_schema = out_resolver.schema(t.output, ())
        fields = response_fields(output_schema, entity, warnings, f"#{pointer}")
    return ToolSpec(
        name=name,
        original_name=original,
        description=t.description.strip() if isinstance(t.description, str) else "",
        params=params,
        input_schema=input_schema(params),
        output_schema=output_schema if isinstance(output_schema, dict) else None,
        response_fields=fields,
        pointer=pointer,
    )


def _service_name(tools: list[ArgTool], doc_meta: Any, source_file: str) -> str:
    if isinstance(doc_meta, dict):
        for key in ("service", "name"):
            if isinstance(doc_meta.get(key), str) and slugify(doc_meta[key]):
                return slugify(doc_meta[key])
    services = {t.meta.get("service") for t in tools if isinstance(t.meta, dict)}
    if len(services) == 1 and all(isinstance(t.meta, dict) for t in tools):
        only = services.pop()
        if isinstance(only, str) and slugify(only):
            return slugify(only)
    return service_slug(source_file)


def build_arg_service(
    tools: list[ArgTool], source_file: str, kind: SourceKind, at: tuple[object, ...], doc_meta: Any = None
) -> ServiceSpec:
    """A ServiceSpec from tools with schema inputs; a defective tool is left out and listed in ``defects``.

    Only a source with no usable tool is a SpecError (its first defect, or "no tools").
    """
    if not tools:
        raise SpecError(source_file, join_pointer(at), "no tools")
    warnings: list[str] = []
    seen: dict[str, str] = {}
    taken: set[str] = set()
    specs: list[ToolSpec] = []
    defects: list[SpecError] = []
    for t in tools:
        try:
            specs.append(_named_tool(t, source_file, seen, taken, warnings))
        except SpecError as exc:
            defects.append(exc)
    if not specs:
        raise defects[0]
    name = _service_name([t for t in tools if t.defect is None], doc_meta, source_file)
    return ServiceSpec(
        name=name,
        title=doc_meta.get("title", name)
        if isinstance(doc_meta, dict) and isinstance(doc_meta.get("title"), str)
        else name,
        source_kind=kind,
        source_file=source_file,
        tools=specs,
        warnings=warnings,
        defects=[str(d) for d in defects],
    )


def _named_tool(
    t: ArgTool, source_file: str, seen: dict[str, str], taken: set[str], warnings: list[str]
) -> ToolSpec:
    """One tool with a unique name; SpecError (with the tool's pointer) when it cannot be used."""
    pointer = join_pointer(t.at)
    if t.defect is not None:
        raise SpecError(source_file, pointer, t.defect)
    if not isinstance(t.name, str) or not t.name.strip():
        raise SpecError(source_file, pointer, "a tool needs a non-empty string 'name'")
    if t.name in seen:
        raise SpecError(source_file, pointer, f"duplicate tool name {t.name!r} (also at #{seen[t.name]})")
    base = tool_name(t.name)
    if not base:
        raise SpecError(source_file, pointer, f"tool name {t.name!r} cannot be sanitised")
    name = unique_tool_name(base, set(taken))  # provisional: a tool that fails below takes no name
    tool = _tool(t, name, None if name == t.name else t.name, source_file, warnings)
    taken.add(name)
    seen[t.name] = pointer
    if name != base:
        warnings.append(f"#{pointer}: tool name {base!r} taken; renamed {name!r}")
    return tool
