"""Spec paths that carry their query string (``/forecast?city_id={city_id}``, Weatherbit's style).

The route is the path before ``?``; the templated values come from the query string; operations
sharing the route are told apart by the keys a request carries (the most specific first), and a
request that fits none is refused by name. Built from an inline document and called over the
service's REST routes, as a client of the real API sends them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.runtime.query_routes import query_template
from compoworld.runtime.wire import WireRequest
from compoworld.settings import Settings
from compoworld.synth.verify import verify_runtime
from tests.inline_service import build_inline

_FORECAST = {
    "type": "object",
    "properties": {
        "city_id": {"type": "integer"},
        "city_name": {"type": "string"},
        "country_code": {"type": "string"},
        "timezone": {"type": "string"},
    },
}


def _ok() -> dict[str, Any]:
    schema = {"$ref": "#/components/schemas/Forecast"}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _path(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": kind}}


def _query(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": {"type": "integer"}}


def _doc() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Weather", "version": "1"},
        "paths": {
            "/forecast/daily?city_id={city_id}": {
                "get": {
                    "operationId": "get_forecast_daily_city_id",
                    "parameters": [_path("city_id", "integer"), _query("days")],
                    "responses": _ok(),
                }
            },
            "/forecast/daily?city={city}&country={country}": {
                "get": {
                    "operationId": "get_forecast_daily_city_country",
                    "parameters": [_path("city"), _path("country"), _query("days")],
                    "responses": _ok(),
                }
            },
            "/forecast/hourly?city_id={city_id}": {
                "get": {
                    "operationId": "get_forecast_hourly_city_id",
                    "parameters": [_path("city_id", "integer")],
                    "responses": _ok(),
                }
            },
        },
        "components": {"schemas": {"Forecast": _FORECAST}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("weather"), "weather", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def test_a_path_is_split_at_its_query_string() -> None:
    found = query_template("/current?city={city}&country={country}&format=json")
    assert found.route == "/current"
    assert found.args == {"city": "city", "country": "country"} and found.fixed == {"format": "json"}
    assert query_template("/plain/{id}").route == "/plain/{id}"
    request = WireRequest("GET", "/forecast/daily?city_id=5", params=[("days", "3")])
    assert request.url == "/forecast/daily?city_id=5&days=3"


def test_requests_reach_the_operation_whose_query_keys_they_carry(rt: ServiceRuntime) -> None:
    tool = rt.manifest.tool("get_forecast_daily_city_id")
    assert tool is not None and tool.entity is not None
    entity = rt.manifest.entity(tool.entity)
    assert entity is not None
    key = rt.select(None, entity.table)[0][entity.pk]
    hourly_tool = rt.manifest.tool("get_forecast_hourly_city_id")
    assert hourly_tool is not None and hourly_tool.entity is not None
    other = rt.manifest.entity(hourly_tool.entity)
    assert other is not None and other.name != entity.name
    hourly_key = rt.select(None, other.table)[0][other.pk]
    city_tool = next(t for t in rt.manifest.tools if "city={city}" in (t.path or ""))
    city_entity = rt.manifest.entity(city_tool.entity or "")
    assert city_entity is not None
    place = rt.select(None, city_entity.table)[0]  # a stored row, looked up by the fields it holds
    assert city_tool.action is not None  # a field-match lookup: city -> city_name, country -> country_code
    where = {arg: place[column] for arg, column in city_tool.action.match.items()}
    assert set(where) == {"city", "country"}, city_tool.action.match

    async def go() -> list[httpx.Response]:
        app = create_service_app(rt, Settings(admin_token="t"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc") as http:
            return [
                await http.get("/forecast/daily", params={"city_id": key}),
                await http.post(f"/_compoworld/tools/{tool.name}", json={"city_id": key}),
                # a lookup answers the stored row: a forecast length would change that answer
                await http.get("/forecast/daily", params={"city_id": key, "days": 3}),
                await http.get("/forecast/daily", params=where),
                await http.get("/forecast/daily", params={"days": 3}),
                await http.get("/forecast/hourly", params={"city_id": hourly_key}),
            ]

    by_id, uniform, with_days, by_city, neither, hourly = asyncio.run(go())
    assert by_id.status_code == 200, by_id.text
    assert by_id.json() == uniform.json()["data"]  # the same operation, over either route
    assert with_days.status_code == 422 and "days" in with_days.text  # refused by name, never ignored
    assert by_city.status_code == 200 and hourly.status_code == 200, (by_city.text, hourly.text)
    assert hourly.json()["city_id"] == hourly_key  # the hourly operation answered, from its own row
    assert neither.status_code == 400 and "city_id" in neither.text and "country" in neither.text


def test_the_service_passes_the_conformance_checker_over_its_rest_routes(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
    tool = rt.manifest.tool("get_forecast_daily_city_id")
    assert tool is not None and tool.backend == "implemented", tool and tool.simulated_reason
