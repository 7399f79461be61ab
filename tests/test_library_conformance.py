"""Every service of the committed library passes the conformance checker, renders cleanly, and serves real REST.

Parametrised over ``generated_services/*`` (STYLE #10): adding a service adds its checks.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings, bundled_library
from compoworld.synth.build import check_rendered
from compoworld.synth.verify import probe_server_errors, verify_runtime

LIBRARY = bundled_library()
SERVICES = sorted(p.parent.name for p in LIBRARY.glob("*/manifest.json"))


def test_the_starter_library_is_big_enough_and_mostly_implemented() -> None:
    assert 12 <= len(SERVICES) <= 20
    tools = [t for s in SERVICES for t in json.loads((LIBRARY / s / "manifest.json").read_text())["tools"]]
    implemented = sum(1 for t in tools if t["backend"] == "implemented")
    assert implemented / len(tools) >= 0.8, f"{implemented}/{len(tools)} implemented"


@pytest.mark.parametrize("service", SERVICES)
def test_service_passes_conformance(service: str) -> None:
    first = ServiceRuntime.from_folder(LIBRARY / service, Settings())
    second = ServiceRuntime.from_folder(LIBRARY / service, Settings())
    report = asyncio.run(verify_runtime(first, second))
    assert report.deterministic
    assert report.passed, report.failed_tools
    committed = json.loads((LIBRARY / service / "verify.json").read_text())
    assert committed["seed_hash"] == report.seed_hash, "seed changed since verify.json was written: rebuild"


@pytest.mark.parametrize("service", SERVICES)
def test_service_folder_matches_a_fresh_render(service: str) -> None:
    assert check_rendered(LIBRARY / service) == []


@pytest.mark.parametrize("service", SERVICES)
def test_no_request_gets_a_5xx(service: str) -> None:
    """Every REST route and tool, called with garbage and with nothing, answers 2xx/4xx, never 5xx."""
    assert asyncio.run(probe_server_errors(ServiceRuntime.from_folder(LIBRARY / service, Settings()))) == []
