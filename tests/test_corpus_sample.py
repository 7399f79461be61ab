"""Building an arbitrary sample of mid-size corpus documents (slow; needs the npm corpus)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from compoworld.corpus import corpus_root, sample_corpus
from compoworld.errors import LibraryError
from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.build import build_library
from compoworld.synth.verify import probe_server_errors

pytestmark = pytest.mark.slow


def test_forty_mid_size_documents_build_and_never_answer_5xx(tmp_path: Path) -> None:
    try:
        corpus_root()
    except LibraryError as exc:
        pytest.skip(str(exc))
    docs = sample_corpus(40, seed=1)
    report = build_library([d.path for d in docs], tmp_path, progress=False)
    assert len(report.services) / len(docs) >= 0.9, report.failures
    bad = [
        b
        for s in report.services
        for b in asyncio.run(probe_server_errors(ServiceRuntime.from_folder(Path(s.folder), Settings())))
    ]
    assert bad == []
