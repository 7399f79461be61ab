"""A JSON body as the XML its spec declares, and back (``XmlWire``: the media and element layout).

``render`` writes a success body, ``render_error`` a failure, ``parse`` reads a body back by its
schema (the conformance checker's and a client's view: arrays, numbers and booleans known from the
schema, since XML text carries no types). The layout, per ``XmlWire.protocol``:

- ``xml`` (the OpenAPI XML object): the root named by ``xml.name`` or the component; a property is
  an element named by its ``xml.name`` or its key, an attribute where ``xml.attribute``; an array's
  items repeat under the property's name unless ``xml.wrapped`` (then inside it, named by the items'
  ``xml.name``); ``xml.prefix``/``xml.namespace`` qualify an element;
- ``aws-query``: ``<OpResponse xmlns=..><OpResult>body</OpResult><ResponseMetadata><RequestId>``;
  lists wrapped, items ``<member>`` unless named or ``wrapped: false`` (AWS's flattened lists); maps as
  ``<entry><key/><value/></entry>``; ``aws-ec2``: ``<OpResponse><requestId/>body</OpResponse>``, items
  ``<item>``; ``aws-rest-xml``: the body's own root, AWS's lists and maps;
- errors: ``<ErrorResponse><Error><Type>Sender</Type><Code/><Message/></Error><RequestId/>`` (AWS;
  EC2's ``<Response><Errors><Error>..</Error></Errors><RequestID/>``), the spec's declared error body
  under its own root, else ``<error><code/><message/></error>``.

Text is escaped by ``xml.sax.saxutils`` and stripped of what XML 1.0 cannot carry (control
characters, lone surrogates, U+FFFE/U+FFFF become U+FFFD), so any value gives well-formed XML; a key
that is no XML name is written with its invalid characters as ``_`` (read back by the schema). A
request id is derived from the tool and the body, so the same call answers the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
import xml.etree.ElementTree as ET
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from compoworld.manifest import XmlWire
from compoworld.runtime.schema_read import schema_props, schema_types

__all__ = [
    "error_code_name",
    "parse",
    "parse_request",
    "render",
    "render_error",
    "render_request",
    "request_id",
    "safe_name",
    "xml_text",
]

_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NAME_START = re.compile(r"[A-Za-z_]")
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
_ENTITIES = {"\r": "&#13;"}
_ATTR_ENTITIES = {"\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}
_MAX_DEPTH = 40
#: What AWS calls a failure the spec names no error for.
_AWS_CODES = {
    "invalid_arguments": "ValidationError",
    "not_found": "ResourceNotFound",
    "conflict": "ResourceInUse",
    "invalid_transition": "IncorrectState",
    "payload_too_large": "RequestEntityTooLarge",
}


def xml_text(value: str) -> str:
    """``value`` with every character XML 1.0 cannot carry replaced by U+FFFD."""
    return _INVALID.sub("\ufffd", value)


def safe_name(name: str) -> str:
    """An XML element name for a key: invalid characters as ``_``, a leading ``_`` where it starts
    with no letter (``@type`` -> ``_type``, ``2fa`` -> ``_2fa``)."""
    text = _NAME_BAD.sub("_", xml_text(name)) or "_"
    return text if _NAME_START.match(text) else f"_{text}"


def request_id(*parts: Any) -> str:
    """A request id fixed by what was asked and answered (a UUID's form)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def _xml_of(schema: Any) -> dict[str, Any]:
    found = schema.get("xml") if isinstance(schema, dict) else None
    return found if isinstance(found, dict) else {}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, default=str)


class _Writer:
    """Writes one body (a writer per call: ``parts`` collects the text)."""

    def __init__(self, wire: XmlWire) -> None:
        self.aws = wire.protocol != "xml"
        self.item = "item" if wire.protocol == "aws-ec2" else "member"
        self.parts: list[str] = []

    def open(self, name: str, attrs: dict[str, str] | None = None, empty: bool = False) -> None:
        text = "".join(f" {k}={quoteattr(xml_text(v), _ATTR_ENTITIES)}" for k, v in (attrs or {}).items())
        self.parts.append(f"<{name}{text}{'/' if empty else ''}>")

    def close(self, name: str) -> None:
        self.parts.append(f"</{name}>")

    def text(self, name: str, value: str) -> None:
        self.parts.append(f"<{name}>{escape(xml_text(value), _ENTITIES)}</{name}>")

    def element(self, name: str, value: Any, schema: Any, depth: int = 0) -> None:
        """``value`` as the element ``name`` (a qualified name where the schema gives a prefix)."""
        if value is None:
            return
        declared = _xml_of(schema)
        attrs: dict[str, str] = {}
        prefix, namespace = declared.get("prefix"), declared.get("namespace")
        if isinstance(prefix, str) and prefix and isinstance(namespace, str) and namespace:
            name = f"{safe_name(prefix)}:{name}"
            attrs[f"xmlns:{safe_name(prefix)}"] = namespace
        elif isinstance(namespace, str) and namespace and depth == 0:
            attrs["xmlns"] = namespace
        if isinstance(value, list):
            self.open(name, attrs)
            self.items(value, schema, None if self.aws else name, depth + 1)
            self.close(name)
        elif isinstance(value, dict) and depth < _MAX_DEPTH:
            inner, attributes = self.members(value, schema if isinstance(schema, dict) else {}, depth + 1)
            attrs.update(attributes)
            if not inner:
                self.open(name, attrs, empty=True)
                return
            self.open(name, attrs)
            self.parts += inner
            self.close(name)
        elif attrs:
            self.open(name, attrs)
            self.parts.append(escape(xml_text(_scalar(value)), _ENTITIES))
            self.close(name)
        else:
            self.text(name, _scalar(value))

    def items(self, values: list[Any], schema: Any, name: str | None, depth: int) -> None:
        """An array's items, each an element named by the items' ``xml.name``, else ``name`` (an
        unwrapped array repeats its property's name), else AWS's ``member``/``item``."""
        items = schema.get("items") if isinstance(schema, dict) else None
        item_name = _xml_of(items).get("name")
        tag = safe_name(item_name) if isinstance(item_name, str) and item_name else name
        if tag is None:
            tag = self.item if self.aws else "item"
        for value in values:
            self.element(tag, value, items, depth)

    def members(
        self, value: dict[str, Any], schema: dict[str, Any], depth: int
    ) -> tuple[list[str], dict[str, str]]:
        """An object's members as element texts, and those the schema makes attributes."""
        props, _ = schema_props(schema)
        extra = schema.get("additionalProperties")
        outer, self.parts = self.parts, []
        attrs: dict[str, str] = {}
        try:
            for key, item in value.items():
                sub = props.get(key)
                if item is None:
                    continue
                if sub is None and (self.aws or isinstance(extra, dict) or not _is_name(key)):
                    self.entry(str(key), item, extra if isinstance(extra, dict) else {}, depth)
                    continue
                declared = _xml_of(sub)
                name = safe_name(declared["name"] if isinstance(declared.get("name"), str) else str(key))
                if declared.get("attribute") is True and not isinstance(item, (dict, list)):
                    attrs[name] = _scalar(item)
                elif isinstance(item, list) and not self._wrapped(sub):
                    self.items(item, sub, name, depth)
                else:
                    self.element(name, item, sub, depth)
            return self.parts, attrs
        finally:
            self.parts = outer

    def entry(self, key: str, value: Any, schema: Any, depth: int) -> None:
        """A map's member: ``<entry><key>k</key><value>v</value></entry>`` (AWS's layout)."""
        self.open("entry")
        self.text("key", key)
        self.element("value", value, schema, depth + 1)
        self.close("entry")

    def _wrapped(self, schema: Any) -> bool:
        wrapped = _xml_of(schema).get("wrapped")
        return wrapped if isinstance(wrapped, bool) else self.aws


def _is_name(key: str) -> bool:
    return safe_name(key) == key


def _root_attrs(wire: XmlWire) -> dict[str, str]:
    return {"xmlns": wire.namespace} if wire.namespace else {}


def render(body: Any, schema: dict[str, Any], wire: XmlWire, rid: str, declared: bool = True) -> bytes:
    """A success body as its XML (``declared``: whether the spec declares the body; an undeclared
    one is the protocol's envelope alone for AWS, CompoWorld's own body under the root otherwise)."""
    writer = _Writer(wire)
    if wire.protocol in ("aws-query", "aws-ec2"):
        writer.open(wire.root, _root_attrs(wire))
        if wire.protocol == "aws-ec2":
            writer.text("requestId", rid)
        if declared and isinstance(body, dict):
            inner, _ = writer.members(body, schema, 1)
            if wire.result is not None:
                writer.open(wire.result, empty=not inner)
                if inner:
                    writer.parts += inner
                    writer.close(wire.result)
            else:
                writer.parts += inner
        elif wire.result is not None:
            writer.open(wire.result, empty=True)
        if wire.protocol == "aws-query":
            writer.open("ResponseMetadata")
            writer.text("RequestId", rid)
            writer.close("ResponseMetadata")
        writer.close(wire.root)
    elif wire.protocol == "aws-rest-xml" and not declared:
        return b""
    else:
        root = dict(schema) if isinstance(schema, dict) else {}
        root["xml"] = {**_xml_of(schema), **({"namespace": wire.namespace} if wire.namespace else {})}
        writer.element(safe_name(wire.root), body, root)
        if body is None:
            writer.open(safe_name(wire.root), _root_attrs(wire), empty=True)
    return _document(writer.parts)


def _document(parts: list[str]) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + "".join(parts)).encode("utf-8")


def error_code_name(wire: XmlWire, code: str) -> str:
    """The error name a failure answers with: the spec's own for the code, else AWS's or the code."""
    if code in wire.error_codes:
        return wire.error_codes[code]
    if wire.protocol != "xml" and code in _AWS_CODES:
        return _AWS_CODES[code]
    return "".join(part.capitalize() for part in code.split("_")) if wire.protocol != "xml" else code


def render_error(
    wire: XmlWire, code: str, message: str, status: int, rid: str, body: Any = None, schema: Any = None
) -> bytes:
    """A failure in the spec's error layout (``body``: the declared error body, for ``xml``)."""
    writer = _Writer(wire)
    name = error_code_name(wire, code)
    if wire.protocol == "aws-ec2":
        writer.open("Response")
        writer.open("Errors")
        writer.open("Error")
        writer.text("Code", name)
        writer.text("Message", message)
        writer.close("Error")
        writer.close("Errors")
        writer.text("RequestID", rid)
        writer.close("Response")
    elif wire.protocol != "xml":
        writer.open("ErrorResponse", _root_attrs(wire))
        writer.open("Error")
        writer.text("Type", "Sender" if status < 500 else "Receiver")
        writer.text("Code", name)
        writer.text("Message", message)
        writer.close("Error")
        writer.text("RequestId", rid)
        writer.close("ErrorResponse")
    elif body is not None:
        writer.element(safe_name(wire.error_root or "error"), body, schema or {})
    else:
        writer.element("error", {"code": name, "message": message}, {})
    return _document(writer.parts)


# -- reading back ------------------------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


def parse(raw: bytes, schema: dict[str, Any], wire: XmlWire, declared: bool = True) -> Any:
    """A body's XML read back as the JSON value it carries, by the schema (None: no body)."""
    if not raw.strip():
        return None
    root = ET.fromstring(raw)
    reader = _Reader(wire)
    if wire.protocol in ("aws-query", "aws-ec2"):
        if not declared:
            return None
        node: ET.Element | None = root
        if wire.result is not None:
            node = next((c for c in root if _local(c.tag) == wire.result), None)
        if node is None:
            return {}
        skip = {"requestId"} if wire.protocol == "aws-ec2" else set()
        return reader.object(node, schema, skip)
    return reader.value(root, schema, 0)


class _Reader:
    def __init__(self, wire: XmlWire) -> None:
        self.aws = wire.protocol != "xml"

    def value(self, elem: ET.Element, schema: Any, depth: int) -> Any:
        schema = schema if isinstance(schema, dict) else {}
        types, _ = schema_types(schema)
        props, _ = schema_props(schema)
        if "array" in types or (not types and "items" in schema):
            return [self.value(c, schema.get("items"), depth + 1) for c in elem]
        if ("object" in types or props) and depth < _MAX_DEPTH:
            return self.object(elem, schema, set(), depth)
        if not types and len(elem) and depth < _MAX_DEPTH:
            return self.object(elem, schema, set(), depth)
        return _typed(elem.text or "", types)

    def object(self, elem: ET.Element, schema: Any, skip: set[str], depth: int = 0) -> dict[str, Any]:
        """An element's attributes and children as an object's members, named as the schema names them."""
        schema = schema if isinstance(schema, dict) else {}
        props, _ = schema_props(schema)
        out: dict[str, Any] = {}
        by_name: dict[str, str] = {}
        for key, sub in props.items():
            declared = _xml_of(sub)
            name = safe_name(declared["name"] if isinstance(declared.get("name"), str) else key)
            if declared.get("attribute") is True:
                if name in elem.attrib:
                    out[key] = _typed(elem.attrib[name], schema_types(sub)[0])
                continue
            by_name.setdefault(name, key)
            item_name = _unwrapped_item_name(sub, self.aws)
            if item_name is not None:
                by_name.setdefault(item_name, key)
        extra = schema.get("additionalProperties")
        for child in elem:
            name = _local(child.tag)
            if name in skip:
                continue
            member = by_name.get(name)
            if member is None and name == "entry" and child.find("key") is not None:
                found = child.find("value")
                value = self.value(found, extra, depth + 1) if found is not None else None
                out[child.findtext("key") or ""] = value
            elif member is None:
                out[name] = self.value(child, {}, depth + 1)
            elif "array" in schema_types(props[member])[0] and not self._wrapped(props[member]):
                out.setdefault(member, []).append(self.value(child, props[member].get("items"), depth + 1))
            else:
                out[member] = self.value(child, props[member], depth + 1)
        return out

    def _wrapped(self, schema: Any) -> bool:
        wrapped = _xml_of(schema).get("wrapped")
        return wrapped if isinstance(wrapped, bool) else self.aws


def _unwrapped_item_name(schema: Any, aws: bool) -> str | None:
    """The element name an unwrapped array's items repeat under, where the items name it."""
    if not isinstance(schema, dict) or "array" not in schema_types(schema)[0]:
        return None
    wrapped = _xml_of(schema).get("wrapped")
    if (wrapped if isinstance(wrapped, bool) else aws) is True:
        return None
    name = _xml_of(schema.get("items")).get("name")
    return safe_name(name) if isinstance(name, str) and name else None


def _typed(text: str, types: set[str]) -> Any:
    """An element's text as the JSON type its schema names (text where none fits)."""
    if "string" in types or not types:
        return text
    if "boolean" in types and text in ("true", "false"):
        return text == "true"
    if "integer" in types and re.fullmatch(r"-?\d+", text.strip()):
        return int(text)
    if types & {"number", "integer"}:
        try:
            number = float(text)
        except ValueError:
            return text
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    return text


def render_request(root: str, value: Any, schema: dict[str, Any], aws: bool = False) -> bytes:
    """A request body as the XML a client sends (``aws``: REST-XML's wrapped ``member`` lists)."""
    writer = _Writer(XmlWire(protocol="aws-rest-xml" if aws else "xml"))
    writer.element(safe_name(root), value, schema)
    if value is None:
        writer.open(safe_name(root), empty=True)
    return _document(writer.parts)


def parse_request(raw: bytes, schema: dict[str, Any], aws: bool = False) -> Any:
    """A request body's XML as the value its schema reads (the root element's name is not checked).

    ``ValueError`` for text that is not well-formed XML. Expat expands no external entity and bounds
    internal ones, and the reading stops descending past a fixed depth.
    """
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        raise ValueError(f"the body is not well-formed XML: {exc}") from exc
    return _Reader(XmlWire(protocol="aws-rest-xml" if aws else "xml")).value(root, schema, 0)
