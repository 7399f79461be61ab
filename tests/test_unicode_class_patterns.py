"""Patterns with Unicode property classes (``\\p{L}``, AWS's ``[\\p{L}\\p{M}\\p{S}\\p{N}\\p{P}]+``)
are read in their own dialect everywhere a value is checked: the value generator, the world
model's answer check and the verifier's seed arguments. Python's ``re`` refuses ``\\p`` ("bad
escape"), which crashed the verifier and left tools simulated for no reason of their own.
Real synthesis, verification and SQLite on a corpus document.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import regex

from compoworld.corpus import corpus_root
from compoworld.errors import LibraryError
from compoworld.manifest import load_manifest
from compoworld.runtime.generate import generate_value
from compoworld.synth.build import build_service

_NAME = r"^[\p{L}\p{M}\p{S}\p{N}\p{P}]+$"


def test_the_generator_draws_values_of_a_unicode_class_pattern() -> None:
    rng = random.Random(7)
    for _ in range(20):
        value = generate_value({"type": "string", "pattern": _NAME, "maxLength": 30}, rng, "UserName")
        assert regex.fullmatch(_NAME, value), value


def test_the_verifier_checks_tools_whose_keys_have_a_unicode_class_pattern(tmp_path: Path) -> None:
    """AppStream (corpus): ``EnableUser``/``DisableUser`` take a ``UserName`` of pattern
    ``[\\p{L}\\p{M}\\p{S}\\p{N}\\p{P}]+``; their check crashed on it ("bad escape \\p")."""
    try:
        spec = corpus_root() / "amazonaws.com" / "appstream.json"
    except LibraryError as exc:
        pytest.skip(str(exc))
    manifest = load_manifest(Path(build_service(spec, tmp_path).folder))
    crashed = {t.name: t.simulated_reason for t in manifest.tools if "crashed" in (t.simulated_reason or "")}
    assert not crashed
    assert {t.name for t in manifest.tools} >= {"EnableUser", "DisableUser"}
