"""The verifier's episodes: the admin fork route answers once, later forks call the runtime, a REST
twin is forked only for a REST call, a probe with bad arguments forks only if the service gets as far
as the episode, and no episode outlives the check of its tool."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings, bundled_library
from compoworld.synth import verify


def test_a_verification_forks_what_it_calls_in_and_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = ServiceRuntime.from_folder(bundled_library() / "crm", Settings.defaults())
    paths: list[str] = []
    create = verify.create_service_app

    def recording(rt: ServiceRuntime, settings: Settings) -> Any:
        app = create(rt, settings)

        async def spy(scope: dict[str, Any], receive: Any, send: Any) -> None:
            paths.append(f"{scope['method']} {scope['path']}")
            await app(scope, receive, send)

        return spy

    monkeypatch.setattr(verify, "create_service_app", recording)
    forked: list[str] = []
    fork = runtime.fork
    monkeypatch.setattr(runtime, "fork", lambda eid, *a, **k: forked.append(eid) or fork(eid, *a, **k))
    held: list[int] = []
    release = verify.Twin.release
    monkeypatch.setattr(
        verify.Twin, "release", lambda self: (release(self), held.append(len(runtime.store.episodes)))
    )
    report = asyncio.run(verify.verify_runtime(runtime))
    assert report.passed
    assert sum(1 for p in paths if p.endswith("/admin/episodes")) == 1
    rest_episodes = {e.removesuffix("-rest") for e in forked if e.endswith("-rest")}
    assert rest_episodes and rest_episodes <= {e for e in forked if not e.endswith("-rest")}
    assert held and set(held) == {0}  # every tool's episodes were deleted once it was checked


def _twin(runtime: ServiceRuntime) -> tuple[verify.Twin, list[str]]:
    from compoworld.runtime import create_service_app
    from compoworld.synth.asgi_client import AsgiClient

    app = create_service_app(runtime, Settings.defaults(admin_token="t"))
    forked: list[str] = []
    fork = runtime.fork
    runtime.fork = lambda eid, *a, **k: forked.append(eid) or fork(eid, *a, **k)  # type: ignore[method-assign]
    return verify.Twin(AsgiClient(app, "http://verify"), "t", set(), runtime), forked


def test_a_refused_probe_forks_nothing_and_answers_as_a_forked_call_does() -> None:
    library = bundled_library() / "crm"
    runtime = ServiceRuntime.from_folder(library, Settings.defaults())
    twin, forked = _twin(runtime)
    tool = next(t for t in runtime.manifest.tools if t.operation == "create")
    probe = asyncio.run(twin.refused("probe-1", tool.name, {"__not_a_field__": 1}))
    assert not probe.success and probe.code == "invalid_arguments"
    assert forked == [] and not runtime.has_episode("probe-1")
    other, _ = _twin(ServiceRuntime.from_folder(library, Settings.defaults()))
    assert asyncio.run(other.uniform("probe-1", tool.name, {"__not_a_field__": 1})) == probe


def test_a_probe_the_service_accepts_runs_on_a_fresh_fork() -> None:
    library = bundled_library() / "crm"
    runtime = ServiceRuntime.from_folder(library, Settings.defaults())
    twin, forked = _twin(runtime)
    tool = next(t for t in runtime.manifest.tools if t.operation == "list")
    accepted = asyncio.run(twin.refused("probe-2", tool.name, {}))
    assert accepted.success and forked == ["probe-2"]
    other, _ = _twin(ServiceRuntime.from_folder(library, Settings.defaults()))
    assert asyncio.run(other.uniform("probe-2", tool.name, {})) == accepted
