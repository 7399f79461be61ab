"""Schemathesis over every starter service's own ``/openapi.json`` and over the orchestrator's.

Each operation gets schema-valid (positive) and schema-violating (negative) requests, in process
over ASGI, and every response goes through schemathesis' checks:

- ``not_a_server_error``: no 5xx;
- ``status_code_conformance``: the status is one the operation documents;
- ``content_type_conformance`` and ``response_schema_conformance``: the body is the documented
  media type and fits the documented schema of that status;
- ``positive_data_acceptance``: a schema-valid request is not refused (400/422);
- ``negative_data_rejection``: a schema-violating request is refused (4xx).

A service is fuzzed with an episode forked the way the orchestrator forks it (its id a fixed
``X-Episode-Id``); the orchestrator (the embedded app over the test library) with the admin token,
over random episode ids and over one opened episode.

Bounded: ``MAX_EXAMPLES`` per operation and mode (derandomized, so CI sees the same cases every
run). ``CW_SCHEMATHESIS_EXAMPLES=50`` runs a longer, random run. The figures and the findings
that are by design are in docs/reliability.md ("Schemathesis").
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import checks as st_checks
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.generation import GenerationMode

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings, bundled_library

EPISODE = "schemathesis-episode"
TOKEN = "schemathesis-token"
MAX_EXAMPLES = int(os.environ.get("CW_SCHEMATHESIS_EXAMPLES", "2"))
RANDOM = "CW_SCHEMATHESIS_EXAMPLES" in os.environ  # the default run is derandomized (same cases)
CHECKS = [
    st_checks.not_a_server_error,
    st_checks.status_code_conformance,
    st_checks.content_type_conformance,
    st_checks.response_schema_conformance,
    st_checks.positive_data_acceptance,
    st_checks.negative_data_rejection,
]
# Schema-valid requests refused by design, each for a written reason (docs/reliability.md): the
# value is well formed but names something that does not exist here, and answering anyway would
# quietly answer another question (compoworld.runtime.listquery). Matched on the refusal's message.
BY_DESIGN: dict[str, str] = {
    "names no sortable field": "a sort value naming no field of the entity",
    "is no row of this list": "a paging cursor that no page of this list issued",
    "changes nothing": "an update that gives none of the fields it could change",
    "unknown service": "an inline task naming a service this orchestrator does not mount",
}
SERVICES = sorted(p.name for p in bundled_library().iterdir() if (p / "manifest.json").is_file())


@dataclass
class Finding:
    check: str
    operation: str
    mode: str
    status: int
    title: str
    request: str

    def line(self) -> str:
        return (
            f"{self.check} {self.operation} ({self.mode}) -> {self.status}: {self.title}\n    {self.request}"
        )


@dataclass
class Run:
    """What one schema's fuzzing saw."""

    cases: int = 0
    operations: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    by_design: Counter[str] = field(default_factory=Counter)

    def summary(self, label: str) -> str:
        by_check = Counter(f.check for f in self.findings)
        return (
            f"schemathesis {label}: {self.cases} cases over {self.operations} operations, "
            f"{len(self.findings)} findings {dict(by_check)}, by design {dict(self.by_design)}, "
            f"statuses {dict(sorted(self.statuses.items()))}"
        )


def _check_name(failure: Failure) -> str:
    return type(failure).__name__


def _by_design(failure: Failure, text: str) -> str | None:
    if _check_name(failure) != "RejectedPositiveData":
        return None
    return next((phrase for phrase in BY_DESIGN if phrase in text), None)


_CONSTRAINTS = ("pattern", "format", "enum", "const", "minLength", "maxLength", "type")


def _negatable(raw: dict[str, Any], fixed: set[str]) -> bool:
    """Whether a schema-violating request exists for this operation (as raw OpenAPI): a body, a
    query or header parameter, or a path parameter more than any text (every path is text, so a
    plain string one cannot be violated and schemathesis would try ~1,000 draws to learn it)."""
    if "requestBody" in raw:
        return True
    for param in raw.get("parameters") or []:
        if param.get("name") in fixed:
            continue
        if param.get("in") != "path":
            return True
        schema = param.get("schema") or {}
        if any(k in schema for k in _CONSTRAINTS if k != "type") or schema.get("type") not in (
            None,
            "string",
        ):
            return True
    return False


def fuzz(
    schema: schemathesis.BaseSchema,
    headers: dict[str, str],
    *,
    examples: int = MAX_EXAMPLES,
    path_parameters: dict[str, Any] | None = None,
    only: str | None = None,
    run: Run | None = None,
) -> Run:
    """Positive and negative cases for every operation (those under ``only``, when given) with
    ``headers`` fixed (and ``path_parameters`` where an operation has them)."""
    out = run if run is not None else Run()
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # an unreadable operation fails the test
        if only is not None and not operation.path.startswith(only):
            continue
        names = {p.name for p in operation.path_parameters}
        fixed = {k: v for k, v in (path_parameters or {}).items() if k in names} or None
        out.operations += 1
        raw = schema.raw_schema["paths"][operation.path][operation.method.lower()]
        modes = [GenerationMode.POSITIVE]
        if _negatable(raw, set(headers) | set(fixed or {})):
            modes.append(GenerationMode.NEGATIVE)
        for mode in modes:
            strategy = operation.as_strategy(generation_mode=mode, headers=headers, path_parameters=fixed)

            @given(case=strategy)
            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                derandomize=not RANDOM,
                suppress_health_check=list(HealthCheck),
            )
            def one(case: schemathesis.Case) -> None:
                response = case.call()
                out.cases += 1
                out.statuses[response.status_code] += 1
                try:
                    case.validate_response(response, checks=CHECKS)
                except FailureGroup as group:
                    for failure in group.exceptions:
                        reason = _by_design(failure, response.text)
                        if reason is not None:
                            out.by_design[reason] += 1
                            continue
                        out.findings.append(
                            Finding(
                                _check_name(failure),
                                case.operation.label,
                                case.meta.generation.mode.value if case.meta else "?",
                                response.status_code,
                                f"{failure.title}: {failure.message}"[:300].replace("\n", " / ")
                                + f" | {response.text[:200]}",
                                case.as_curl_command()[:400],
                            )
                        )

            try:
                one()
            except Unsatisfiable:  # nothing to negate (an operation without parameters or body)
                continue
    return out


def _report(label: str, run: Run) -> list[str]:
    print(run.summary(label))
    lines = [f.line() for f in run.findings]
    for line in lines[:40]:
        print("  " + line)
    return lines


@pytest.mark.parametrize("service", SERVICES)
def test_a_starter_service_answers_as_its_openapi_says(service: str) -> None:
    cfg = Settings.defaults(admin_token=TOKEN)
    runtime = ServiceRuntime.from_folder(bundled_library() / service, cfg)
    runtime.fork(EPISODE)
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_service_app(runtime, cfg))
    run = fuzz(schema, {"X-Episode-Id": EPISODE})
    findings = _report(service, run)
    assert run.operations >= 3
    assert run.cases >= run.operations, run.summary(service)
    assert findings == []


@pytest.fixture(scope="module")
def orchestrator_app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from compoworld.cli import build_embedded_app
    from orchestrator.tasksource import write_tasks
    from tests.orchestrator_fixture import task_create, write_library

    root: Path = tmp_path_factory.mktemp("schemathesis-orchestrator")
    write_library(root / "lib")
    write_tasks(root / "tasks.jsonl", [task_create()])
    app, _ = build_embedded_app(root / "lib", Settings(admin_token=TOKEN), root / "tasks.jsonl")
    return app


def test_the_orchestrator_answers_as_its_openapi_says(orchestrator_app: Any) -> None:
    from starlette.testclient import TestClient

    schema = schemathesis.openapi.from_asgi("/openapi.json", orchestrator_app)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    run = fuzz(schema, auth)  # every route, unknown episode ids
    with TestClient(orchestrator_app) as client:  # then the episode routes on a real episode
        opened = client.post("/episodes", json={"task_id": "t-create"})
        assert opened.status_code == 201, opened.text
        eid = opened.json()["episode_id"]
        fuzz(schema, auth, path_parameters={"episode_id": eid}, only="/episodes/", run=run)
    findings = _report("orchestrator", run)
    assert run.operations >= 14
    assert findings == []
