"""ToolResult: the one typed outcome of a tool call, its envelope, and the dispatcher that builds it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from compoworld.contracts import ERROR_STATUS, ToolResult
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.service import SimulatedCall
from compoworld.settings import Settings
from tests.runtime_fixture import write_crm_service


def test_a_success_renders_the_uniform_envelope_and_reads_back_equal() -> None:
    result = ToolResult.ok({"id": 7, "tags": ["a"]}, "implemented", 201)
    assert result.envelope() == {"success": True, "data": {"id": 7, "tags": ["a"]}, "backend": "implemented"}
    assert ToolResult.from_envelope(result.envelope(), 201) == result
    assert result.has_body and result.status == 201


def test_a_failure_carries_code_message_and_the_status_of_its_code() -> None:
    result = ToolResult.fail("not_found", "contact 'x' not found", "implemented")
    assert result.envelope() == {
        "success": False,
        "error": {"code": "not_found", "message": "contact 'x' not found"},
        "backend": "implemented",
    }
    assert result.status == ERROR_STATUS["not_found"] == 404
    assert ToolResult.fail("something_new", "?").status == 400
    assert ToolResult.fail("not_found", "gone", status=410).status == 410
    assert ToolResult.from_envelope(result.envelope()) == result


def test_a_result_without_backend_leaves_it_out_of_the_envelope() -> None:
    assert ToolResult.ok({"services": []}).envelope() == {"success": True, "data": {"services": []}}


def test_a_no_content_success_has_no_body() -> None:
    assert not ToolResult.ok(None, "implemented", 204).has_body
    assert ToolResult.fail("conflict", "x", status=204).has_body  # only successes go bodiless


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        "ok",
        {"data": 1},
        {"success": "yes"},
        {"success": False},
        {"success": True, "backend": "magic"},
    ],
)
def test_anything_but_an_envelope_is_refused(value: Any) -> None:
    with pytest.raises(ValueError):
        ToolResult.from_envelope(value)


@pytest.fixture
def crm(tmp_path: Path) -> ServiceRuntime:
    runtime = ServiceRuntime.from_folder(write_crm_service(tmp_path), Settings())
    runtime.fork("e1")
    return runtime


def test_an_implemented_call_is_answered_synchronously_with_its_success_status(crm: ServiceRuntime) -> None:
    created = crm.dispatch("e1", "createContact", {"name": "Ann"})
    assert isinstance(created, ToolResult) and created.success and created.status == 201
    read = crm.dispatch("e1", "getContact", {"id": created.data["id"]})
    assert isinstance(read, ToolResult) and read.status == 200 and read.data["name"] == "Ann"


def test_a_simulated_call_is_validated_once_and_then_awaited(crm: ServiceRuntime) -> None:
    bound = crm.tools["sendEmail"]
    checked: list[Any] = []
    validator = bound.validator

    class Counting:
        def __call__(self, args: Any) -> None:
            checked.append(args)
            validator(args)

    bound.validator = Counting()  # type: ignore[assignment]
    pending = crm.dispatch("e1", "sendEmail", {"to": "ann@example.com", "subject": "Hi"})
    assert isinstance(pending, SimulatedCall)
    result = asyncio.run(pending.run())
    assert result.success and result.backend == "simulated" and len(checked) == 1
    assert [e["tool"] for e in crm.write_log("e1")] == ["sendEmail"]


def test_a_refused_simulated_call_never_reaches_the_world_model(crm: ServiceRuntime) -> None:
    crm.fork("e1")
    refused = crm.dispatch("e1", "sendEmail", {"subject": 5})
    assert isinstance(refused, ToolResult) and refused.code == "invalid_arguments"
    assert refused.backend == "simulated" and crm.write_log("e1") == []


def test_the_contracts_module_is_clean_under_mypy_strict() -> None:
    """Issue 9: the seam every layer shares type-checks under ``--strict`` (mypy's API, in process)."""
    api = pytest.importorskip("mypy.api", reason="mypy is a dev extra")
    module = Path(__file__).resolve().parents[1] / "compoworld" / "contracts.py"
    out, err, status = api.run(["--strict", "--follow-imports=silent", "--no-incremental", str(module)])
    assert status == 0, out + err
