"""Settings are built once, at an entry point, and passed down; nothing deeper reads the environment.

An entry point is a module a person or a container starts: it defines a Typer app, runs under
``__main__`` or holds a CLI command (``compoworld.cli.BUILTIN_COMMANDS``), and each generated
service's ``app.py``. Every other module takes ``Settings``
as an argument; the runtime's constructors have no default to fall back on.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import httpx
import pytest

from compoworld.cli import BUILTIN_COMMANDS
from compoworld.runtime import ServiceRuntime, create_library_app, create_service_app, load_library
from compoworld.runtime.pool import ServicePool, load_library_skipping
from compoworld.settings import Settings
from tests.package_sources import ROOT, package_sources
from tests.runtime_fixture import write_crm_service

COMMAND_MODULES = {
    ROOT.joinpath(*target.split(":")[0].split(".")).with_suffix(".py") for target in BUILTIN_COMMANDS.values()
}


def _constructs_settings(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "Settings") or (
        isinstance(func, ast.Attribute) and func.attr == "Settings"
    )


def _is_entry_point(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Typer":
            return True
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "__name__"
        ):
            return True
    return False


def test_only_entry_point_modules_construct_settings() -> None:
    offenders: list[str] = []
    entry_points = 0
    for path in package_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [n.lineno for n in ast.walk(tree) if _constructs_settings(n)]
        if calls and path.name != "settings.py":
            if path in COMMAND_MODULES or _is_entry_point(tree):
                entry_points += 1
            else:
                offenders += [f"{path.relative_to(ROOT)}:{line}" for line in calls]
    assert offenders == [], "Settings() below an entry point: pass the entry point's settings down"
    assert entry_points >= 5  # the CLIs and the container entrypoint do build them


def test_the_check_catches_a_default_built_deep_in_the_stack() -> None:
    deep = ast.parse("def f(settings=None):\n    return settings or Settings()\n")
    assert not _is_entry_point(deep) and any(_constructs_settings(n) for n in ast.walk(deep))
    cli = ast.parse("import typer\napp = typer.Typer()\nsettings = Settings()\n")
    assert _is_entry_point(cli)


@pytest.mark.parametrize(
    "constructor",
    [
        ServiceRuntime.__init__,
        ServiceRuntime.from_folder,
        load_library,
        load_library_skipping,
        ServicePool.__init__,
        create_service_app,
        create_library_app,
    ],
)
def test_runtime_constructors_require_settings(constructor: object) -> None:
    parameter = inspect.signature(constructor).parameters["settings"]  # type: ignore[arg-type]
    assert parameter.default is inspect.Parameter.empty


def test_settings_read_the_environment_and_defaults_never_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPOWORLD_ADMIN_TOKEN", "from-env")
    monkeypatch.setenv("COMPOWORLD_MAX_PAYLOAD_BYTES", "10")
    assert (Settings().admin_token, Settings().max_payload_bytes) == ("from-env", 10)
    built_in = Settings.defaults(admin_token="given")
    assert isinstance(built_in, Settings)
    assert (built_in.admin_token, built_in.max_payload_bytes) == ("given", 256 * 1024)


async def test_a_service_obeys_the_settings_it_is_given_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPOWORLD_MAX_PAYLOAD_BYTES", "10")  # would refuse every body below
    runtime = ServiceRuntime.from_folder(write_crm_service(tmp_path), Settings.defaults())
    runtime.fork("e")
    app = create_service_app(runtime, runtime.settings)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as client:
        answer = await client.post(
            "/tools/createContact", json={"name": "Ann Lee", "company_id": 1}, headers={"X-Episode-Id": "e"}
        )
    assert answer.json()["success"] is True, answer.json()
