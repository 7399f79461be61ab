"""A read named for its entity but addressed by fields, not a key (Weatherbit's style).

``GET /current/weather?lat={lat}&lon={lon}`` names no key of the row it answers, but its path
parameters are fields of that row (``city`` the ``city_name``, ``country`` the ``country_code``): it
is the lookup of the row holding them, as a keyless REST
read already is (``readside.bind_field_match``): a coordinate the state holds answers its row
(compared as a number, ``38.1`` names ``"38.10"``), one it does not hold is not found, and a read
whose parameter names no field stays with the world model. Its other parameters (``units``,
``days``) would change an answer the row does not hold: refused by name at any value but their
default, and a read that requires one (``start_date``) stays with the world model. Built from an
inline document, called over the REST route, conformance-checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _path(name: str, kind: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": kind}}


def _doc() -> dict[str, Any]:
    weather = {
        "type": "object",
        "properties": {
            "lat": {"type": "string"},
            "lon": {"type": "string"},
            "city_name": {"type": "string"},
            "country_code": {"type": "string"},
            "timezone": {"type": "string"},
            "temp": {"type": "number"},
        },
    }
    alerts = {
        "type": "object",
        "properties": {
            "lat": {"type": "number"},
            "lon": {"type": "number"},
            "city_name": {"type": "string"},
            "severity": {"type": "string"},
        },
    }
    lat, lon = _path("lat", "number"), _path("lon", "number")
    units = {"name": "units", "in": "query", "schema": {"type": "string", "enum": ["M", "I"], "default": "M"}}
    days = {"name": "days", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 16}}
    start = {"name": "start_date", "in": "query", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Weather by coordinates", "version": "1"},
        "paths": {
            "/current/weather?lat={lat}&lon={lon}": {
                "get": {
                    "operationId": "get_current_weather",
                    "parameters": [lat, lon, units, days],
                    "responses": _ok(weather),
                }
            },
            "/current/alerts?lat={lat}&lon={lon}": {
                "get": {
                    "operationId": "get_current_alerts",
                    "parameters": [lat, lon],
                    "responses": _ok(alerts),
                }
            },
            "/current/weather?city_name={city_name}": {
                "get": {
                    "operationId": "get_current_weather_by_city",
                    "parameters": [_path("city_name", "string"), start],
                    "responses": _ok(weather),
                }
            },
            "/current/weather?city={city}&country={country}": {
                "get": {
                    "operationId": "get_current_weather_by_place",
                    "parameters": [_path("city", "string"), _path("country", "string")],
                    "responses": _ok(weather),
                }
            },
            "/current/weather?postal_code={postal_code}": {
                "get": {
                    "operationId": "get_current_weather_postal",
                    "parameters": [_path("postal_code", "string")],
                    "responses": _ok(weather),
                }
            },
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("coords"), "coords", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_a_read_addressed_by_fields_is_a_field_match_lookup(rt: ServiceRuntime) -> None:
    for name in ("get_current_weather", "get_current_alerts"):
        tool = rt.manifest.tool(name)
        assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
        assert tool.action is not None and tool.action.kind == "lookup" and tool.kind == "read"
        assert set(tool.action.match) == {"lat", "lon"}


def test_a_parameter_names_the_one_field_that_is_its_name_or_code(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool(
        "get_current_weather_by_place"
    )  # ``city`` -> city_name, ``country`` -> country_code
    assert tool is not None and tool.backend == "action", tool and tool.simulated_reason
    assert tool.action is not None and tool.action.match == {"city": "city_name", "country": "country_code"}


def test_a_read_whose_parameter_names_no_field_stays_with_the_world_model(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("get_current_weather_postal")
    assert tool is not None and tool.backend == "simulated"


def test_parameters_it_does_not_match_on_are_refused_not_ignored(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("get_current_weather")
    assert tool is not None and tool.listing is not None
    assert set(tool.listing.refused) == {"units", "days"}
    history = rt.manifest.tool("get_current_weather_by_city")  # a required start_date it cannot honour
    assert history is not None and history.backend == "simulated"


def test_text_coordinates_are_seeded_as_coordinates(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("get_current_weather")
    assert tool is not None and tool.entity is not None
    entity = rt.manifest.entity(tool.entity)
    assert entity is not None
    rows = [r for r in rt.select(None, entity.table) if r["lat"] is not None and r["lon"] is not None]
    assert rows
    for row in rows:
        assert 35 <= float(row["lat"]) <= 60 and -10 <= float(row["lon"]) <= 25  # never ``LON-507537``


def test_the_row_holding_the_coordinates_answers_over_rest(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("get_current_weather")
    assert tool is not None and tool.entity is not None
    entity = rt.manifest.entity(tool.entity)
    assert entity is not None
    row = next(r for r in rt.select(None, entity.table) if r["lat"] is not None and r["lon"] is not None)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        app = create_service_app(rt, Settings(admin_token="t"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as http:
            found = await http.get(
                "/current/weather", params={"lat": float(row["lat"]), "lon": float(row["lon"])}
            )
            missing = await http.get("/current/weather", params={"lat": 1.5, "lon": 2.5})
            coords = {"lat": float(row["lat"]), "lon": float(row["lon"])}
            at_default = await http.get("/current/weather", params={**coords, "units": "M"})
            imperial = await http.get("/current/weather", params={**coords, "units": "I"})
            days = await http.get("/current/weather", params={**coords, "days": 3})
            assert at_default.status_code == 200, at_default.text
            for refused, arg in ((imperial, "units"), (days, "days")):
                assert refused.status_code in (400, 422) and arg in refused.text, refused.text
            return found, missing

    found, missing = asyncio.run(go())
    assert found.status_code == 200, found.text
    assert found.json()["city_name"] == row["city_name"] and found.json()["lat"] == row["lat"]
    assert missing.status_code == 404


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    checks = {t.tool: t.checks for t in report.tools}
    assert "lookup answers the row holding the values its arguments name" in checks["get_current_weather"]
    assert "unhonoured 'units' refused by name" in checks["get_current_weather"]
