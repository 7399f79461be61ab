"""Reading a free-text answer by type: numbers, dates, codes and words as a person reads them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from orchestrator.models import CriterionSpec
from orchestrator.rubric import RuntimeStateReader, evaluate, is_dump, states


@pytest.mark.parametrize(
    ("value", "answer", "kind", "code_type", "expected"),
    [
        ("de", "Customer added.", "code", "language", False),
        ("de", "The customer's language is German.", "code", "language", True),
        ("de", "language: de", "code", "language", True),
        ("pt-BR", "They write in Portuguese (Brazil).", "code", "language", True),
        ("DE", "The company is based in Germany.", "code", "country", True),
        ("EUR", "It was paid in euro.", "code", "currency", True),
        ("EUR", "It was paid in US dollars.", "code", "currency", False),
        ("2025-05-01", "Due 2025-05-01T00:00:00Z.", "date", None, True),
        ("2025-05-01", "Due on May 1st, 2025.", "date", None, True),
        ("2025-05-01", "Due on 1 May 2025.", "date", None, True),
        ("2025-05-01", "Due on 2025-05-02.", "date", None, False),
        ("2025-10-02T17:45:00Z", "2 October 2025 at 5:45 pm UTC", "datetime", None, True),
        ("2025-10-02T17:45:00Z", "2025-10-02T19:45:00+02:00", "datetime", None, True),
        ("2025-10-02T17:45:00Z", "2025-10-02 17:44", "datetime", None, False),
        (1234.5, "The total is $1,234.50.", "number", None, True),
        (1234.5, "The total is about 1235.", "number", None, False),
        (1234.567, "1234.57", "number", None, True),
        (3, "There are three of them.", "number", None, True),
        (3, "3.0 invoices", "number", None, True),
        (3, "13 invoices", "number", None, False),
        (1116, "Invoice NUM-1116.", "number", None, False),
        ("partially_paid", "It is partially paid.", "text", None, True),
        ("Ada Chen", "it is  ADA   chen", "text", None, True),
        ("Ada", "Adam signed it", "text", None, False),
        ("ada.chen@example.com", "Write to ADA.CHEN@example.com", "text", None, True),
        ("+15551234567", "Call +1 (555) 123-4567.", "text", None, True),
        (True, "Yes, it was escalated.", "bool", None, True),
        (True, "Yes or no, I cannot tell.", "bool", None, False),
    ],
)
def test_an_answer_states_a_value_by_what_it_means(
    value: Any, answer: str, kind: str, code_type: str | None, expected: bool
) -> None:
    assert states(answer, value, kind, code_type) is expected  # type: ignore[arg-type]


def _grade(params: dict[str, Any], answer: str) -> tuple[bool, str]:
    spec = CriterionSpec(id="c0", kind="answer_value", label="no_op_fail", params=params)
    verdict = asyncio.run(evaluate([spec], RuntimeStateReader({}, None), answer))[0]
    return verdict.passed, verdict.detail


def test_a_dump_of_every_value_states_nothing() -> None:
    record = {"id": "inv_000004", "amount": 211.75, "balance": 90.0, "tax": 12.5, "total": 224.25}
    record |= {f"field_{i}": i * 3.5 for i in range(10)}
    dump = json.dumps(record)
    assert is_dump(dump, asked=1)
    passed, detail = _grade({"value": 211.75, "read_as": "number"}, dump)
    assert not passed and "far more values" in detail
    assert _grade({"value": 211.75, "read_as": "number"}, "The invoice amount is $211.75.")[0]


def test_an_answer_that_also_states_a_rival_is_hedging() -> None:
    params = {"value": 211.75, "read_as": "number", "rivals": [148.5, 211.75], "what": "the amount"}
    assert _grade(params, "The amount is 211.75.")[0]
    passed, detail = _grade(params, "Either 211.75 or 148.50, I am not sure.")
    assert not passed and "148.5" in detail


def test_counting_values_stops_once_past_the_limit_and_agrees_below_it() -> None:
    from orchestrator.rubric.answers import value_tokens

    dump = json.dumps([{"id": i, "amount": i * 1.5, "email": f"p{i}@example.com"} for i in range(2000)])
    full = value_tokens(dump)
    assert full >= 2000 * 3
    assert value_tokens(dump, limit=10) == 11
    assert value_tokens("Done. 42; 17 and three", limit=10) == value_tokens("Done. 42; 17 and three") == 3
    assert is_dump(dump, asked=1) and not is_dump("Done. 42", asked=1)
