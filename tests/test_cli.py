"""The ``compoworld`` command line: every contributed command is registered and answers --help."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from compoworld.cli import BUILTIN_COMMANDS, cli_app

ALL = sorted([*BUILTIN_COMMANDS, "serve", "up", "demo"])


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli_app(), ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in ALL:
        assert name in result.output


@pytest.mark.parametrize("name", ALL)
def test_each_command_answers_help(name: str) -> None:
    result = CliRunner().invoke(cli_app(), [name, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output


def test_serve_refuses_an_unknown_service(tmp_path: object) -> None:
    result = CliRunner().invoke(cli_app(), ["serve", "nope", "--library", str(tmp_path)])
    assert result.exit_code == 2 and "no service 'nope'" in result.output


def test_each_cli_app_is_built_fresh_with_the_same_commands() -> None:
    first, second = cli_app(), cli_app()
    assert first is not second
    names = [c.name or c.callback.__name__ for c in first.registered_commands]  # type: ignore[union-attr]
    names += [str(g.name) for g in first.registered_groups]
    assert sorted(names) == ALL
    assert len(second.registered_commands) == len(first.registered_commands)


def _command_shape(app: typer.Typer) -> tuple[list[str | None], list[tuple[str | None, int]]]:
    commands = sorted((c.name for c in app.registered_commands), key=str)
    groups = sorted(
        (
            (g.name, len(g.typer_instance.registered_commands))
            for g in app.registered_groups
            if g.typer_instance
        ),
        key=str,
    )
    return commands, groups


def test_cli_app_built_twice_has_the_same_commands_and_shares_no_group() -> None:
    first, second = cli_app(), cli_app()
    assert _command_shape(first) == _command_shape(second)
    assert len(first.registered_groups) >= 5 and len(first.registered_commands) >= 5
    mine = {g.name: g.typer_instance for g in first.registered_groups}
    theirs = {g.name: g.typer_instance for g in second.registered_groups}
    assert all(mine[name] is not theirs[name] for name in mine)  # each build mounts fresh groups
