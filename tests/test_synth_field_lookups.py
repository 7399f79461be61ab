"""Reads whose path names fields of one row, not its key, answer the row holding those values.

Sportsdata's ``GET /{format}/PlayerSeasonStatsByPlayer/{season}/{playerid}`` answers one season-stat
object (94 fields, more than twice the columns an entity keeps): ``season`` is its ``Season`` column, ``playerid`` its ``PlayerID``, and ``{format}`` only picks
the wire format. ``PlayerGameStatsByPlayer/{date}/{playerid}`` names a game-stat row by its day (its
``PlayerID`` kept under the column cap, though 47 fields come before it). Such
a read answers the first row, by key, holding every value, and ``not_found`` where none does (never
an invented row). Built from an inline document, called on real SQLite, and conformance-checked.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.verify import verify_service
from tests.inline_service import build_inline
from tests.runtime_call import call

_FORMAT = {
    "name": "format",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "enum": ["XML", "JSON"]},
}
_SEASON_STAT = {
    "type": "object",
    "properties": {
        "StatID": {"type": "integer"},
        "PlayerID": {"type": "integer"},
        "Season": {"type": "integer"},
        **{f"Total{i:02d}": {"type": "integer"} for i in range(90)},
        "Name": {"type": "string"},
    },
}
#: More fields than an entity keeps columns, ``PlayerID`` among the last: the read's own field is kept.
_GAME_STAT = {
    "type": "object",
    "properties": {
        "StatID": {"type": "integer"},
        "DateTime": {"type": "string", "format": "date-time"},
        **{f"Stat{i:02d}": {"type": "integer"} for i in range(45)},
        "PlayerID": {"type": "integer"},
        "Name": {"type": "string"},
    },
}


def _get(op: str, params: list[str], schema: dict[str, Any]) -> dict[str, Any]:
    declared = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in params]
    return {
        "get": {
            "operationId": op,
            "parameters": [_FORMAT, *declared],
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
        }
    }


def _doc() -> dict[str, Any]:
    many = {"type": "array", "items": _SEASON_STAT}
    games = {"type": "array", "items": _GAME_STAT}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Stats", "version": "1"},
        "paths": {
            "/{format}/PlayerSeasonStats/{season}": _get("PlayerSeasonStats", ["season"], many),
            "/{format}/PlayerSeasonStatsByPlayer/{season}/{playerid}": _get(
                "PlayerSeasonStatsByPlayer", ["season", "playerid"], _SEASON_STAT
            ),
            "/{format}/PlayerGameStatsByDate/{date}": _get("PlayerGameStatsByDate", ["date"], games),
            "/{format}/PlayerGameStatsByPlayer/{date}/{playerid}": _get(
                "PlayerGameStatsByPlayer", ["date", "playerid"], _GAME_STAT
            ),
        },
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inline(tmp_path_factory.mktemp("field_lookups"), "stats", _doc())


@pytest.fixture()
def rt(folder: Path) -> ServiceRuntime:
    return ServiceRuntime.from_folder(folder, Settings())


def test_the_path_fields_bind_a_lookup(rt: ServiceRuntime) -> None:
    by_player = rt.manifest.tool("PlayerSeasonStatsByPlayer")
    assert by_player is not None and by_player.backend == "action" and by_player.action is not None
    assert by_player.action.match == {"season": "Season", "playerid": "PlayerID"}
    assert by_player.action.returns == "body"  # 94 fields, 40 columns: the spec's body, filled from the row
    by_day = rt.manifest.tool("PlayerGameStatsByPlayer")
    assert by_day is not None and by_day.action is not None
    assert by_day.action.match == {"date": "DateTime", "playerid": "PlayerID"}


def test_the_answer_is_the_row_holding_the_values(rt: ServiceRuntime) -> None:
    row = min(rt.select(None, "player_season_stat"), key=lambda r: r["StatID"])
    args = {"format": "JSON", "season": str(row["Season"]), "playerid": str(row["PlayerID"])}
    out = call(rt, None, "PlayerSeasonStatsByPlayer", args)
    assert out["success"], out
    assert out["data"]["StatID"] == row["StatID"] and out["data"]["PlayerID"] == row["PlayerID"]
    missing = call(rt, None, "PlayerSeasonStatsByPlayer", {**args, "playerid": "987654321"})
    assert not missing["success"] and missing["error"]["code"] == "not_found"


def test_a_date_names_a_timestamp_by_its_day(rt: ServiceRuntime) -> None:
    row = next(r for r in rt.select(None, "player_game_stat") if r["DateTime"] and r["PlayerID"] is not None)
    day = row["DateTime"][:10]
    args = {"format": "JSON", "date": day, "playerid": str(row["PlayerID"])}
    out = call(rt, None, "PlayerGameStatsByPlayer", args)
    assert out["success"], out
    assert out["data"]["PlayerID"] == row["PlayerID"] and out["data"]["DateTime"][:10] == day
    spelled = dt.date.fromisoformat(day).strftime("%Y-%b-%d").upper()  # sportsdata's ``2018-FEB-27``
    again = call(rt, None, "PlayerGameStatsByPlayer", {**args, "date": spelled})
    assert again["success"] and again["data"] == out["data"]
    missing = call(rt, None, "PlayerGameStatsByPlayer", {**args, "date": "1901-01-01"})
    assert not missing["success"] and missing["error"]["code"] == "not_found"


def test_the_checker_passes_the_field_lookups(folder: Path) -> None:
    report = verify_service(folder)
    checks = {t.tool: t for t in report.tools}
    for tool in ("PlayerSeasonStatsByPlayer", "PlayerGameStatsByPlayer"):
        assert (checks[tool].backend, checks[tool].passed) == ("action", True), checks[tool]
        assert "unmatched values not found" in checks[tool].checks
    assert report.passed, report.failed_tools
