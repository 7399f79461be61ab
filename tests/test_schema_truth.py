"""What schemathesis found on the starter services, pinned one by one (tests/test_schemathesis_service.py
finds them again at random): formats held, oneOf alternatives checked, deepObject keys with
brackets, objects in the simple style, a JSON column holding a bare number, a null body."""

from __future__ import annotations

from typing import Any

import pytest

from compoworld.manifest import ToolDef
from compoworld.runtime.validate import ArgsValidator, ArgumentError
from compoworld.runtime.wire import WireFormat


def _validator(**props: Any) -> ArgsValidator:
    return ArgsValidator({"type": "object", "properties": props})


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date", "2026-03-04", "2026-13-01"),
        ("date-time", "2026-03-04T10:00:00Z", "2024-01-01T12:99:00Z"),
        ("date-time", "2026-03-04T10:00", "r\u00c6garbage"),
        ("date-time", "2026-03-04", "04/03/2026"),
        ("email", "ann@example.com", "useratexample.com"),
    ],
)
def test_a_string_argument_is_held_to_its_format(fmt: str, good: str, bad: str) -> None:
    check = _validator(when={"type": "string", "format": fmt})
    assert check({"when": good}) == {"when": good}
    with pytest.raises(ArgumentError, match=f"must be a {fmt}"):
        check({"when": bad})


def test_a_uuid_format_stays_an_annotation() -> None:
    """A simulated world's ids are its own (``com_uigwq7zkc3``), wherever the spec says uuid."""
    assert _validator(id={"type": "string", "format": "uuid"})({"id": "com_uigwq7zkc3"})


def test_one_of_alternatives_are_checked_and_overlap_is_no_error() -> None:
    check = _validator(
        to={"oneOf": [{"type": "array", "items": {"type": "string", "maxLength": 3}}, {"type": "string"}]},
        who={"oneOf": [{"type": "object"}, {"type": "object", "properties": {"a": {"type": "string"}}}]},
    )
    assert check({"to": ["abc"], "who": {"a": "x"}})  # fits both alternatives of who: taken
    with pytest.raises(ArgumentError):
        check({"to": ["abcd"]})


def _tool(**props: Any) -> ToolDef:
    return ToolDef(
        name="listThings",
        description="",
        kind="read",
        operation="list",
        backend="implemented",
        input_schema={"type": "object", "properties": props},
        arg_locations={k: "query" for k in props},
    )


def test_deep_object_keys_holding_brackets_and_empty_keys_decode() -> None:
    wire = WireFormat(_tool(updated={"type": "object"}))
    args = wire.decode({}, [("updated[a[][b]", "1"), ("updated[]", "x")], {})
    assert args == {"updated": {"a[": {"b": "1"}, "": "x"}}


def test_an_object_in_the_simple_style_decodes() -> None:
    wire = WireFormat(_tool(meta={"type": "object"}))
    assert wire.decode({}, [("meta", "k,v,k2,v2")], {}) == {"meta": {"k": "v", "k2": "v2"}}
    assert wire.decode({}, [("meta", "k=v,k2=v2")], {}) == {"meta": {"k": "v", "k2": "v2"}}
    assert wire.decode({}, [("meta", '{"k": 1}')], {}) == {"meta": {"k": 1}}


def test_a_null_or_blank_json_body_is_refused_not_read_as_none() -> None:
    from starlette.testclient import TestClient

    from compoworld.runtime import ServiceRuntime, create_service_app
    from compoworld.settings import Settings, bundled_library

    cfg = Settings.defaults(admin_token="t")
    runtime = ServiceRuntime.from_folder(bundled_library() / "govuk_pay", cfg)
    runtime.fork("ep-null")
    client = TestClient(create_service_app(runtime, cfg))
    headers = {"X-Episode-Id": "ep-null", "Content-Type": "application/json"}
    for body in (b"null", b"\r\n"):
        answer = client.post("/v1/payments", content=body, headers=headers)
        assert answer.status_code in (400, 422), (body, answer.status_code, answer.text)


def test_a_simple_style_value_holding_a_comma_is_read_up_to_the_next_declared_key() -> None:
    meta = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "parent_folder_id": {"type": "string"}},
    }
    wire = WireFormat(_tool(meta=meta))
    decoded = wire.decode({}, [("meta", "name,a,b,parent_folder_id,c")], {})
    assert decoded == {"meta": {"name": "a,b", "parent_folder_id": "c"}}


def test_a_huge_page_offset_is_an_empty_page_not_a_failure() -> None:
    from starlette.testclient import TestClient

    from compoworld.runtime import ServiceRuntime, create_service_app
    from compoworld.settings import Settings, bundled_library

    cfg = Settings.defaults(admin_token="t")
    runtime = ServiceRuntime.from_folder(bundled_library() / "postmark", cfg)
    client = TestClient(create_service_app(runtime, cfg))
    answer = client.get("/templates", params={"count": 10, "offset": 10**30})
    assert answer.status_code == 200, answer.text


def test_a_key_past_sqlites_integer_is_not_found() -> None:
    from starlette.testclient import TestClient

    from compoworld.runtime import ServiceRuntime, create_service_app
    from compoworld.settings import Settings, bundled_library

    cfg = Settings.defaults(admin_token="t")
    runtime = ServiceRuntime.from_folder(bundled_library() / "postmark", cfg)
    runtime.fork("ep-big")
    client = TestClient(create_service_app(runtime, cfg))
    answer = client.delete(f"/triggers/inboundrules/{10**30}", headers={"X-Episode-Id": "ep-big"})
    assert answer.status_code == 404, answer.text
