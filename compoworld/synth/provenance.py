"""What a built folder records about how it was made, so an unchanged input is never rebuilt.

``build.json`` in a service folder holds the sha256 of its source document (and of the exact
input it was built from, which differs for a part of a split document), the generator
fingerprint, and the build result. The fingerprint hashes the code and the data libraries that
decide what a build writes: change any of them and every folder is out of date; change nothing
and a rebuild skips every folder.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from compoworld.manifest import ServiceManifest

__all__ = [
    "RECORD_FILE",
    "BuildRecord",
    "file_sha256",
    "generator_fingerprint",
    "read_record",
    "tool_signature",
]

#: The provenance file of a service folder built by ``compoworld build``.
RECORD_FILE = "build.json"
# Parts of the package that cannot change what a build writes (serving, deployment, the CLI).
_NOT_GENERATOR = ("cli.py", "embedded.py", "llm.py", "corpus.py", "deploy/", "synth/cli.py", "synth/batch.py")
# Libraries whose version changes generated values or checks (seed data, schemas, DDL).
_LIBRARIES = ("faker", "rstr", "regex", "jsonschema", "pydantic", "sqlmodel", "sqlalchemy", "jinja2")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.cache
def generator_fingerprint() -> str:
    """A short hash of the generator: its source files, the templates, and key library versions."""
    import compoworld
    import service_templates

    digest = hashlib.sha256()
    roots = [
        ("compoworld", Path(compoworld.__file__).parent),
        ("templates", Path(service_templates.__file__).parent),
    ]
    for label, root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".j2")):
            rel = path.relative_to(root).as_posix()
            if label == "compoworld" and rel.startswith(_NOT_GENERATOR):
                continue
            digest.update(f"{label}/{rel}\0".encode())
            digest.update(path.read_bytes())
    for name in _LIBRARIES:
        try:
            digest.update(f"{name}=={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} missing\0".encode())
    return digest.hexdigest()[:16]


def tool_signature(manifest: ServiceManifest) -> str:
    """The identity of a tool set: names, routes and schemas (descriptions and titles do not count)."""
    tools = [
        [t.name, t.method, t.path, _bare(t.input_schema), _bare(t.output_schema)]
        for t in sorted(manifest.tools, key=lambda t: t.name)
    ]
    text = json.dumps(tools, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _bare(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: _bare(v) for k, v in schema.items() if k not in ("description", "title", "example", "examples")
        }
    if isinstance(schema, list):
        return [_bare(v) for v in schema]
    return schema


class BuildRecord(BaseModel):
    """``build.json``: where a folder came from and what building it gave."""

    source: str = Field(description="The source document, relative to the build's input root.")
    source_sha256: str = Field(description="sha256 of the source document's bytes.")
    input_sha256: str = Field(description="sha256 of spec.json (the part of the source, for a split).")
    part: str | None = Field(default=None, description="Which part of a split document, if it was split.")
    generator: str = Field(description="The generator fingerprint the folder was built with.")
    tool_signature: str = Field(description="Identity of the tool set (for de-duplication).")
    result: dict[str, Any] = Field(description="The ServiceBuildResult of the build.")


def read_record(folder: Path) -> BuildRecord | None:
    """The folder's build record, or ``None`` when it has none (or an unreadable one)."""
    try:
        return BuildRecord.model_validate_json((folder / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
