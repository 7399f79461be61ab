"""The bundled starter library is what ``compoworld starter`` writes today, byte for byte.

A change to synthesis, seeding or the conformance checker that moves any file of a starter service
(its manifest, seed, models, app or ``verify.json``) fails here until the library is re-rendered and
the change is reviewed in the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.errors import LibraryError
from compoworld.settings import bundled_library
from compoworld.starter import build_starter


def test_the_starter_re_renders_byte_for_byte(tmp_path: Path) -> None:
    try:
        build_starter(tmp_path / "lib", progress=False)
    except LibraryError as exc:  # the corpus is installed by scripts/setup.sh
        pytest.skip(str(exc))
    committed, rebuilt = bundled_library(), tmp_path / "lib"
    names = sorted(p.name for p in committed.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert names == sorted(p.name for p in rebuilt.iterdir() if p.is_dir() and not p.name.startswith("."))
    differ = [
        str(f.relative_to(committed))
        for name in names
        for f in sorted((committed / name).rglob("*"))
        if f.is_file() and f.read_bytes() != (rebuilt / f.relative_to(committed)).read_bytes()
    ]
    extra = [
        str(f.relative_to(rebuilt))
        for name in names
        for f in sorted((rebuilt / name).rglob("*"))
        if f.is_file() and not (committed / f.relative_to(rebuilt)).is_file()
    ]
    assert differ == [] and extra == []
