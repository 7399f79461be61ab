"""Render a service folder from ``service_templates/*.j2``: byte-for-byte deterministic.

The same Synthesis always renders the same bytes (sorted keys, stable order, no timestamps),
so ``compoworld build --check`` can re-render a folder from its ``spec.json`` and report any
difference (STYLE #1).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jinja2

from compoworld.canonical_json import dumps_canonical
from compoworld.manifest import ColumnDef, ServiceManifest
from compoworld.shared_schemas import share
from compoworld.synth.pipeline import Synthesis

__all__ = [
    "RENDERED_FILES",
    "dumps_json",
    "dumps_seed",
    "manifest_text",
    "render_files",
    "templates_dir",
    "write_files",
]

#: Files rendered from a Synthesis (``spec.json`` and ``verify.json`` are written by the build).
RENDERED_FILES = ("README.md", "app.py", "manifest.json", "models.py", "population.json", "seed.json")
_PY_TYPES = {"integer": "int", "number": "float", "string": "str", "boolean": "bool", "json": "Any"}
_KIND_LABELS = {
    "openapi3": "OpenAPI 3",
    "swagger2": "Swagger 2.0",
    "mcp": "MCP tools/list",
    "functions": "OpenAI function-calling",
}


def templates_dir() -> Path:
    """The ``service_templates`` folder (a package, so an installed wheel carries it too)."""
    from service_templates import TEMPLATE_DIR

    return TEMPLATE_DIR


def dumps_json(obj: Any) -> str:
    """Canonical pretty JSON (sorted keys, 2-space indent, trailing newline; ``canonical_json``)."""
    return dumps_canonical(obj)


def manifest_text(manifest: ServiceManifest) -> str:
    """``manifest.json``: the model as canonical JSON, each repeated subschema written once."""
    return dumps_json(share(manifest.model_dump(mode="json")))


def dumps_seed(rows: dict[str, list[dict[str, Any]]]) -> str:
    """Seed rows as JSON with one row per line: readable diffs, compact files."""
    parts = []
    for table in sorted(rows):
        body = ",\n".join("    " + json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows[table])
        parts.append(f"  {json.dumps(table)}: [\n{body}\n  ]" if body else f"  {json.dumps(table)}: []")
    return "{\n" + ",\n".join(parts) + "\n}\n" if parts else "{}\n"


def _pytext(value: str) -> str:
    """One line of text safe inside a triple-quoted docstring."""
    text = " ".join(str(value).split())
    return text.replace("\\", "\\\\").replace('"""', "'''")[:160]


def _md(value: str) -> str:
    return " ".join(str(value).split()).replace("|", "\\|").replace("<", "&lt;")


def _summary(value: str) -> str:
    text = " ".join(str(value).split())
    cut = re.search(r"(?<=[.!?])\s", text[:400])
    return text[: cut.start()] if cut else text[:300]


def _pytype(c: ColumnDef) -> str:
    base = _PY_TYPES[c.type]
    if base == "Any":
        return base
    if c.primary_key:
        return base if c.type == "string" else f"{base} | None"
    return f"{base} | None" if c.nullable else base


def _pyfield(c: ColumnDef, table: bool = False) -> str:
    args: list[str] = []
    if c.primary_key:
        if table:
            args += ["default=None"] if c.type == "integer" else []
            args.append("primary_key=True")
    elif c.nullable or c.type == "json":
        args.append("default=None")
    if c.type == "json":
        args.append("sa_column=Column(JSON)")
    if c.description:
        args.append(f"description={' '.join(c.description.split())[:120]!r}")
    return f"Field({', '.join(args)})"


@functools.cache
def _environment() -> jinja2.Environment:
    """One environment per process: its compiled templates are reused (a template file that
    changes is recompiled, ``auto_reload``), where compiling them took a tenth of a render."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters.update(
        pytext=_pytext, pyrepr=repr, pytype=_pytype, pyfield=_pyfield, md=_md, summary=_summary
    )
    return env


def _render(env: jinja2.Environment, name: str, manifest: ServiceManifest) -> str:
    implemented = sum(1 for t in manifest.tools if t.backend == "implemented")
    kind_label = _KIND_LABELS.get(manifest.source_kind, manifest.source_kind or "specification")
    return env.get_template(name).render(manifest=manifest, implemented=implemented, kind_label=kind_label)


def render_files(synthesis: Synthesis) -> dict[str, str]:
    """File name -> text of every rendered file of a service folder."""
    env = _environment()
    manifest = synthesis.manifest
    return {
        "README.md": _render(env, "README.md.j2", manifest),
        "app.py": _render(env, "app.py.j2", manifest),
        "manifest.json": manifest_text(manifest),
        "models.py": _render(env, "models.py.j2", manifest),
        "population.json": dumps_json(synthesis.cast or {"roles": {}, "rows": {}}),
        "seed.json": dumps_seed(synthesis.seed),
    }


def write_files(folder: Path, files: dict[str, str]) -> None:
    """Write rendered files (UTF-8, ``\\n`` line ends) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in sorted(files):
        (folder / name).write_text(files[name], encoding="utf-8", newline="\n")
