"""``manifest.json`` writes each repeated subschema once and reads it back whole.

Spec documents whose ``$ref`` graphs nest (Microsoft Graph) repeat the same expanded subschema in
hundreds of tools; the shared table keeps a manifest small on disk and in memory without changing
what any reader of the model sees.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from compoworld.canonical_json import dumps_canonical
from compoworld.catalog import read_manifest
from compoworld.errors import LibraryError
from compoworld.manifest import load_manifest, parse_manifest
from compoworld.runtime.service import ServiceRuntime
from compoworld.settings import Settings, bundled_library
from compoworld.shared_schemas import SHARED_KEY, share, unshare


def _person(depth: int) -> dict[str, Any]:
    """A nested object schema of a few KB, as an expanded ``$ref`` chain gives."""
    schema: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}}
    for level in range(depth):
        schema = {
            "type": "object",
            "description": f"level {level} of a nested record with a long enough description",
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "displayName": {"type": "string", "maxLength": 255},
                "child": schema,
                "createdDateTime": {"type": "string", "format": "date-time"},
            },
        }
    return schema


def _doc(tools: int = 12) -> dict[str, Any]:
    person = _person(6)
    return {
        "name": "svc",
        "tools": [
            {
                "name": f"tool{i}",
                "input_schema": {"type": "object", "properties": {"owner": copy.deepcopy(person)}},
                "output_schema": {"type": "array", "items": copy.deepcopy(person)} if i % 2 else {},
            }
            for i in range(tools)
        ],
    }


def test_repeated_subschemas_are_written_once_and_read_back_equal() -> None:
    doc = _doc()
    shared = share(copy.deepcopy(doc))
    plain_text, shared_text = dumps_canonical(doc), dumps_canonical(shared)
    assert len(shared_text) * 4 < len(plain_text)
    assert shared[SHARED_KEY]
    back = unshare(json.loads(shared_text))
    assert back == doc
    owners = [t["input_schema"]["properties"]["owner"] for t in back["tools"]]
    assert all(o is owners[0] for o in owners)  # one object in memory for every occurrence
    assert dumps_canonical(share(copy.deepcopy(back))) == shared_text  # a re-render writes the same bytes


def test_the_written_bytes_depend_on_the_content_only() -> None:
    first, second = share(_doc()), share(json.loads(json.dumps(_doc())))
    assert dumps_canonical(first) == dumps_canonical(second)
    other = _doc()
    other["tools"][0]["input_schema"]["properties"]["owner"]["description"] = "another"
    assert set(share(other)[SHARED_KEY]) != set(first[SHARED_KEY])


def test_small_or_unrepeated_objects_stay_where_they_are() -> None:
    doc = {
        "name": "svc",
        "tools": [{"name": "a", "input_schema": _person(6)}, {"name": "b", "input_schema": {}}],
    }
    assert share(copy.deepcopy(doc)) == doc
    small = {"name": "svc", "tools": [{"name": n, "input_schema": {"type": "string"}} for n in "abc"]}
    assert share(copy.deepcopy(small)) == small


def test_a_document_that_spells_the_marker_itself_is_written_as_it_is() -> None:
    doc = _doc()
    doc["tools"][0]["input_schema"]["properties"]["owner"]["example"] = {SHARED_KEY: "not a reference"}
    written = share(copy.deepcopy(doc))
    assert written == doc and SHARED_KEY not in written
    assert unshare(json.loads(dumps_canonical(written))) == doc


def test_a_broken_table_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not hold"):
        unshare({"tools": [{SHARED_KEY: "feedbeef"}], SHARED_KEY: {}})
    with pytest.raises(ValueError, match="refers to itself"):
        unshare({"tools": [{SHARED_KEY: "a"}], SHARED_KEY: {"a": {"x": {SHARED_KEY: "a"}}}})
    folder = tmp_path / "crm"
    folder.mkdir()
    text = (bundled_library() / "crm" / "manifest.json").read_text()
    doc = json.loads(text)
    assert doc.get(SHARED_KEY), "the starter's crm manifest shares subschemas"
    doc[SHARED_KEY].pop(sorted(doc[SHARED_KEY])[0])
    (folder / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(
        LibraryError, match=r"crm/manifest.json is not a valid service manifest.*does not hold"
    ):
        read_manifest(folder)


def test_a_starter_service_reads_the_same_from_its_shared_manifest(tmp_path: Path) -> None:
    """The committed manifest expanded by hand (no table) and the shared one give the same model
    and the same served tool list."""
    source = bundled_library() / "crm"
    plain = tmp_path / "crm"
    plain.mkdir()
    for item in source.iterdir():
        if item.is_file():
            (plain / item.name).write_bytes(item.read_bytes())
    expanded = unshare(json.loads((source / "manifest.json").read_text()))
    (plain / "manifest.json").write_text(json.dumps(expanded))
    assert SHARED_KEY not in (plain / "manifest.json").read_text()
    assert load_manifest(plain) == load_manifest(source)
    assert parse_manifest((source / "manifest.json").read_bytes()) == load_manifest(plain)
    shown = [ServiceRuntime.from_folder(f, Settings()).tool_schemas() for f in (source, plain)]
    assert shown[0] == shown[1]
