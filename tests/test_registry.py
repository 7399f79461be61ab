"""Registry[T]: names taken once, lazy strings resolved and checked on use, entry points of installed packages."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli import cli_app
from compoworld.registry import Registry, RegistryError, load_target


def _int(value: object) -> int:
    if not isinstance(value, int):
        raise TypeError(f"{value!r} is not an int")
    return value


def install_plugin(root: Path, group: str, entries: dict[str, str], code: str) -> None:
    """A real installed distribution (a package plus its .dist-info) that ``importlib.metadata`` finds.

    The package is named after the folder, so each test imports its own.
    """
    package = "cw_plugin_" + root.name.replace("-", "_")
    (root / package).mkdir()
    (root / package / "__init__.py").write_text(code)
    info = root / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {package}:{attr}\n" for name, attr in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")


def test_a_name_is_taken_once_and_the_same_value_again_is_harmless() -> None:
    registry: Registry[int] = Registry("number", check=_int)
    registry.register("one", 1)
    registry.register("one", 1)
    with pytest.raises(RegistryError, match="a number named 'one' is already registered"):
        registry.register("one", 2)
    assert registry.get("one") == 1 and registry.names() == ["one"] and "one" in registry


def test_a_lazy_string_is_imported_on_first_use_and_checked() -> None:
    registry: Registry[object] = Registry("thing", check=lambda v: v)
    registry.register("join", "os.path:join")
    registry.register("join", load_target("os.path:join"))  # the value the string names: the same entry
    import os.path

    assert registry.get("join") is os.path.join
    numbers: Registry[int] = Registry("number", check=_int)
    numbers.register("sep", "os:sep")
    with pytest.raises(RegistryError, match="number 'sep' is not usable: '/' is not an int"):
        numbers.get("sep")
    numbers.register("gone", "no_such_module_here:x")
    with pytest.raises(RegistryError, match="cannot be loaded"):
        numbers.get("gone")


def test_unknown_names_and_malformed_targets_are_refused_with_the_known_names() -> None:
    registry: Registry[int] = Registry("number")
    registry.register("one", 1)
    with pytest.raises(RegistryError, match=r"unknown number 'two' \(known: one\)"):
        registry.get("two")
    with pytest.raises(RegistryError, match=r"package\.module:attr"):
        registry.register("bad", "no colon")
    with pytest.raises(RegistryError, match="non-empty name"):
        registry.register("", 3)


def test_an_installed_package_registers_through_its_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, "compoworld.test_numbers", {"seven": "SEVEN"}, "SEVEN = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry: Registry[int] = Registry("number", entry_points="compoworld.test_numbers", check=_int)
    registry.register("one", 1)
    assert registry.names() == ["one", "seven"] and registry.get("seven") == 7


def test_an_entry_point_cannot_take_a_builtin_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, "compoworld.test_numbers", {"one": "SEVEN"}, "SEVEN = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry: Registry[int] = Registry("number", entry_points="compoworld.test_numbers", check=_int)
    registry.register("one", 1)
    with pytest.raises(RegistryError, match="already registered"):
        registry.names()


def test_an_installed_package_adds_a_cli_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = 'def hello(name: str = "world") -> None:\n    """Say hello."""\n    print(f"hello {name}")\n'
    install_plugin(tmp_path, "compoworld.commands", {"hello": "hello"}, code)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(cli_app(), ["hello", "--name", "plugins"])
    assert result.exit_code == 0 and "hello plugins" in result.output


def test_ordered_names_keep_registration_order_and_entry_points_come_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, "compoworld.test_ordered", {"aa_plugin": "VALUE"}, "VALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry: Registry[int] = Registry("number", entry_points="compoworld.test_ordered", check=_int)
    for name, value in (("zeta", 1), ("alpha", 2), ("mid", 3)):
        registry.register(name, value)
    assert registry.ordered() == ["zeta", "alpha", "mid", "aa_plugin"]
    assert registry.names() == ["aa_plugin", "alpha", "mid", "zeta"] and registry.get("aa_plugin") == 7
