"""Typed list objects: Kubernetes' ``{apiVersion, kind, metadata, items}`` lists the rows of ``items``.

``GET /api/v1/namespaces/{namespace}/widgets`` answers a ``WidgetList``: the rows beside the list's
own type and its list metadata (``continue``, ``resourceVersion``). It is the list of the widget
table under that namespace, and ``GET /api/v1/widgets`` (``listWidgetForAllNamespaces``) the list of
every namespace's widgets: a create is seen by both, and by no other namespace's list. Built from an
inline document with verification on, called over the REST routes on real SQLite.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.settings import Settings
from tests.inline_service import build_inline
from tests.spec_parts import json_body, ok, path_param

_META = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "uid": {"type": "string"},
    },
}
_WIDGET = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "#/components/schemas/ObjectMeta"},
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "color": {"type": "string"}}},
    },
}
_LIST_META = {
    "type": "object",
    "properties": {"continue": {"type": "string"}, "resourceVersion": {"type": "string"}},
}
_WIDGET_LIST = {
    "type": "object",
    "required": ["items"],
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "#/components/schemas/ListMeta"},
        "items": {"type": "array", "items": {"$ref": "#/components/schemas/Widget"}},
    },
}
_PRETTY = {"name": "pretty", "in": "query", "schema": {"type": "string"}}


def _doc() -> dict[str, Any]:
    widget, listed = {"$ref": "#/components/schemas/Widget"}, {"$ref": "#/components/schemas/WidgetList"}
    ns = path_param("namespace")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Widgets", "version": "1"},
        "paths": {
            "/api/v1/namespaces/{namespace}/widgets": {
                "parameters": [ns, _PRETTY],
                "get": {"operationId": "listNamespacedWidget", "responses": ok(listed)},
                "post": {
                    "operationId": "createNamespacedWidget",
                    "requestBody": json_body(widget),
                    "responses": ok(widget),
                },
            },
            "/api/v1/namespaces/{namespace}/widgets/{name}": {
                "parameters": [ns, path_param("name"), _PRETTY],
                "get": {"operationId": "readNamespacedWidget", "responses": ok(widget)},
            },
            "/api/v1/widgets": {
                "parameters": [_PRETTY],
                "get": {"operationId": "listWidgetForAllNamespaces", "responses": ok(listed)},
            },
        },
        "components": {
            "schemas": {
                "ObjectMeta": _META,
                "Widget": _WIDGET,
                "ListMeta": _LIST_META,
                "WidgetList": _WIDGET_LIST,
            }
        },
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    folder = build_inline(tmp_path_factory.mktemp("typed"), "widgets", _doc())
    return ServiceRuntime.from_folder(Path(folder), Settings())


def _client(rt: ServiceRuntime) -> httpx.AsyncClient:
    app = create_service_app(rt, Settings(admin_token="t"))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc")


def test_typed_lists_are_verified_lists_of_the_entity(rt: ServiceRuntime) -> None:
    for name in ("listNamespacedWidget", "listWidgetForAllNamespaces"):
        tool = rt.manifest.tool(name)
        assert tool is not None and tool.backend == "implemented", tool and tool.simulated_reason
        assert tool.operation in ("list", "search") and tool.entity == "widget"
        assert tool.response is not None and tool.response.rows_at == ["items"]


def test_a_create_is_listed_in_its_namespace_and_across_all_of_them(rt: ServiceRuntime) -> None:
    spaces = sorted({str(w["namespace_id"]) for w in rt.select(None, "widget")})
    assert len(spaces) >= 2
    mine, other = spaces[0], spaces[1]

    async def go() -> dict[str, Any]:
        rt.fork("typed")
        out: dict[str, Any] = {}
        async with _client(rt) as http:
            h = {"X-Episode-Id": "typed"}

            async def sizes() -> tuple[int, int, int]:
                a = (await http.get(f"/api/v1/namespaces/{mine}/widgets", headers=h)).json()["items"]
                b = (await http.get(f"/api/v1/namespaces/{other}/widgets", headers=h)).json()["items"]
                every = (await http.get("/api/v1/widgets", headers=h)).json()["items"]
                return len(a), len(b), len(every)

            out["before"] = await sizes()
            made = await http.post(
                f"/api/v1/namespaces/{mine}/widgets", json={"kind": "Widget", "spec": {"size": 3}}, headers=h
            )
            assert made.status_code in (200, 201), made.text
            out["after"] = await sizes()
            out["body"] = (await http.get(f"/api/v1/namespaces/{mine}/widgets", headers=h)).json()
        return out

    out = asyncio.run(go())
    (a, b, every), (a2, b2, every2) = out["before"], out["after"]
    assert (a2, b2, every2) == (a + 1, b, every + 1)
    assert set(out["body"]) <= {"apiVersion", "kind", "metadata", "items"}
    assert any((w.get("spec") or {}).get("size") == 3 for w in out["body"]["items"])
