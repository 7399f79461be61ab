"""No default admin secret: an unset token is random per process (``compoworld up`` says where it
is); the commands that serve beside other processes refuse to start without one."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from compoworld.cli import build_embedded_app, cli_app, write_admin_token
from compoworld.deploy.entrypoint import main as entrypoint_main
from compoworld.settings import Settings
from tests.orchestrator_fixture import write_library


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPOWORLD_ADMIN_TOKEN", raising=False)


def test_an_unset_token_is_random_per_settings_and_a_set_one_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = Settings(), Settings()
    assert one.admin_token != two.admin_token and len(one.admin_token) >= 40
    assert not one.admin_token_configured and not Settings.defaults().admin_token_configured
    monkeypatch.setenv("COMPOWORLD_ADMIN_TOKEN", "from-the-env")
    assert Settings().admin_token == "from-the-env" and Settings().admin_token_configured
    assert Settings.defaults(admin_token="given").admin_token_configured


async def test_the_old_baked_in_token_opens_no_admin_route(tmp_path: Path) -> None:
    settings = Settings()
    app, _ = build_embedded_app(write_library(tmp_path / "lib"), settings)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        for token in ("compoworld-dev-token", ""):
            got = await http.get("/admin/episodes", headers={"Authorization": f"Bearer {token}"})
            assert got.status_code == 401
        ok = await http.get("/admin/episodes", headers={"Authorization": f"Bearer {settings.admin_token}"})
        assert ok.status_code == 200


def test_the_generated_token_is_written_where_only_its_owner_reads_it(tmp_path: Path) -> None:
    where = write_admin_token("tok-123", tmp_path / "cw" / "admin-token")
    path = tmp_path / "cw" / "admin-token"
    assert where == f"in {path}" and path.read_text() == "tok-123\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert write_admin_token("tok-456", blocked / "admin-token").startswith("tok-456 (not written")


@pytest.mark.parametrize("command", ["serve", "orchestrator"], ids=["service pack", "orchestrator"])
def test_container_commands_refuse_to_start_without_a_token(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = write_library(tmp_path / "lib")
    argv = ["serve", "crm", "desk", "--library", str(library)] if command == "serve" else ["orchestrator"]
    assert entrypoint_main(argv) == 2
    assert "COMPOWORLD_ADMIN_TOKEN is not set" in capsys.readouterr().err


def test_the_orchestrator_command_refuses_to_start_without_a_token() -> None:
    result = CliRunner().invoke(cli_app(), ["orchestrator"])
    assert result.exit_code == 2 and "COMPOWORLD_ADMIN_TOKEN is not set" in result.output
