"""The spec's own wire format, both ways: a REST request <-> a tool's flat arguments.

A REST route accepts what the spec declares and what a client of the real API sends: path
parameters, query parameters in their declared style (repeated keys, ``a,b``, ``a|b``,
``filter[status]=x``, ``city[]=a``), header parameters, and a JSON, form-urlencoded or
multipart body (dispatched on the request's ``Content-Type``, so a JSON client of a form API
is not turned away either; ``a[0][b]=x`` fills an array of objects). A whole body in its own
media (``application/octet-stream``, ``image/png``, ``text/plain``) is the body argument's text
(bytes decoded as UTF-8, undecodable ones replaced), or the JSON text of a number, array or
object a text media carries; a form's fields are a whole object body's members, a multipart
body's one part (a file) a whole binary body. Names travel as the spec spells them (``from``, ``page[size]``,
``_id``) while tool arguments carry safe names (``from_``, ``page_size``, ``id``): the tool's
``wire_names`` map between the two. A key that names no argument is passed through under its
own name, so the argument check refuses it by name instead of it being dropped.

``encode`` is the inverse (the conformance checker and tests send requests the way a client of
the real API would: a whole body in its declared media, never JSON for bytes or text; a binary
field as a multipart file part; no URL fragment).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from compoworld.manifest import ToolDef
from compoworld.runtime.aws_query import flatten, unflatten
from compoworld.runtime.validate import coerce_text
from compoworld.runtime.xml_body import parse_request, render_request

__all__ = ["WireFormat", "WireRequest", "encode", "is_xml_media", "media_kind", "parse_form"]

DELIMITERS = {"csv": ",", "spaceDelimited": " ", "pipeDelimited": "|", "tabDelimited": "\t"}
_BRACKETS = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])+)$")
_BOUNDARY = "compoworld-boundary-7f3a"


def is_xml_media(content_type: str | None) -> bool:
    """Whether a Content-Type is XML (``application/xml``, ``text/xml``, ``application/atom+xml``)."""
    kind = (content_type or "").split(";")[0].strip().lower()
    return kind in ("application/xml", "text/xml") or kind.endswith("+xml")


def media_kind(content_type: str | None) -> str:
    """``json``, ``form``, ``multipart`` or ``other`` for a Content-Type header value."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "application/x-www-form-urlencoded":
        return "form"
    if kind.startswith("multipart/"):
        return "multipart"
    if not kind or "json" in kind:
        return "json"
    return "other"


def _types(schema: dict[str, Any]) -> set[str]:
    raw = schema.get("type")
    types = {raw} if isinstance(raw, str) else set(raw) if isinstance(raw, list) else set()
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict):
                types |= _types(sub)
    if not types and "properties" in schema:
        types.add("object")
    if not types and "items" in schema:
        types.add("array")
    types.discard("null")
    return types


def _sanitised(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name).lower()


class WireFormat:
    """Decodes REST requests into one tool's arguments (compiled once per tool)."""

    def __init__(self, tool: ToolDef) -> None:
        #: Query keys the operation fixes (``Action=CreateUser``): they pick it, they are no argument.
        self.fixed_query = dict(tool.fixed_query)
        self.fixed_headers = {k.lower(): v for k, v in tool.fixed_headers.items()}
        self._compile(
            tool.input_schema.get("properties") or {},
            dict(tool.arg_locations),
            dict(tool.arg_styles),
            tool.wire_names,
            tool.body_whole,
        )
        #: AWS's query protocol: ``Tags.member.1.Key=env`` names a member of the argument ``Tags``.
        self.aws_query: str | None = aws_query_of(tool)
        xml = tool.response.xml if tool.response is not None else None
        #: A request body the spec declares in XML (read by the body's schema), and whether its
        #: lists follow REST-XML's ``member`` layout.
        self.xml_request = xml is not None and xml.request_root is not None and not self.aws_query
        self.xml_aws = xml is not None and xml.protocol == "aws-rest-xml"

    def _compile(
        self,
        props: Mapping[str, Any],
        locations: dict[str, str],
        styles: dict[str, str],
        wire_names: Mapping[str, str],
        whole_body: str | None,
    ) -> None:
        self.props: dict[str, dict[str, Any]] = {k: v for k, v in props.items() if isinstance(v, dict)}
        self.aws_query = None
        self.locations = locations
        self.styles = styles
        self.whole_body = whole_body
        self.headers = {
            wire_names.get(a, a).lower(): a for a, loc in self.locations.items() if loc == "header"
        }
        self._by_wire: dict[str, str] = {}
        for arg in self.props:  # weakest first: a sanitised spelling, the argument's own name, the spec's
            self._by_wire.setdefault(_sanitised(arg), arg)
        for arg in self.props:
            self._by_wire[arg] = arg
        for arg in self.props:
            wire = wire_names.get(arg)
            if wire:
                self._by_wire[wire] = arg
        #: Per location, the spec's names of that location's arguments (a body ``employeeId`` is
        #: ``body_employeeId`` when a path variable took ``employeeId``).
        self._own: dict[str, dict[str, str]] = {}
        for arg in self.props:
            where = self.locations.get(arg, "body")
            self._own.setdefault(where, {})[wire_names.get(arg, arg)] = arg
        whole = self.props.get(whole_body or "", {})
        types = _types(whole)
        #: Whether the whole body is an object whose members a form's fields are (else a form or
        #: multipart body carries the one value, and a raw body is its text).
        self.whole_has_fields = whole_body is not None and "object" in types
        #: Whether a raw (non-JSON) whole body is the argument's text as sent (a binary or text
        #: string, or an untyped body), rather than the JSON text of a number, array or object.
        self.whole_is_text = whole_body is not None and (not types or "string" in types)
        self._fields: WireFormat | None = None
        if self.whole_has_fields:
            members = whole.get("properties")
            self._fields = WireFormat.__new__(WireFormat)
            self._fields._compile(members if isinstance(members, dict) else {}, {}, {}, {}, None)

    def from_xml(self, raw: bytes) -> Any:
        """An XML request body as the JSON value its schema reads: the whole body argument's value,
        or an object keyed by the spec's names of the body's fields; ``ValueError`` if not XML."""
        if self.whole_body is not None:
            return parse_request(raw, self.props.get(self.whole_body, {}), self.xml_aws)
        fields = {
            wire: self.props[arg] for wire, arg in self._own.get("body", {}).items() if arg in self.props
        }
        return parse_request(raw, {"type": "object", "properties": fields}, self.xml_aws)

    def arg_of(self, key: str, where: str | None = None) -> str:
        """The argument a wire key names, in ``where`` first (the key itself when it names none)."""
        if where is not None:
            found = self._own.get(where, {}).get(key)
            if found is not None:
                return found
        found = self._by_wire.get(key)
        if found is None:
            found = self._by_wire.get(_sanitised(key), key)
        return found

    # -- decoding -----------------------------------------------------------------------

    def misfixed(
        self,
        query: Iterable[tuple[str, str]],
        headers: Mapping[str, str],
        form: Iterable[tuple[str, str]] | None = None,
    ) -> str | None:
        """Why a request's fixed parameter is refused (sent with a value the spec does not allow,
        in the query string or, as a query-protocol POST sends it, a form body), or None; a fixed
        parameter left out is sent for the client (a router matched it)."""
        for key, value in [*query, *(form or ())]:
            allowed = self.fixed_query.get(key)
            if allowed is not None and value != allowed:
                return f"query parameter {key!r} must be {allowed!r}"
        for key, allowed in self.fixed_headers.items():
            value = headers.get(key)
            if value is not None and value != allowed:
                return f"header {key!r} must be {allowed!r}"
        return None

    def decode(
        self,
        path_params: Mapping[str, str],
        query: Iterable[tuple[str, str]],
        headers: Mapping[str, str],
        body: Any = None,
        form: Iterable[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        """The arguments of one request; where two places name one argument, path wins, then query,
        headers and the body (a parsed JSON value, or the items of a form or multipart body)."""
        args: dict[str, Any] = {}
        for name, value in path_params.items():
            arg = name if name in self.props else self.arg_of(name, "path")
            args[arg] = coerce_text(value, self.props.get(arg, {}))
        kept = [(k, v) for k, v in query if k not in self.fixed_query] if self.fixed_query else query
        for arg, value in self._strings(kept, "query").items():
            args.setdefault(arg, value)
        for wire, arg in self.headers.items():
            text = headers.get(wire)
            if text is not None:
                args.setdefault(arg, self._text(arg, [text], delimiter=","))
        if form is not None and self.whole_body is not None:
            value = self._whole_of(list(form))
            if value is not None:
                args.setdefault(self.whole_body, value)
        elif form is not None:  # a query-protocol POST names its Action and Version in the form
            fields = [(k, v) for k, v in form if k not in self.fixed_query] if self.fixed_query else form
            for arg, value in self._strings(fields, "body").items():
                args.setdefault(arg, value)
        elif self.whole_body is not None and body is not None:
            args.setdefault(self.whole_body, body)
        elif isinstance(body, dict):
            for key, value in body.items():
                args.setdefault(self.arg_of(str(key), "body"), value)
        return args

    def _whole_of(self, items: list[tuple[str, str]]) -> Any:
        """The whole body's value from a form's or multipart body's fields: an object of them, or
        the one field's value (a file part), or every field's value for an array; None for none."""
        if self._fields is not None:
            return self._fields._strings(items, "body")
        if not items:
            return None
        assert self.whole_body is not None
        return self._text(self.whole_body, [v for _, v in items], delimiter=",")

    def _strings(self, items: Iterable[tuple[str, str]], where: str) -> dict[str, Any]:
        """Query or form items: repeated keys, delimited arrays, bracketed and deepObject names."""
        seen: dict[str, list[str]] = {}
        nested: dict[str, dict[str, Any]] = {}
        dotted: dict[str, list[tuple[list[str], str]]] = {}
        for key, value in items:
            arg = self.arg_of(key, where)
            if arg in self.props:
                seen.setdefault(arg, []).append(value)
                continue
            head, dot, rest = key.partition(".")
            if self.aws_query and dot and self.arg_of(head, where) in self.props:
                dotted.setdefault(self.arg_of(head, where), []).append((rest.split("."), value))
                continue
            split = _bracketed(key)
            base = self.arg_of(split[0]) if split else None
            if split and base in self.props:
                path = split[1]
                if "object" in _types(self.props[base]) and "array" not in _types(self.props[base]):
                    _set_path(nested.setdefault(base, {}), path, value)  # deepObject: a[] is the key ""
                elif not any(path):
                    seen.setdefault(base, []).append(value)  # city[]=a&city[]=b
                else:
                    _set_path(nested.setdefault(base, {}), [p for p in path if p], value)
                continue
            seen.setdefault(arg, []).append(value)
        out = {
            arg: self._text(arg, values, delimiter=DELIMITERS.get(self.styles.get(arg, ""), ","))
            for arg, values in seen.items()
        }
        for arg, obj in nested.items():
            out.setdefault(arg, _coerce_tree(obj, self.props.get(arg, {})))
        for arg, pairs in dotted.items():
            schema = self.props.get(arg, {})
            out.setdefault(arg, _coerce_value(unflatten(pairs, schema), schema))
        return out

    def _text(self, arg: str, values: list[Any], delimiter: str) -> Any:
        """String values of one argument as the JSON type its schema asks for."""
        schema = self.props.get(arg, {})
        texts = [str(v) for v in values]
        types = _types(schema)
        if "array" in types and "string" not in types - {"array"}:
            raw_items = schema.get("items")
            items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
            parts: list[str] = []
            for text in texts:
                parts += _split(text, delimiter, self.styles.get(arg) is not None or len(texts) == 1)
            return [_from_text(p, items) for p in parts]
        if "object" in types and "string" not in types:
            try:
                return json.loads(texts[-1])
            except ValueError:
                return _simple_object(texts[-1], schema.get("properties"))
        return coerce_text(texts[-1], schema)


def _simple_object(text: str, props: Any = None) -> Any:
    """An object in OpenAPI's ``simple``/``form`` style: ``k=v,k2=v2`` (exploded) or ``k,v,k2,v2``
    (a value holding a comma is read up to the next declared key); the text itself when it is
    neither (the argument's check names the problem)."""
    parts = text.split(",") if text else []
    if parts and all("=" in p for p in parts):
        return dict(p.split("=", 1) for p in parts)
    keys = set(props) if isinstance(props, dict) else set()
    if parts and keys and parts[0] in keys:
        out: dict[str, str] = {}
        key, value = parts[0], list[str]()
        for part in parts[1:]:
            if part in keys and value and part not in out and part != key:
                out[key], key, value = ",".join(value), part, []
            else:
                value.append(part)
        out[key] = ",".join(value)
        return out
    if len(parts) % 2 == 0:
        return dict(zip(parts[::2], parts[1::2], strict=True))
    return text


def _split(text: str, delimiter: str, delimited: bool) -> list[str]:
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [p if isinstance(p, str) else json.dumps(p) for p in parsed]
    if text.startswith("{") and text.endswith("}"):  # one object's JSON text is one item
        try:
            if isinstance(json.loads(text), dict):
                return [text]
        except ValueError:
            pass
    if not delimited or not text:
        return [text] if text else []
    return [p for p in text.split(delimiter) if p != ""]


def _bracketed(key: str) -> tuple[str, list[str]] | None:
    """``a[b][c]`` as ``("a", ["b", "c"])``; a key whose own names hold brackets (``a[x[][y]``)
    splits at each ``][`` as a deepObject serializer writes it; None when ``key`` has no brackets."""
    match = _BRACKETS.match(key)
    if match:
        return match.group(1), [p[1:-1] for p in re.findall(r"\[[^\[\]]*\]", match.group(2))]
    head, bracket, _ = key.partition("[")
    if not bracket or not head or not key.endswith("]"):
        return None
    return head, key[len(head) + 1 : -1].split("][")


def _set_path(target: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        inner = target.setdefault(key, {})
        if not isinstance(inner, dict):
            inner = target[key] = {}
        target = inner
    target[path[-1]] = value


def _coerce_tree(obj: dict[str, Any], schema: dict[str, Any]) -> Any:
    """Bracketed form or query keys, nested, as the schema's types: ``a[0][b]=x`` is the array
    ``[{b: x}]`` where ``a`` is an array (indices in order), and a leaf is its schema's type."""
    if "array" in _types(schema) and obj and all(k.isdigit() for k in obj):
        raw_items = schema.get("items")
        items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
        return [_coerce_node(obj[k], items) for k in sorted(obj, key=int)]
    raw = schema.get("properties")
    props: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        found = props.get(key)
        out[key] = _coerce_node(value, found if isinstance(found, dict) else {})
    return out


def _coerce_value(value: Any, schema: dict[str, Any]) -> Any:
    """Text leaves of an already shaped value (lists and objects) as their schema's types."""
    if isinstance(value, list):
        raw = schema.get("items")
        return [_coerce_value(v, raw if isinstance(raw, dict) else {}) for v in value]
    if isinstance(value, dict):
        raw_props = schema.get("properties")
        props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        extra = schema.get("additionalProperties")
        return {
            k: _coerce_value(v, props.get(k) or (extra if isinstance(extra, dict) else {}))
            for k, v in value.items()
        }
    return _from_text(str(value), schema)


def aws_query_of(tool: ToolDef) -> str | None:
    """``aws-query`` or ``aws-ec2`` for a tool of AWS's query protocol (its answer's layout says so)."""
    wire = tool.response.xml if tool.response is not None else None
    return wire.protocol if wire is not None and wire.protocol in ("aws-query", "aws-ec2") else None


def _coerce_node(value: Any, schema: dict[str, Any]) -> Any:
    return _coerce_tree(value, schema) if isinstance(value, dict) else _from_text(str(value), schema)


def _from_text(text: str, schema: dict[str, Any]) -> Any:
    """One text value as its schema's type; the JSON text of an object or array parsed (a form
    field or a delimited item holding one), else as ``coerce_text`` reads it."""
    types = _types(schema)
    if types & {"object", "array"} and "string" not in types and text[:1] in ("[", "{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return coerce_text(text, schema)


# -- encoding (a client of the real API) ------------------------------------------------------


@dataclass
class WireRequest:
    """One REST request as a client of the real API sends it."""

    method: str
    path: str
    params: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None

    @property
    def url(self) -> str:
        if not self.params:
            return self.path
        return self.path + ("&" if "?" in self.path else "?") + urlencode(self.params)


def _text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _query_pairs(wire: str, value: Any, style: str | None) -> list[tuple[str, str]]:
    if isinstance(value, dict) and style == "deepObject":
        out: list[tuple[str, str]] = []
        for key, inner in value.items():
            out += _query_pairs(f"{wire}[{key}]", inner, "deepObject" if isinstance(inner, dict) else None)
        return out
    if isinstance(value, list) and style in DELIMITERS:
        return [(wire, DELIMITERS[style].join(_text_of(v) for v in value))]
    if isinstance(value, list):
        return [(wire, _text_of(v)) for v in value]
    return [(wire, _text_of(value))]


def encode(tool: ToolDef, args: dict[str, Any]) -> WireRequest:
    """The request a client of the real API sends for ``args``, in the spec's declared formats."""
    path = (tool.path or f"/tools/{tool.name}").partition("#")[0]  # a client never sends the fragment
    request = WireRequest(method=tool.method, path=path or "/")
    body: dict[str, Any] = {}
    aws = aws_query_of(tool)  # AWS's query protocol: flat ``A.member.1`` keys, a form body
    props = tool.input_schema.get("properties") or {}
    xml = tool.response.xml if tool.response is not None else None
    xml_root = xml.request_root if xml is not None and not aws and is_xml_media(tool.body_media) else None
    xml_aws = xml is not None and xml.protocol == "aws-rest-xml"
    for arg, value in args.items():
        where = tool.arg_locations.get(arg, "body")
        wire = tool.wire_names.get(arg, arg)
        if where == "path":
            request.path = request.path.replace("{" + arg + "}", quote(_text_of(value), safe=""))
        elif where == "query" and aws:
            request.params += flatten(wire, value, props.get(arg), flat_lists=aws == "aws-ec2")
        elif where == "query":
            request.params += _query_pairs(wire, value, tool.arg_styles.get(arg))
        elif where == "header":
            request.headers[wire] = (
                ",".join(map(_text_of, value)) if isinstance(value, list) else _text_of(value)
            )
        elif arg == tool.body_whole and xml_root is not None:
            request.content = render_request(xml_root, value, props.get(arg) or {}, xml_aws)
            request.headers["content-type"] = tool.body_media or "application/xml"
        elif arg == tool.body_whole:
            schema = (tool.input_schema.get("properties") or {}).get(arg)
            request.content, request.headers["content-type"] = _whole(
                wire, value, tool.body_media, schema if isinstance(schema, dict) else {}
            )
        else:
            body[wire] = value
    if body and aws:
        pairs = [
            p for k, v in body.items() for p in flatten(k, v, _prop_of(tool, k), flat_lists=aws == "aws-ec2")
        ]
        request.content = urlencode(pairs).encode()
        request.headers["content-type"] = "application/x-www-form-urlencoded"
    elif body and xml_root is not None:  # the body's fields as the XML document the spec declares
        fields = {wire: _prop_of(tool, wire) or {} for wire in body}
        schema = {"type": "object", "properties": fields}
        request.content = render_request(xml_root, body, schema, xml_aws)
        request.headers["content-type"] = tool.body_media or "application/xml"
    elif body:
        request.content, request.headers["content-type"] = _fields(body, tool)
    request.headers.update(tool.fixed_headers)  # what picks the operation (``X-Amz-Target``)
    request.params += list(tool.fixed_query.items())
    return request


def _prop_of(tool: ToolDef, wire: str) -> Any:
    """The schema of the argument a body key (the spec's name) belongs to."""
    props = tool.input_schema.get("properties") or {}
    arg = next((a for a, w in tool.wire_names.items() if w == wire), wire)
    return props.get(arg)


def _fields(body: dict[str, Any], tool: ToolDef) -> tuple[bytes, str]:
    """Body fields as the declared media writes them: form pairs, multipart parts, or JSON."""
    kind = media_kind(tool.body_media)
    if kind == "form":
        pairs = [p for k, v in body.items() for p in _query_pairs(k, v, None)]
        return urlencode(pairs).encode(), "application/x-www-form-urlencoded"
    if kind == "multipart":
        props = tool.input_schema.get("properties") or {}
        files = {tool.wire_names.get(a, a) for a, s in props.items() if _is_binary(s)}
        return _multipart(body, files), f"multipart/form-data; boundary={_BOUNDARY}"
    return json.dumps(body, ensure_ascii=False).encode(), "application/json"


def _whole(wire: str, value: Any, media: str | None, schema: dict[str, Any]) -> tuple[bytes, str]:
    """A whole body in its declared media: JSON for a JSON (or ``*/*``) body; a form of the
    object's members; one multipart part; else the raw bytes of the value's text with the
    declared media (a binary or text string as is; a ``*`` subtype sent as octet-stream)."""
    declared = (media or "").split(";")[0].strip().lower()
    kind = media_kind(declared)
    if kind == "json" or declared == "*/*":
        return json.dumps(value, ensure_ascii=False).encode(), "application/json"
    if kind == "form" and isinstance(value, dict):
        pairs = [p for k, v in value.items() for p in _query_pairs(str(k), v, None)]
        return urlencode(pairs).encode(), "application/x-www-form-urlencoded"
    if kind == "multipart":
        fields = value if isinstance(value, dict) else {wire: value}
        files = [wire] if not isinstance(value, dict) and _is_binary(schema) else []
        return _multipart(fields, files), f"multipart/form-data; boundary={_BOUNDARY}"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    sent = "application/octet-stream" if "*" in declared else (media or "").strip()
    return text.encode(), sent


def _is_binary(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("format") == "binary" and "string" in _types(schema)


def _multipart(body: dict[str, Any], files: Collection[str] = ()) -> bytes:
    """Multipart parts, one per value; a binary field as a file part (a filename, octet-stream)."""
    parts: list[bytes] = []
    for key, value in body.items():
        for item in value if isinstance(value, list) else [value]:
            head = f'--{_BOUNDARY}\r\nContent-Disposition: form-data; name="{key}"'
            if key in files:
                head += f'; filename="{key}"\r\nContent-Type: application/octet-stream'
            parts.append((head + "\r\n\r\n").encode() + _text_of(item).encode() + b"\r\n")
    return b"".join(parts) + f"--{_BOUNDARY}--\r\n".encode()


def parse_form(content: bytes) -> list[tuple[str, str]]:
    """A form-urlencoded body's items, in order (blank values kept)."""
    return parse_qsl(content.decode("utf-8", errors="replace"), keep_blank_values=True)
