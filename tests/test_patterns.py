"""Schema patterns in the dialects real documents use: matching, sampling, validation, verification."""

from __future__ import annotations

import asyncio
import random
import re

import pytest
import rstr

from compoworld.manifest import ColumnDef, EntityDef, ServiceManifest, ToolDef
from compoworld.patterns import compile_pattern, first_error, matches, sample, schema_validator
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.validate import ArgsValidator, ArgumentError
from compoworld.settings import Settings
from compoworld.synth.verify import verify_runtime
from compoworld.values import fit_string


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (r"^\p{L}+$", "Zoë", "Zoë1"),  # Unicode property: Python's re refuses it
        (r"^\p{Lu}\p{Ll}+$", "Émile", "émile"),
        (r"^([A-Za-z\-' ]|\p{IsLetter})*$", "O'Brien-Zoë", "R2D2"),  # Java spelling of a property
        (r"^\p{Punct}+$", "!?", "a"),  # Java POSIX class
        (r"^[\x{41}-\x{5A}]{2}$", "AB", "ab"),  # PCRE braced hex
        (r"/^[0-9]{5}$/i", "12345", "1234"),  # a JavaScript literal with its flags
        (r"/^sap[0-9]{2}$/i", "SAP42", "SAP4"),
        (r"^[\w-.]+$", "a-b.c", "a b"),  # a shorthand class next to a dash
        (r"^abc\z", "abc", "abcd"),
    ],
)
def test_patterns_of_every_dialect_match_what_they_mean(pattern: str, good: str, bad: str) -> None:
    assert compile_pattern(pattern) is not None
    assert matches(pattern, good) is True
    assert matches(pattern, bad) is False


def test_a_pattern_no_dialect_reads_gives_no_verdict_instead_of_raising() -> None:
    assert compile_pattern("([unclosed") is None
    assert matches("([unclosed", "anything") is None
    assert sample("([unclosed", random.Random(0)) is None


@pytest.mark.parametrize(
    "pattern", [r"^\p{L}{3,8}$", r"^[a-f0-9]{128}$", r"/^SAP[0-9]{9}$/i", r"^[\p{Lu}\d]{4}-\p{N}{2}$"]
)
def test_samples_match_their_pattern(pattern: str) -> None:
    for seed in range(5):
        value = sample(pattern, random.Random(seed))
        assert value is not None and matches(pattern, value), (pattern, value)


def test_sampling_a_plain_pattern_draws_what_rstr_draws() -> None:
    """The faster sampler must not change seed data built from patterns rstr already handled."""
    for pattern in (r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{4,12}$", r"[a-z]+@[a-z]+\.(com|org)", r"^\d{3}-\d{4}$"):
        for seed in range(3):
            assert sample(pattern, random.Random(seed)) == rstr.Rstr(random.Random(seed)).xeger(pattern)


def test_fit_string_honours_a_unicode_property_pattern() -> None:
    value = fit_string("12", {"type": "string", "pattern": r"^\p{L}+$"}, random.Random(3))
    assert re.fullmatch(r"[A-Za-z]+", value)


def test_the_argument_validator_enforces_unicode_patterns() -> None:
    validator = ArgsValidator(
        {"type": "object", "properties": {"city": {"type": "string", "pattern": r"^\p{L}[\p{L} ]*$"}}}
    )
    assert validator({"city": "Zürich"}) == {"city": "Zürich"}
    with pytest.raises(ArgumentError, match="city"):
        validator({"city": "Zürich 8001"})


def test_a_schema_that_is_itself_invalid_gives_no_verdict() -> None:
    validator = schema_validator({"type": "string", "minLength": "three"})
    assert validator is not None
    assert first_error(validator, "ab") is None


def _service(pattern: str) -> ServiceRuntime:
    entity = EntityDef(
        name="city",
        class_name="City",
        table="city",
        pk="id",
        pk_type="integer",
        columns=[
            ColumnDef(name="id", type="integer", primary_key=True, nullable=False),
            ColumnDef(name="name", type="string"),
        ],
    )
    row = {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "name": {"type": "string", "pattern": pattern}},
    }
    tool = ToolDef(
        name="getCity",
        kind="read",
        operation="read",
        backend="implemented",
        entity="city",
        path="/cities/{id}",
        method="GET",
        input_schema={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        output_schema=row,
        arg_locations={"id": "path"},
        pk_arg="id",
    )
    manifest = ServiceManifest(name="cities", entities=[entity], tools=[tool])
    return ServiceRuntime(manifest, {"city": [{"id": 1, "name": "Zoë"}]}, settings=Settings())


def test_the_verifier_checks_outputs_against_unicode_patterns_without_crashing() -> None:
    passing = asyncio.run(verify_runtime(_service(r"^\p{L}+$")))
    assert passing.passed, passing.failed_tools
    failing = asyncio.run(verify_runtime(_service(r"^\p{N}+$")))
    assert "getCity" in failing.failed_tools
    assert "does not match" in failing.failed_tools["getCity"]
