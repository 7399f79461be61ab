"""Files the build benches share: corpus documents copied into a folder, a built library's files by hash."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from compoworld.corpus import CorpusDoc
from compoworld.synth.build import STATE_DIR

__all__ = ["FINGERPRINT", "copy_documents", "library_files"]

#: The generator fingerprint in ``build.json`` and ``index.json``: it hashes the code, so it differs
#: between two trees that build the same bytes otherwise.
FINGERPRINT = re.compile(rb'("generator": "|"identity": "[0-9a-f]{64}:)[0-9a-f]{16}"')


def copy_documents(docs: Iterable[CorpusDoc], out: Path) -> Path:
    """Copy ``docs`` under ``out`` at their corpus paths (the paths name the services), return ``out``."""
    for doc in docs:
        target = out / doc.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(doc.path, target)
    return out


def library_files(library: Path, *, blank_fingerprint: bool = False) -> dict[str, str]:
    """sha256 of every file of a built library by its path, the build's own state (``.build``) left out."""
    files: dict[str, str] = {}
    for path in sorted(library.rglob("*")):
        if path.is_file() and STATE_DIR not in path.relative_to(library).parts:
            data = path.read_bytes()
            files[path.relative_to(library).as_posix()] = hashlib.sha256(
                FINGERPRINT.sub(rb"\1", data) if blank_fingerprint else data
            ).hexdigest()
    return files
