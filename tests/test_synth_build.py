"""Building service folders: deterministic bytes, re-render check, batches with bad specs, models, CLI."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer
import yaml
from sqlalchemy import create_engine, inspect
from sqlmodel import Session
from typer.testing import CliRunner

from compoworld.manifest import load_manifest
from compoworld.specs import load_spec
from compoworld.synth.build import VERIFY_PREFIX, build_library, build_service, check_rendered
from compoworld.synth.cli import build as build_command
from compoworld.synth.pipeline import synthesize
from compoworld.synth.render import RENDERED_FILES, render_files, write_files

REF = {"$ref": "#/components/schemas/Book"}
BOOK = {
    "type": "object",
    "required": ["title"],
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "title": {"type": "string"},
        "isbn": {"type": "string"},
        "genre": {"type": "string", "enum": ["novel", "essay", "poetry"]},
        "authorId": {"type": "integer"},
        "metadata": {"type": "object", "properties": {"pages": {"type": "integer"}}},
        "published": {"type": "string", "format": "date"},
    },
}
AUTHOR = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "email": {"type": "string", "format": "email"},
    },
}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def library_doc() -> dict[str, Any]:
    book_id = {"name": "bookId", "in": "path", "required": True, "schema": {"type": "integer"}}
    author_id = {"name": "authorId", "in": "path", "required": True, "schema": {"type": "integer"}}
    body = {"content": {"application/json": {"schema": REF}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Library", "version": "2.1", "description": "Books and authors."},
        "paths": {
            "/books": {
                "get": {
                    "operationId": "listBooks",
                    "parameters": [
                        {"name": "q", "in": "query", "schema": {"type": "string"}},
                        {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                        {"name": "genre", "in": "query", "schema": {"type": "string"}},
                    ],
                    "responses": _ok(
                        {
                            "type": "object",
                            "properties": {
                                "data": {"type": "array", "items": REF},
                                "total": {"type": "integer"},
                            },
                        }
                    ),
                },
                "post": {"operationId": "createBook", "requestBody": body, "responses": _ok(REF)},
            },
            "/books/{bookId}": {
                "get": {"operationId": "getBook", "parameters": [book_id], "responses": _ok(REF)},
                "put": {
                    "operationId": "updateBook",
                    "parameters": [book_id],
                    "requestBody": body,
                    "responses": _ok(REF),
                },
                "delete": {
                    "operationId": "deleteBook",
                    "parameters": [book_id],
                    "responses": {"204": {"description": "gone"}},
                },
            },
            "/books/{bookId}/reserve": {
                "post": {
                    "operationId": "reserveBook",
                    "parameters": [book_id],
                    "responses": _ok({"type": "object"}),
                }
            },
            "/authors": {
                "get": {
                    "operationId": "listAuthors",
                    "responses": _ok({"type": "array", "items": {"$ref": "#/components/schemas/Author"}}),
                },
                "post": {
                    "operationId": "createAuthor",
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Author"}}}
                    },
                    "responses": _ok({"$ref": "#/components/schemas/Author"}),
                },
            },
            "/authors/{authorId}": {
                "get": {
                    "operationId": "getAuthor",
                    "parameters": [author_id],
                    "responses": _ok({"$ref": "#/components/schemas/Author"}),
                }
            },
        },
        "components": {"schemas": {"Book": BOOK, "Author": AUTHOR}},
    }


@pytest.fixture()
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "specs" / "library.json"
    path.parent.mkdir()
    path.write_text(json.dumps(library_doc(), indent=1))
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _import_models(folder: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, folder / "models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def test_building_twice_gives_identical_bytes(spec_file: Path, tmp_path: Path) -> None:
    first = build_service(spec_file, tmp_path / "a", verify=False)
    second = build_service(spec_file, tmp_path / "b", verify=False)
    a, b = _files(Path(first.folder)), _files(Path(second.folder))
    assert set(a) >= {*RENDERED_FILES, "spec.json", "verify.json"}
    assert a == b
    assert a["spec.json"] == spec_file.read_bytes()
    for name in ("models.py", "app.py", "README.md"):
        assert "generated by compoworld" in a[name].decode().splitlines()[0]
    assert (first.tools, first.implemented, first.entities) == (9, 8, 2)


def test_a_fresh_render_matches_and_a_hand_edit_is_reported(spec_file: Path, tmp_path: Path) -> None:
    result = build_service(spec_file, tmp_path / "lib", verify=False)
    folder = Path(result.folder)
    assert check_rendered(folder) == []
    models = folder / "models.py"
    models.write_text(models.read_text() + "\n# a hand edit\n")
    (folder / "README.md").unlink()
    assert check_rendered(folder) == ["README.md (missing)", "models.py"]


def test_verification_overrides_survive_a_re_render(spec_file: Path, tmp_path: Path) -> None:
    spec = load_spec(spec_file, name="library")
    synthesis = synthesize(spec, "library", {"getAuthor": VERIFY_PREFIX + "read did not round-trip"})
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "spec.json").write_bytes(spec_file.read_bytes())
    write_files(folder, render_files(synthesis))
    tool = load_manifest(folder).tool("getAuthor")
    assert tool is not None and tool.backend == "simulated" and tool.pk_arg is None
    assert check_rendered(folder) == []


def test_generated_models_import_and_create_their_tables_in_sqlite(spec_file: Path, tmp_path: Path) -> None:
    result = build_service(spec_file, tmp_path / "lib", verify=False)
    folder = Path(result.folder)
    manifest = load_manifest(folder)
    seed = json.loads((folder / "seed.json").read_text())
    first = _import_models(folder, "synth_test_models_a")
    second = _import_models(folder, "synth_test_models_b")  # a second load must not clash
    assert first.metadata is not second.metadata
    engine = create_engine("sqlite://")
    first.metadata.create_all(engine)
    assert sorted(inspect(engine).get_table_names()) == sorted(e.table for e in manifest.entities)
    with Session(engine) as session:
        for entity in manifest.entities:
            table_class = getattr(first, entity.class_name)
            for row in seed[entity.table]:
                session.add(table_class(**row))
            assert hasattr(first, entity.class_name + "Base")
            assert not hasattr(first, entity.class_name + "Update")  # payloads follow the manifest
        session.commit()
    book = manifest.entity("book")
    assert book is not None and book.column("metadata_") is not None
    assert set(first.BookBase.model_fields) == {
        c.name for c in book.columns if not c.read_only and not c.primary_key
    }


def test_a_bad_spec_is_reported_and_the_rest_is_built(spec_file: Path, tmp_path: Path) -> None:
    broken = spec_file.parent / "broken.json"
    broken.write_text('{"openapi": "3.0.0", "info": ')
    unknown = spec_file.parent / "unknown.json"
    unknown.write_text(json.dumps({"hello": "world"}))
    report = build_library([broken, spec_file, unknown], tmp_path / "lib", progress=False, verify=False)
    assert [s.name for s in report.services] == ["library"]
    failed = {Path(f.spec_path).name: f.error for f in report.failures}
    assert set(failed) == {"broken.json", "unknown.json"}
    assert all(str(spec_file.parent) in error for error in failed.values())
    assert report.implemented_share == report.services[0].implemented_share > 0.8


def test_yaml_sources_are_stored_as_json_and_re_render_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "library.yaml"
    path.write_text(yaml.safe_dump(library_doc(), sort_keys=False))
    result = build_service(path, tmp_path / "lib", verify=False)
    folder = Path(result.folder)
    assert json.loads((folder / "spec.json").read_text()) == library_doc()
    assert check_rendered(folder) == []


def test_build_verifies_the_service_and_writes_the_report(spec_file: Path, tmp_path: Path) -> None:
    result = build_service(spec_file, tmp_path / "lib")
    report = json.loads((Path(result.folder) / "verify.json").read_text())
    assert report["service"] == "library" and report["passed"] is True
    assert result.verified is True and not result.errors
    manifest = load_manifest(Path(result.folder))
    for name, reason in result.switched_to_simulated.items():
        tool = manifest.tool(name)
        assert tool is not None and tool.simulated_reason == VERIFY_PREFIX + reason
    assert check_rendered(Path(result.folder)) == []


def test_cli_builds_reports_and_checks(spec_file: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("build")(build_command)
    app.command("noop")(lambda: None)
    runner = CliRunner()
    out = tmp_path / "lib"
    report_path = tmp_path / "report.json"
    result = runner.invoke(
        app,
        [
            "build",
            str(spec_file.parent),
            "--out",
            str(out),
            "--no-verify",
            "-q",
            "--report",
            str(report_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "library" in result.output and "implemented" in result.output
    assert json.loads(report_path.read_text())["services"][0]["name"] == "library"
    checked = runner.invoke(app, ["build", "--check", str(out)])
    assert checked.exit_code == 0 and "1 of 1" in checked.output
    (out / "library" / "app.py").write_text("# edited\n")
    dirty = runner.invoke(app, ["build", "--check", str(out)])
    assert dirty.exit_code == 1 and "app.py" in dirty.output


def test_two_documents_with_one_service_name_do_not_overwrite_each_other(tmp_path: Path) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "specs"
    report = build_library(
        [fixtures / "petstore.json", fixtures / "petstore_swagger.yaml"],
        tmp_path,
        progress=False,
        verify=False,
    )
    assert [s.name for s in report.services] == ["petstore"]
    assert len(report.failures) == 1 and "already used" in report.failures[0].error


def test_a_tool_that_fails_its_checks_is_served_as_failed_and_reported(tmp_path: Path) -> None:
    """A world-model answer that cannot satisfy its schema: the service is not served as verified."""
    doc = library_doc()
    ambiguous = {"oneOf": [{"type": "string"}, {"type": "string"}]}  # every value matches both: never valid
    doc["paths"]["/books/{bookId}/reserve"]["post"]["responses"] = _ok(
        {"type": "object", "required": ["state"], "properties": {"state": ambiguous}}
    )
    path = tmp_path / "library.json"
    path.write_text(json.dumps(doc))
    result = build_service(path, tmp_path / "lib")
    assert result.verified is False
    assert list(result.failed_checks) == ["reserveBook"]
    tool = load_manifest(Path(result.folder)).tool("reserveBook")
    assert tool is not None and tool.backend == "simulated"
    assert tool.simulated_reason is not None and tool.simulated_reason.startswith(VERIFY_PREFIX)
    assert "output schema" in tool.simulated_reason and "simulated before:" in tool.simulated_reason
    assert json.loads((Path(result.folder) / "verify.json").read_text())["passed"] is False
    assert check_rendered(Path(result.folder)) == []


def test_a_defective_operation_is_left_out_and_reported_by_pointer(tmp_path: Path) -> None:
    doc = library_doc()
    doc["paths"]["/books/{bookId}/reserve"]["post"]["parameters"].append({"name": "", "in": "header"})
    path = tmp_path / "library.json"
    path.write_text(json.dumps(doc))
    report = build_library([path], tmp_path / "lib", progress=False, verify=False)
    assert not report.failures
    (service,) = report.services
    assert service.defects == [
        f"{path}#/paths/~1books~1{{bookId}}~1reserve/post/parameters/1: "
        "parameter name '' cannot be sanitised to an identifier"
    ]
    assert load_manifest(Path(service.folder)).tool("reserveBook") is None
    assert load_manifest(Path(service.folder)).tool("getBook") is not None
