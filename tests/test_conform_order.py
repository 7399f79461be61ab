"""The strict conformance check: what it rejects, and reasons that do not depend on the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from compoworld.runtime.conform import StrictChecker, strict_errors

# a map whose values must be integers: jsonschema descends into the extra keys in set order
MAP = {
    "type": "object",
    "properties": {"id": {"type": "string"}},
    "additionalProperties": {"type": "integer"},
}
BODY = {"id": "x", **{f"key_{i:02d}": "not a number" for i in range(40)}}


def test_a_conforming_body_has_no_reasons_and_an_undeclared_key_is_one() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    assert strict_errors(schema, {"id": "a"}) == []
    reasons = strict_errors(schema, {"id": "a", "links": {}})
    assert len(reasons) == 1 and "links" in reasons[0] and reasons[0].startswith("(root)")
    assert strict_errors(schema, {}) == ["(root): 'id' is a required property"]


def test_the_first_reasons_are_in_location_order() -> None:
    reasons = StrictChecker(MAP).errors(BODY, limit=3)
    assert [r.split(":")[0] for r in reasons] == ["key_00", "key_01", "key_02"]


def test_reasons_are_the_same_under_every_hash_seed() -> None:
    script = (
        "import json, sys; from compoworld.runtime.conform import strict_errors;"
        f"print(json.dumps(strict_errors({MAP!r}, {BODY!r}, limit=3)))"
    )
    seen = set()
    for hash_seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        seen.add(out.stdout.strip())
    assert len(seen) == 1
    assert [r.split(":")[0] for r in json.loads(seen.pop())] == ["key_00", "key_01", "key_02"]
