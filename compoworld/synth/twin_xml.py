"""The REST half of a twin call to a tool whose spec declares its body only as XML.

The body is held to what a client of the real API parses: the declared Content-Type, well-formed
XML, the protocol's root (``CreateUserResponse``, with its ``CreateUserResult`` and
``ResponseMetadata/RequestId`` for AWS's query protocol; the error layout on a failure), and the
content read back by the schema (``compoworld.runtime.xml_body.parse``: arrays, numbers and
booleans known from it) equal to the uniform route's ``data`` written the same way; the read-back
body is then strictly checked as a JSON body is (``compoworld.runtime.conform``).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from compoworld.contracts import ToolResult
from compoworld.manifest import ToolDef, XmlWire
from compoworld.runtime.xml_body import error_code_name, parse, render, safe_name

__all__ = ["xml_body_problems"]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


def _layout_problems(root: ET.Element, wire: XmlWire, result: ToolResult, declared: bool) -> list[str]:
    """What the root element and the protocol's envelope lack."""
    names = [_local(c.tag) for c in root]
    if not result.success:
        if wire.protocol == "aws-ec2":
            found = root.find("Errors/Error/Code")
            ok = _local(root.tag) == "Response" and "RequestID" in names
        elif wire.protocol != "xml":
            found = root.find("{*}Error/{*}Code")
            ok = _local(root.tag) == "ErrorResponse" and "RequestId" in names
        else:
            return []
        if not ok or found is None or found.text != error_code_name(wire, result.code):
            return [f"the XML error is not the {wire.protocol} error layout with code {result.code!r}"]
        return []
    want = wire.root if wire.protocol != "xml" else safe_name(wire.root)
    if _local(root.tag) != want:
        return [f"the XML root is <{_local(root.tag)}>, the spec's is <{want}>"]
    if wire.protocol == "aws-query" and (
        "ResponseMetadata" not in names
        or root.find("{*}ResponseMetadata/{*}RequestId") is None
        or (declared and wire.result not in names)
    ):
        return [f"the XML answer lacks the query protocol's {wire.result} or ResponseMetadata/RequestId"]
    if wire.protocol == "aws-ec2" and "requestId" not in names:
        return ["the XML answer lacks EC2's requestId"]
    return []


def xml_body_problems(
    tool: ToolDef, raw: bytes, content_type: str | None, result: ToolResult
) -> tuple[list[str], Any]:
    """(what is wrong with an XML REST body, the body read back by the schema or None)."""
    wire = tool.shape.xml
    assert wire is not None
    declared = tool.shape.declared
    if not raw.strip():
        if result.success and declared and wire.protocol != "aws-rest-xml":
            return ["an empty body where the spec declares an XML one"], None
        return [], None
    media = (content_type or "").split(";")[0].strip().lower()
    problems = (
        [] if media == wire.media.lower() else [f"Content-Type {media!r}, the spec declares {wire.media!r}"]
    )
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        return [*problems, f"the body is not well-formed XML: {exc}"], None
    problems += _layout_problems(root, wire, result, declared)
    if not result.success:
        return problems, None
    schema = tool.output_schema or {}
    got = parse(raw, schema, wire, declared)
    want = parse(render(result.data, schema, wire, "-", declared), schema, wire, declared)
    if _canonical(got) != _canonical(want):
        problems.append("the XML body's content differs from the uniform route's data")
    return problems, got


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
