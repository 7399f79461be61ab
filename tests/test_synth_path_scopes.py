"""Path parameters that scope a collection bind to typed state instead of leaving the tool simulated.

``/{workspace_slug}/members`` (Orbit's style: a tenant key that no literal names) scopes members to
a workspace exactly as ``/workspaces/{slug}/members`` would: built, then called on real SQLite.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.runtime.validate import ArgsValidator, ArgumentError
from compoworld.settings import Settings
from compoworld.specs.model import FieldSpec
from compoworld.synth.build import build_service
from compoworld.synth.listparams import language_choices
from compoworld.synth.paths import parse_path
from compoworld.synth.verify import verify_runtime
from tests.runtime_call import call

_MEMBER = {
    "type": "object",
    "properties": {
        "slug": {"type": "string"},
        "name": {"type": "string"},
        "email": {"type": "string", "format": "email"},
    },
}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _doc() -> dict[str, Any]:
    member = {"$ref": "#/components/schemas/Member"}
    body = {"required": True, "content": {"application/json": {"schema": member}}}
    ws, slug = _param("workspace_slug"), _param("member_slug")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Scoped", "version": "1"},
        "paths": {
            "/{workspace_slug}/members": {
                "get": {
                    "operationId": "listMembers",
                    "parameters": [ws],
                    "responses": _ok({"type": "array", "items": member}),
                },
                "post": {
                    "operationId": "createMember",
                    "parameters": [ws],
                    "requestBody": body,
                    "responses": _ok(member),
                },
            },
            "/{workspace_slug}/members/{member_slug}": {
                "get": {"operationId": "getMember", "parameters": [ws, slug], "responses": _ok(member)},
                "put": {
                    "operationId": "updateMember",
                    "parameters": [ws, slug],
                    "requestBody": body,
                    "responses": _ok(member),
                },
            },
        },
        "components": {"schemas": {"Member": _MEMBER}},
    }


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("scoped")
    spec = root / "scoped.json"
    spec.write_text(json.dumps(_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_leading_key_parameter_is_a_parent_by_its_own_name() -> None:
    assert parse_path("/{workspace_slug}/members").parents == (("workspace", "workspace_slug"),)
    assert parse_path("/{tenantId}/orders/{id}").parents == (("tenant", "tenantId"),)
    assert parse_path("/{format}/Games").parents == ()  # a format names no parent
    assert parse_path("/{dialect}/api/where/stops").parents == ()


def test_tools_under_a_leading_scope_are_implemented(rt: ServiceRuntime) -> None:
    tools = {t.name: t for t in rt.manifest.tools}
    for name in ("listMembers", "createMember", "getMember", "updateMember"):
        assert tools[name].backend == "implemented", (name, tools[name].simulated_reason)


def test_a_member_lives_in_the_workspace_it_was_created_in(rt: ServiceRuntime) -> None:
    workspace = rt.select(None, "workspace")[0]["id"]
    made = call(
        rt, "e1", "createMember", {"workspace_slug": workspace, "name": "Ada", "email": "a@example.com"}
    )
    assert made["success"], made
    slug = made["data"]["slug"]
    listed = call(rt, "e1", "listMembers", {"workspace_slug": workspace})["data"]
    assert slug in [row["slug"] for row in listed]
    got = call(rt, "e1", "getMember", {"workspace_slug": workspace, "member_slug": slug})
    assert got["success"] and got["data"]["name"] == "Ada", got
    elsewhere = call(rt, "e1", "getMember", {"workspace_slug": "no-such-workspace", "member_slug": slug})
    assert not elsewhere["success"] and elsewhere["error"]["code"] == "not_found", elsewhere


def test_the_service_passes_the_conformance_checker(rt: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


# -- a response-format selector and data feeds keyed by their columns (sportsdata's style) ------------

_STAT = {
    "type": "object",
    "properties": {
        "StatID": {"type": "integer"},
        "Season": {"type": "integer"},
        "DateTime": {"type": "string", "format": "date-time"},
        "Name": {"type": "string"},
    },
}


def _feed_doc() -> dict[str, Any]:
    fmt = {
        "name": "format",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "enum": ["XML", "JSON"], "default": "XML"},
    }
    stats = _ok({"type": "array", "items": {"$ref": "#/components/schemas/PlayerGameStat"}})
    return {
        "openapi": "3.0.3",
        "info": {"title": "Feeds", "version": "1"},
        "paths": {
            "/{format}/PlayerGameStatsBySeason/{season}": {
                "get": {
                    "operationId": "PlayerGameStatsBySeason",
                    "parameters": [fmt, _param("season")],
                    "responses": stats,
                }
            },
            "/{format}/PlayerGameStats": {
                "get": {"operationId": "PlayerGameStats", "parameters": [fmt], "responses": stats}
            },
        },
        "components": {"schemas": {"PlayerGameStat": _STAT}},
    }


@pytest.fixture(scope="module")
def feeds(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("feeds")
    spec = root / "feeds.json"
    spec.write_text(json.dumps(_feed_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_required_format_selector_takes_json_and_refuses_the_rest(feeds: ServiceRuntime) -> None:
    tools = {t.name: t for t in feeds.manifest.tools}
    for name in ("PlayerGameStatsBySeason", "PlayerGameStats"):
        assert tools[name].backend == "implemented", (name, tools[name].simulated_reason)
        assert tools[name].input_schema["properties"]["format"]["enum"] == ["JSON"]
    assert call(feeds, "f1", "PlayerGameStats", {"format": "JSON"})["success"]
    xml = call(feeds, "f1", "PlayerGameStats", {"format": "XML"})
    assert not xml["success"] and xml["error"]["code"] == "invalid_arguments", xml


def test_a_feed_is_keyed_by_its_own_id_and_filtered_by_a_text_path_value(feeds: ServiceRuntime) -> None:
    entity = feeds.manifest.entity("player_game_stat")
    assert entity is not None and entity.pk == "StatID" and entity.pk_type == "integer"
    season = feeds.select(None, "player_game_stat")[0]["Season"]
    found = call(feeds, "f2", "PlayerGameStatsBySeason", {"format": "JSON", "season": str(season)})
    assert found["success"] and found["data"], found
    assert {row["Season"] for row in found["data"]} == {season}


def test_the_feed_service_passes_the_conformance_checker(feeds: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(feeds))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


# -- a content-language selector (BBC iBL's ``lang``): the state's one language, the rest refused ---

_CHANNEL = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "language": {"type": "string"}},
}
_LANG = {
    "name": "lang",
    "in": "query",
    "required": True,
    "description": "The language for any applicable localised strings.",
    "schema": {"type": "string", "enum": ["cy", "en", "ga", "gd"]},
}


def _language_doc() -> dict[str, Any]:
    channel = {"$ref": "#/components/schemas/Channel"}
    spoken = {"name": "language", "in": "query", "schema": {"type": "string", "enum": ["en", "cy"]}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Localised", "version": "1"},
        "paths": {
            "/channels": {
                "get": {
                    "operationId": "listChannels",
                    "parameters": [_LANG, spoken],
                    "responses": _ok({"type": "array", "items": channel}),
                }
            },
            "/channels/{id}": {
                "get": {
                    "operationId": "getChannel",
                    "parameters": [_param("id"), _LANG],
                    "responses": _ok(channel),
                }
            },
        },
        "components": {"schemas": {"Channel": _CHANNEL}},
    }


@pytest.fixture(scope="module")
def localised(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("localised")
    spec = root / "localised.json"
    spec.write_text(json.dumps(_language_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_required_language_selector_serves_the_states_language_and_refuses_the_rest(
    localised: ServiceRuntime,
) -> None:
    tools = {t.name: t for t in localised.manifest.tools}
    for name in ("listChannels", "getChannel"):
        assert tools[name].backend == "implemented", (name, tools[name].simulated_reason)
        assert tools[name].input_schema["properties"]["lang"]["enum"] == ["en"]
    listing = tools["listChannels"].listing
    assert listing is not None and "lang" in listing.refused  # accounted for, by name
    listed = call(localised, "l1", "listChannels", {"lang": "en"})
    assert listed["success"] and len(listed["data"]) == len(localised.select(None, "channel")), listed
    welsh = call(localised, "l1", "listChannels", {"lang": "cy"})
    assert not welsh["success"] and welsh["error"]["code"] == "invalid_arguments", welsh
    key = listed["data"][0]["id"]
    assert call(localised, "l1", "getChannel", {"id": key, "lang": "en"})["success"]
    assert not call(localised, "l1", "getChannel", {"id": key, "lang": "gd"})["success"]


def test_a_language_argument_that_names_a_column_filters_on_it(localised: ServiceRuntime) -> None:
    tool = next(t for t in localised.manifest.tools if t.name == "listChannels")
    assert tool.arg_columns.get("language") == "language"
    assert tool.input_schema["properties"]["language"]["enum"] == ["en", "cy"]


def test_only_an_enum_of_language_codes_under_a_language_name_selects_a_language() -> None:
    def param(name: str, values: list[Any]) -> FieldSpec:
        return FieldSpec(
            name=name, location="query", required=True, schema={"type": "string", "enum": values}
        )

    assert language_choices(param("lang", ["en-GB", "fr-FR", "en_US"])) == ["en-GB", "en_US"]
    assert language_choices(param("locale", ["eng", "deu"])) == ["eng"]
    assert language_choices(param("lang", ["fr", "de"])) is None  # nothing the state can answer in
    assert language_choices(param("lang", ["en", "latest"])) is None  # not only languages
    assert language_choices(param("region", ["en", "cy"])) is None  # not named for a language


def test_the_localised_service_passes_the_conformance_checker(localised: ServiceRuntime) -> None:
    report = asyncio.run(verify_runtime(localised))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


# -- parent keys in the format their path parameters fix; named operations under a parent ----------

_CLASS = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
_FIELD = {
    "type": "object",
    "properties": {"category": {"type": "string"}, "label": {"type": "string"}, "type": {"type": "string"}},
}


def _patterned(name: str, pattern: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string", "pattern": pattern}}


def _nested_doc() -> dict[str, Any]:
    sport = _patterned("sportId", r"^(OB_SP\d{1,7})$")
    klass = {"$ref": "#/components/schemas/Class"}
    field = {"$ref": "#/components/schemas/CustomField"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Nested", "version": "1"},
        "paths": {
            "/sports/{sportId}/classes/": {
                "get": {
                    "operationId": "getClassesForSport",
                    "parameters": [sport],
                    "responses": _ok({"type": "array", "items": klass}),
                }
            },
            "/classes/{classId}": {
                "get": {
                    "operationId": "getClass",
                    "parameters": [_patterned("classId", r"^(OB_CL\d{1,7})$")],
                    "responses": _ok(klass),
                }
            },
            "/v2/companies/{companyId}/customfields/{category}": {
                "get": {
                    "operationId": "Get_All_Custom_Fields_by_category",
                    "parameters": [_param("companyId"), _param("category")],
                    "responses": _ok({"type": "array", "items": field}),
                }
            },
        },
        "components": {"schemas": {"Class": _CLASS, "CustomField": _FIELD}},
    }


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> ServiceRuntime:
    root = tmp_path_factory.mktemp("nested")
    spec = root / "nested.json"
    spec.write_text(json.dumps(_nested_doc()))
    return ServiceRuntime.from_folder(Path(build_service(spec, root / "lib").folder), Settings())


def test_a_parent_key_takes_the_pattern_of_the_parameter_that_names_it(nested: ServiceRuntime) -> None:
    sports = nested.select(None, "sport")
    assert sports and all(re.fullmatch(r"OB_SP\d{1,7}", str(r["id"])) for r in sports), sports[:2]
    listed = call(nested, "n1", "getClassesForSport", {"sportId": sports[0]["id"]})
    assert listed["success"], listed


def test_a_named_operation_under_a_parent_is_scoped_to_it(nested: ServiceRuntime) -> None:
    tool = {t.name: t for t in nested.manifest.tools}["Get_All_Custom_Fields_by_category"]
    assert tool.backend == "implemented", tool.simulated_reason
    row = next(r for r in nested.select(None, "custom_field") if r["category"] is not None)
    found = call(nested, "n2", tool.name, {"companyId": row["company_id"], "category": row["category"]})
    assert found["success"] and found["data"], found
    other = call(nested, "n2", tool.name, {"companyId": "no-such-company", "category": row["category"]})
    assert other["success"] and other["data"] == [], other


def test_the_nested_service_passes_the_conformance_checker(nested: ServiceRuntime) -> None:
    """Including a patterned read's unknown-id check (an unknown key in the key's own format)."""
    report = asyncio.run(verify_runtime(nested))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


# -- a lookup whose answer is a view of the row's fields, without its key (opto22's style) ------------


def _view_doc() -> dict[str, Any]:
    io = {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "number"}}}
    value = {"type": "object", "properties": {"value": {"type": "number"}}}
    name = _param("ioName")
    return {
        "openapi": "3.0.3",
        "info": {"title": "Views", "version": "1"},
        "paths": {
            "/ios/analogInputs": {
                "get": {"operationId": "readAnalogInputs", "responses": _ok({"type": "array", "items": io})}
            },
            "/ios/analogInputs/{ioName}/eu": {
                "get": {"operationId": "readAnalogInputEu", "parameters": [name], "responses": _ok(value)}
            },
        },
    }


def test_a_lookup_answering_one_field_of_the_row_passes_the_checker(tmp_path: Path) -> None:
    spec = tmp_path / "views.json"
    spec.write_text(json.dumps(_view_doc()))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tool = {t.name: t for t in rt.manifest.tools}["readAnalogInputEu"]
    assert tool.backend == "action" and tool.action is not None and tool.action.kind == "lookup"
    row = rt.select(None, "analog_input")[0]
    got = call(rt, "v1", tool.name, {"ioName": row["id"]})
    assert got["success"] and got["data"].get("value") == row["value"], (got, row)
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


# -- an action whose body names the row by the entity's own key ---------------------------------------


def _body_row_doc() -> dict[str, Any]:
    sub = {
        "type": "object",
        "required": ["serial"],
        "properties": {
            "serial": {"type": "string"},
            "name": {"type": "string"},
            "status": {"type": "string", "enum": ["active", "disabled"]},
        },
    }
    ref = {"$ref": "#/components/schemas/Subscription"}
    by_serial = {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["serial"],
                    "properties": {"serial": {"type": "string"}},
                }
            }
        },
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Subs", "version": "1"},
        "paths": {
            "/subscriptions": {
                "post": {
                    "operationId": "createSubscription",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": ref}}},
                    "responses": _ok(ref),
                },
                "get": {
                    "operationId": "listSubscriptions",
                    "responses": _ok({"type": "array", "items": ref}),
                },
            },
            "/subscriptions/{serial}": {
                "get": {
                    "operationId": "getSubscription",
                    "parameters": [_param("serial")],
                    "responses": _ok(ref),
                }
            },
            "/subscriptions/disable": {
                "post": {
                    "operationId": "disableSubscription",
                    "requestBody": by_serial,
                    "responses": _ok(ref),
                }
            },
        },
        "components": {"schemas": {"Subscription": sub}},
    }


def test_an_action_addressed_by_a_body_key_moves_that_row(tmp_path: Path) -> None:
    spec = tmp_path / "subs.json"
    spec.write_text(json.dumps(_body_row_doc()))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tool = {t.name: t for t in rt.manifest.tools}["disableSubscription"]
    assert tool.backend == "action" and tool.pk_arg == "serial", tool.simulated_reason
    made = call(rt, "b1", "createSubscription", {"serial": "S-1", "name": "Gold", "status": "active"})
    assert made["success"], made
    assert call(rt, "b1", "disableSubscription", {"serial": "S-1"})["success"]
    assert call(rt, "b1", "getSubscription", {"serial": "S-1"})["data"]["status"] == "disabled"
    missing = call(rt, "b1", "disableSubscription", {"serial": "nobody"})
    assert not missing["success"] and missing["error"]["code"] == "not_found", missing


def test_a_nested_enum_no_value_of_which_fits_its_length_is_left_out_of_the_seed(tmp_path: Path) -> None:
    """Adyen declares ``gender: enum [MALE, FEMALE, UNKNOWN], maxLength: 1``: no seed value is valid."""
    gender = {"type": "string", "enum": ["MALE", "FEMALE", "UNKNOWN"], "maxLength": 1}
    holder = {
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            "details": {"type": "object", "properties": {"first": {"type": "string"}, "gender": gender}},
        },
    }
    ref = {"$ref": "#/components/schemas/Holder"}
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Holders", "version": "1"},
        "paths": {
            "/holders": {
                "get": {"operationId": "listHolders", "responses": _ok({"type": "array", "items": ref})}
            },
            "/holders/{code}": {
                "get": {"operationId": "getHolder", "parameters": [_param("code")], "responses": _ok(ref)}
            },
        },
        "components": {"schemas": {"Holder": holder}},
    }
    spec = tmp_path / "holders.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    rows = rt.select(None, "holder")
    assert rows and all("gender" not in (r["details"] or {}) for r in rows), rows[:2]
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


def test_the_plainer_of_two_same_named_collections_keeps_the_name(tmp_path: Path) -> None:
    """doqs lists ``/designer/templates`` before ``/templates``, each with its own schema and full CRUD:
    ``/templates`` is ``template`` and the designer's collection qualifies, in either order."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for prefix, schema in (("/designer", "DesignerTemplate"), ("", "Template")):
        ref = {"$ref": f"#/components/schemas/{schema}"}
        body = {"required": True, "content": {"application/json": {"schema": ref}}}
        paths[f"{prefix}/templates"] = {
            "get": {"operationId": f"list{schema}", "responses": _ok({"type": "array", "items": ref})},
            "post": {"operationId": f"create{schema}", "requestBody": body, "responses": _ok(ref)},
        }
        paths[f"{prefix}/templates/{{id}}"] = {
            "get": {"operationId": f"get{schema}", "parameters": [_param("id")], "responses": _ok(ref)},
            "put": {
                "operationId": f"update{schema}",
                "parameters": [_param("id")],
                "requestBody": body,
                "responses": _ok(ref),
            },
        }
        schemas[schema] = {
            "type": "object",
            "properties": {"id": {"type": "string"}, f"{schema.lower()}_name": {"type": "string"}},
        }
    doc = {"openapi": "3.0.3", "info": {"title": "Docs", "version": "1"}, "paths": paths}
    doc["components"] = {"schemas": schemas}
    spec = tmp_path / "docs.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tools = {t.name: t for t in rt.manifest.tools}
    for schema, entity in (("Template", "template"), ("DesignerTemplate", "designer_template")):
        for verb in ("list", "create", "get", "update"):
            tool = tools[f"{verb}{schema}"]
            assert (tool.backend, tool.entity) == ("implemented", entity), (tool.name, tool.simulated_reason)


def test_an_id_literal_before_an_item_parameter_addresses_the_collection_before_it() -> None:
    shape = parse_path("/v1/company/id/{companyId}")
    assert (shape.kind, shape.resource, shape.item_param) == ("item", "company", "companyId")
    assert parse_path("/v1/company/url/{website}").resource != "company"  # a website is no company key


def test_a_required_list_argument_with_a_default_is_served_at_it_and_refused_otherwise(
    tmp_path: Path,
) -> None:
    """BBC iBL's ``availability`` (required, default ``available``) names no field: the list serves
    the default and refuses any other value by name instead of being simulated."""
    availability = {
        "name": "availability",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "enum": ["all", "available"], "default": "available"},
    }
    ref = {"$ref": "#/components/schemas/Channel"}
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Channels", "version": "1"},
        "paths": {
            "/channels": {
                "get": {
                    "operationId": "listChannels",
                    "parameters": [availability],
                    "responses": _ok({"type": "array", "items": ref}),
                }
            },
            "/channels/{id}": {
                "get": {"operationId": "getChannel", "parameters": [_param("id")], "responses": _ok(ref)}
            },
        },
        "components": {
            "schemas": {
                "Channel": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
                }
            }
        },
    }
    spec = tmp_path / "channels.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tool = {t.name: t for t in rt.manifest.tools}["listChannels"]
    assert tool.backend == "implemented", tool.simulated_reason
    assert call(rt, "c1", tool.name, {"availability": "available"})["success"]
    other = call(rt, "c1", tool.name, {"availability": "all"})
    assert not other["success"] and "availability" in other["error"]["message"], other
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


def test_openapi_30_boolean_exclusive_bounds_are_bounds_not_the_number_one() -> None:
    check = ArgsValidator(
        {"properties": {"limit": {"type": "integer", "minimum": 0, "exclusiveMinimum": True, "maximum": 9}}}
    )
    assert check({"limit": 1}) == {"limit": 1}
    with pytest.raises(ArgumentError):
        check({"limit": 0})


def test_a_sort_direction_named_sort_and_an_order_by_the_entity_itself_bind(tmp_path: Path) -> None:
    """OpenAQ: ``sort`` (asc|desc) is the direction, ``order_by`` (default ``country``) the field, and
    ``country`` on a country orders by its name; ``limit`` has ``exclusiveMinimum: true``."""
    params = [
        {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
        },
        {
            "name": "sort",
            "in": "query",
            "schema": {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
        },
        {
            "name": "order_by",
            "in": "query",
            "schema": {"type": "string", "enum": ["country", "count"], "default": "country"},
        },
    ]
    fields = {"code": {"type": "string"}, "name": {"type": "string"}, "count": {"type": "integer"}}
    country = {"type": "object", "properties": fields}
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Air", "version": "1"},
        "paths": {
            "/v2/countries": {
                "get": {
                    "operationId": "countries_get",
                    "parameters": params,
                    "responses": _ok({"type": "array", "items": {"$ref": "#/components/schemas/Country"}}),
                }
            }
        },
        "components": {"schemas": {"Country": country}},
    }
    spec = tmp_path / "air.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tool = rt.manifest.tools[0]
    assert tool.backend == "implemented" and tool.listing is not None, tool.simulated_reason
    assert (tool.listing.order_arg, tool.listing.sort_arg) == ("sort", "order_by")
    names = [r["name"] for r in call(rt, "a1", tool.name, {"sort": "desc"})["data"]]
    assert names == sorted(names, reverse=True), names
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


def test_a_required_key_argument_of_a_list_scopes_its_rows_or_filters_the_field_named_for_it(
    tmp_path: Path,
) -> None:
    """``GET /players?teamid=`` (players carry no team field) lists a team's players, the way
    ``/teams/{teamid}/players`` would; ``GET /lettings?branchID=`` filters the lettings' ``Branch``."""
    team = {"type": "object", "properties": {"TeamId": {"type": "integer"}, "Name": {"type": "string"}}}
    player = {"type": "object", "properties": {"PlayerId": {"type": "integer"}, "Name": {"type": "string"}}}
    letting = {"type": "object", "properties": {"Branch": {"type": "string"}, "Rent": {"type": "number"}}}

    def query(name: str) -> dict[str, Any]:
        return {"name": name, "in": "query", "required": True, "schema": {"type": "string"}}

    def listed(op: str, schema: str, params: list[dict[str, Any]]) -> dict[str, Any]:
        rows = {"type": "array", "items": {"$ref": f"#/components/schemas/{schema}"}}
        return {"get": {"operationId": op, "parameters": params, "responses": _ok(rows)}}

    doc = {
        "openapi": "3.0.3",
        "info": {"title": "League", "version": "1"},
        "paths": {
            "/teams": listed("listTeams", "Team", []),
            "/players": listed("listPlayers", "Player", [query("teamid")]),
            "/lettings": listed("listLettings", "Letting", [query("branchID")]),
        },
        "components": {"schemas": {"Team": team, "Player": player, "Letting": letting}},
    }
    spec = tmp_path / "league.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tools = {t.name: t for t in rt.manifest.tools}
    assert tools["listPlayers"].backend == "implemented", tools["listPlayers"].simulated_reason
    assert tools["listLettings"].arg_columns == {"branchID": "Branch"}, tools["listLettings"]
    row = rt.select(None, "player")[0]
    found = call(rt, "k1", "listPlayers", {"teamid": str(row["team_id"])})["data"]
    assert found and {r["PlayerId"] for r in found} == {
        r["PlayerId"] for r in rt.select(None, "player") if r["team_id"] == row["team_id"]
    }
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


def test_a_number_key_is_an_integer_and_a_numeric_field_is_no_reference_by_name(tmp_path: Path) -> None:
    """bulksms declares webhook ``id: number``; Docker Hub's tags carry ``repository: integer`` (the
    repository's number) under ``/repositories/{repository}`` (its name), and answer HEAD without a body."""
    hook = {"type": "object", "properties": {"id": {"type": "number"}, "url": {"type": "string"}}}
    tag = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "repository": {"type": "integer"},
            "size": {"type": "integer"},
        },
    }
    repo, name = _param("repository"), _param("tag")
    hooks = {"$ref": "#/components/schemas/Hook"}
    tags = {"$ref": "#/components/schemas/Tag"}
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Hub", "version": "1"},
        "paths": {
            "/webhooks": {
                "get": {"operationId": "listHooks", "responses": _ok({"type": "array", "items": hooks})},
            },
            "/webhooks/{id}": {
                "get": {"operationId": "getHook", "parameters": [_param("id")], "responses": _ok(hooks)},
            },
            "/repositories/{repository}/tags": {
                "get": {
                    "operationId": "listTags",
                    "parameters": [repo],
                    "responses": _ok({"type": "array", "items": tags}),
                }
            },
            "/repositories/{repository}/tags/{tag}": {
                "get": {"operationId": "getTag", "parameters": [repo, name], "responses": _ok(tags)},
                "head": {"operationId": "checkTag", "parameters": [repo, name], "responses": _ok(tags)},
            },
        },
        "components": {"schemas": {"Hook": hook, "Tag": tag}},
    }
    spec = tmp_path / "hub.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    hook_entity, tag_entity = rt.manifest.entity("webhook"), rt.manifest.entity("tag")
    assert hook_entity is not None and hook_entity.pk_type == "integer"
    assert tag_entity is not None
    columns = {c.name: c for c in tag_entity.columns}
    assert columns["repository"].type == "integer" and columns["repository"].ref is None
    assert columns["repository_id"].ref == "repository"
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []


def test_a_game_log_feed_keeps_the_columns_its_arguments_filter_and_counts_its_games(tmp_path: Path) -> None:
    """``/{format}/PlayerGameStatsBySeason/{season}/{playerid}/{numberofgames}`` over a 50-field log:
    ``Season`` and ``PlayerID`` survive the column cap, ``PlayerID`` references the player, and
    ``numberofgames`` (text on the path) is the page size."""
    fmt = {
        "name": "format",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "enum": ["XML", "JSON"]},
    }
    stats = {f"Stat{i:02d}": {"type": "integer"} for i in range(48)}
    tail = {"Season": {"type": "integer"}, "PlayerID": {"type": "integer"}}
    log = {"type": "object", "properties": {"StatID": {"type": "integer"}, **stats, **tail}}
    player = {"type": "object", "properties": {"PlayerID": {"type": "integer"}, "Name": {"type": "string"}}}
    params = [fmt, _param("season"), _param("playerid"), _param("numberofgames")]
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Logs", "version": "1"},
        "paths": {
            "/{format}/Player/{playerid}": {
                "get": {
                    "operationId": "Player",
                    "parameters": [fmt, _param("playerid")],
                    "responses": _ok({"$ref": "#/components/schemas/Player"}),
                }
            },
            "/{format}/PlayerGameStatsBySeason/{season}/{playerid}/{numberofgames}": {
                "get": {
                    "operationId": "PlayerGameLogsBySeason",
                    "parameters": params,
                    "responses": _ok(
                        {"type": "array", "items": {"$ref": "#/components/schemas/PlayerGameLog"}}
                    ),
                }
            },
        },
        "components": {"schemas": {"Player": player, "PlayerGameLog": log}},
    }
    spec = tmp_path / "logs.json"
    spec.write_text(json.dumps(doc))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    tool = {t.name: t for t in rt.manifest.tools}["PlayerGameLogsBySeason"]
    assert tool.backend == "implemented" and tool.limit_arg == "numberofgames", tool.simulated_reason
    entity = rt.manifest.entity(tool.entity or "")
    assert entity is not None
    columns = {c.name: c for c in entity.columns}
    assert "Season" in columns and columns["PlayerID"].ref == "player"
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
