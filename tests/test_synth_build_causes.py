"""The general causes behind the first whole-corpus build's failures (issue 12), each on a small
hand-written spec: the service must build, load and pass its checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect
from sqlmodel import SQLModel

from compoworld.manifest import load_manifest
from compoworld.runtime.rest import route_path
from compoworld.synth.build import build_service
from compoworld.synth.naming import RESERVED_ATTRIBUTES, identifier, unique_column


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _doc(paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Edge", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _crud(plural: str, schema: str, key: str = "itemId") -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    body = {"content": {"application/json": {"schema": ref}}}
    return {
        f"/{plural}": {
            "get": {"operationId": f"list_{plural}", "responses": _ok({"type": "array", "items": ref})},
            "post": {"operationId": f"create_{plural}", "requestBody": body, "responses": _ok(ref)},
        },
        f"/{plural}/{{{key}}}": {
            "get": {"operationId": f"get_{plural}", "parameters": [_path_param(key)], "responses": _ok(ref)}
        },
    }


def _build(tmp_path: Path, doc: dict[str, Any], name: str) -> Path:
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps(doc))
    result = build_service(spec, tmp_path / "out", name)  # raises BuildError if it does not load
    assert not result.errors and not result.failed_checks, (result.errors, result.failed_checks)
    return tmp_path / "out" / name


def _table_columns(folder: Path) -> dict[str, list[str]]:
    engine = create_engine("sqlite://")
    with engine.begin() as conn:
        for statement in (folder / "schema.sql").read_text().split(";\n"):
            if statement.strip():
                conn.exec_driver_sql(statement)
    found = inspect(engine)
    return {t: [c["name"] for c in found.get_columns(t)] for t in found.get_table_names()}


def test_column_names_differing_only_in_case_are_distinct_columns(tmp_path: Path) -> None:
    # ``Id`` and ``Item_Id`` are arrays (no key), so the entity gets a generated key: neither
    # ``id`` nor ``item_id`` may then be a second column of that name in another case
    item = {
        "type": "object",
        "properties": {
            "Id": {"type": "array", "items": {"type": "string"}},
            "Item_Id": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string"},
        },
    }
    folder = _build(tmp_path, _doc(_crud("items", "Item", "ref"), {"Item": item}), "edge_case")
    entity = load_manifest(folder).entity("item")
    assert entity is not None
    names = [c.name for c in entity.columns]
    assert len({n.casefold() for n in names}) == len(names) == 4
    assert entity.pk.casefold() != "id"
    assert sorted(_table_columns(folder)["item"], key=str.casefold) == sorted(names, key=str.casefold)
    assert unique_column("Name", {"name"}) == "Name_2"


def test_a_field_named_like_an_attribute_every_model_class_has_is_a_typed_column(tmp_path: Path) -> None:
    item = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "register": {"type": "string"},
            "mro": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    folder = _build(tmp_path, _doc(_crud("items", "Item"), {"Item": item}), "edge_attrs")
    columns = _table_columns(folder)["item"]
    assert {"register_", "mro_", "tags"} <= set(columns)


def test_reserved_names_cover_every_public_attribute_of_a_model_class() -> None:
    metaclass = type(SQLModel)
    public = {a for a in (*dir(SQLModel), *dir(metaclass)) if not a.startswith("_")}
    assert public <= RESERVED_ATTRIBUTES, sorted(public - RESERVED_ATTRIBUTES)
    assert identifier("register") == "register_"


def test_a_key_beside_a_reference_is_not_overwritten_by_the_referenced_row(tmp_path: Path) -> None:
    # ``/id_for/{publication_slug}`` answers {publication_slug, publication_id}: the key sits beside
    # a reference to a publication; copying the publication's slug into it made keys collide
    publication = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "slug": {"type": "string"}},
    }
    id_for = {
        "type": "object",
        "properties": {"publication_slug": {"type": "string"}, "publication_id": {"type": "string"}},
    }
    paths = _crud("publications", "Publication", "publicationId")
    paths["/id_for/{publication_slug}"] = {
        "get": {
            "operationId": "get_id_for",
            "parameters": [_path_param("publication_slug")],
            "responses": _ok({"$ref": "#/components/schemas/IdFor"}),
        }
    }
    folder = _build(tmp_path, _doc(paths, {"Publication": publication, "IdFor": id_for}), "edge_keys")
    manifest = load_manifest(folder)
    entity = next(e for e in manifest.entities if e.pk == "publication_slug")
    assert entity.column("publication_id").ref == "publication"  # type: ignore[union-attr]
    seed = json.loads((folder / "seed.json").read_text())
    keys = [row["publication_slug"] for row in seed[entity.table]]
    assert len(keys) > 1 and len(set(keys)) == len(keys)


def test_a_path_naming_one_parameter_twice_is_routed_and_verified(tmp_path: Path) -> None:
    assert route_path("/r/System.{location}/f/{location}/{x}") == "/r/System.{location}/f/{location__2}/{x}"
    assert route_path("/a/{b}/{c}") == "/a/{b}/{c}"
    item = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    path = "/groups/System.{location}/locations/{location}/items/{itemId}"
    paths = {
        path: {
            "get": {
                "operationId": "get_item",
                "parameters": [_path_param("location"), _path_param("itemId")],
                "responses": _ok({"$ref": "#/components/schemas/Item"}),
            }
        }
    }
    folder = _build(tmp_path, _doc(paths, {"Item": item}), "edge_paths")
    tool = load_manifest(folder).tool("get_item")
    assert tool is not None and tool.path == path
