"""The canonical JSON writer gives json.dumps(sort_keys=True, indent=2, ensure_ascii=False)'s bytes,
whichever path writes them; its compact form, the text state hashes are taken over, json.dumps's
compact bytes."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from compoworld.canonical_json import dumps_canonical, dumps_compact
from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings, bundled_library


def _reference(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _outcome(write: Any, obj: Any) -> Any:
    """What ``write(obj)`` gives, or the error it raises (a lone surrogate has no UTF-8)."""
    try:
        return write(obj)
    except UnicodeEncodeError as exc:
        return repr(exc)


def _compact(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def test_every_json_file_of_the_starter_library_is_written_as_json_dumps_writes_it() -> None:
    files = sorted(bundled_library().glob("*/*.json"))
    assert len(files) > 50
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert dumps_canonical(data) == _reference(data), path


@pytest.mark.parametrize(
    "value",
    [
        {"b": [1, {"c": []}, {}], "a": None, "é": True, "E": False, "😀": "x"},
        [[], {}, [[]], [{}]],
        {"tiny": [1e-05, 9.999999999999999e-05, -1.5e-07, 5e-324], "zero": [0.0, -0.0]},
        {"odd": [float("nan"), float("inf"), -float("inf")]},
        {"big": [2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**40]},
        {1: "int keys", 2: "as json.dumps names them"},
        {"surrogate": "\ud800"},
        ("a", "tuple"),
        "every character: " + "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000),
    ],
)
def test_values_orjson_would_spell_otherwise_are_written_as_json_dumps_writes_them(value: Any) -> None:
    assert dumps_canonical(value) == _reference(value)
    assert _outcome(dumps_compact, value) == _outcome(_compact, value)


def test_floats_orjson_writes_are_spelled_as_repr_spells_them() -> None:
    rng = random.Random(5)
    floats = [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(20000)]
    floats += [round(rng.uniform(-1e6, 1e6), rng.randint(0, 9)) for _ in range(20000)]
    floats = [f for f in floats if math.isfinite(f) and (f == 0 or abs(f) >= 1e-4)]  # the orjson path
    assert len(floats) > 30000
    assert dumps_canonical(floats) == _reference(floats)
    assert dumps_compact(floats) == _compact(floats)


def test_a_rendered_manifest_round_trips(tmp_path: Path) -> None:
    manifest = json.loads((bundled_library() / "crm" / "manifest.json").read_text(encoding="utf-8"))
    assert json.loads(dumps_canonical(manifest)) == manifest


def test_the_state_dumps_of_the_starter_library_hash_as_json_dumps_writes_them() -> None:
    folders = sorted(p for p in bundled_library().iterdir() if (p / "manifest.json").exists())
    assert len(folders) > 10
    for folder in folders:
        runtime = ServiceRuntime.from_folder(folder, Settings.defaults())
        tables = runtime.dump(None)["tables"]
        assert dumps_compact(tables) == _compact(tables), folder.name


def test_a_value_json_dumps_writes_through_default_is_written_as_it_does() -> None:
    import datetime

    value = {"when": datetime.date(2026, 1, 15), "set": ("a", 1)}
    assert dumps_compact(value) == _compact(value)
