"""Schemathesis over a starter service's own ``/openapi.json`` (real parameters and bodies): no
schema-generated request, valid or not, makes the service answer a 5xx.

Bounded: a few examples per operation (``MAX_EXAMPLES``) on one small starter service, in process
over ASGI, with the episode forked the way the orchestrator forks it. Raise ``CW_SCHEMATHESIS_EXAMPLES``
for a longer run.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings, bundled_library

SERVICE = "govuk_pay"  # 10 tools, REST paths with path, query and body parameters
EPISODE = "schemathesis-episode"
MAX_EXAMPLES = int(os.environ.get("CW_SCHEMATHESIS_EXAMPLES", "12"))


@pytest.fixture(scope="module")
def service_schema() -> schemathesis.BaseSchema:
    cfg = Settings.defaults(admin_token="schemathesis-token")
    runtime = ServiceRuntime.from_folder(bundled_library() / SERVICE, cfg)
    runtime.fork(EPISODE)
    return schemathesis.openapi.from_asgi("/openapi.json", create_service_app(runtime, cfg))


def test_no_generated_request_makes_the_service_answer_a_server_error(
    service_schema: schemathesis.BaseSchema,
) -> None:
    seen: dict[str, int] = {}
    server_errors: list[str] = []
    operations = [result.ok() for result in service_schema.get_all_operations()]
    assert len(operations) >= 5

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        def run(case: schemathesis.Case) -> None:
            response = case.call(headers={"X-Episode-Id": EPISODE})
            seen[case.operation.label] = seen.get(case.operation.label, 0) + 1
            if response.status_code >= 500:
                server_errors.append(f"{case.method} {case.formatted_path}: {response.text[:300]}")

        run()
    print(
        f"schemathesis {SERVICE}: {sum(seen.values())} cases over {len(operations)} operations, {len(server_errors)} server errors"
    )
    assert server_errors == []
    assert sum(seen.values()) >= len(operations) * 2, seen
