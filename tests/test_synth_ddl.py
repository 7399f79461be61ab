"""The DDL compiled from a service's entities is what importing its models.py compiles, or None.

Every starter service is compared statement for statement; entities the fast path does not
recognise as plain (a column SQLModel gives a meaning, a class that rebinds a module name) fall
back to importing models.py, so a models.py that does not import still fails the build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.manifest import ServiceManifest, load_manifest
from compoworld.runtime.service import sqlmodel_ddl
from compoworld.settings import bundled_library
from compoworld.synth.ddl import entity_ddl
from compoworld.synth.pipeline import Synthesis
from compoworld.synth.render import render_files

STARTER = sorted(p for p in bundled_library().iterdir() if (p / "manifest.json").exists())


def _manifest(folder: Path) -> ServiceManifest:
    return load_manifest(folder)


@pytest.mark.parametrize("folder", STARTER, ids=[p.name for p in STARTER])
def test_the_entities_compile_to_the_ddl_models_py_imports_to(folder: Path) -> None:
    manifest = _manifest(folder)
    text = (folder / "models.py").read_text(encoding="utf-8")
    fast = entity_ddl(manifest.entities, text)
    assert fast is not None
    assert fast == sqlmodel_ddl(folder, manifest.name)


def _render_with(tmp_path: Path, manifest: ServiceManifest) -> tuple[str, Path]:
    text = render_files(Synthesis(manifest, {}))["models.py"]
    (tmp_path / "models.py").write_text(text, encoding="utf-8")
    return text, tmp_path


def test_a_service_without_entities_has_no_tables(tmp_path: Path) -> None:
    manifest = _manifest(bundled_library() / "crm").model_copy(update={"entities": [], "tools": []})
    text, folder = _render_with(tmp_path, manifest)
    assert entity_ddl([], text) == [] == sqlmodel_ddl(folder, "crm")


def test_names_sqlmodel_or_the_module_give_a_meaning_are_left_to_the_import(tmp_path: Path) -> None:
    manifest = _manifest(bundled_library() / "crm")
    entity = manifest.entities[0]
    column = next(c for c in entity.columns if not c.primary_key)
    for odd in (
        entity.model_copy(
            update={
                "columns": [
                    c if c is not column else c.model_copy(update={"name": "model_x"}) for c in entity.columns
                ]
            }
        ),
        entity.model_copy(
            update={
                "columns": [
                    c if c is not column else c.model_copy(update={"name": "metadata"})
                    for c in entity.columns
                ]
            }
        ),
        entity.model_copy(update={"class_name": "Field"}),
        entity.model_copy(update={"columns": [*entity.columns, column]}),
    ):
        entities = [odd, *manifest.entities[1:]]
        text, _ = _render_with(tmp_path, manifest.model_copy(update={"entities": entities}))
        assert entity_ddl(entities, text) is None
    assert entity_ddl(manifest.entities, "class (:") is None  # a models.py that does not compile
