"""Bodies a document declares only in an XML media type, and whose element layout they follow.

An operation whose success response is declared as ``text/xml`` or ``application/xml`` (and not as
JSON) answers XML. Which layout its elements follow is read from the document, never from a list
of providers:

- a document signed the AWS way (a security scheme with ``x-amazon-apigateway-authtype``) whose
  operations are ``/#Action=<Name>`` (AWS's query protocol; the name is ``x-aws-operation-name`` or
  the one value of the ``Action`` parameter) answers ``<NameResponse><NameResult>..</NameResult>
  <ResponseMetadata><RequestId/></ResponseMetadata></NameResponse>``; where the document names its
  list items ``item`` (``xml: {name: item}``, the EC2 protocol's lists) it is EC2's flavour, with no
  Result element and a ``<requestId>``;
- any other operation of such a document is AWS's REST-XML protocol (S3, Route 53, CloudFront): the
  body's own root, lists wrapped with ``<member>`` items unless declared ``wrapped: false``;
- every other document follows the OpenAPI XML object: the root named by ``xml.name`` or the
  schema's component name.

Declared error responses are named (``NoSuchEntityException`` by its schema's component name or its
description) and read as CompoWorld's error codes (``error_code_of``), so a failure answers the
spec's status with the spec's own error name.
"""

from __future__ import annotations

import re
from typing import Any

from compoworld.manifest import XmlProtocol, XmlWire
from compoworld.specs.refs import ref_name
from compoworld.specs.words import split_words

__all__ = ["XmlDocument", "error_code_of", "error_name", "error_rank", "is_xml"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
#: CompoWorld error code -> word sequences an error's name holds when it means that code.
_CODE_WORDS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("not_found", (("not", "found"), ("no", "such"), ("does", "not", "exist"), ("non", "existent"))),
    ("conflict", (("already", "exists"), ("already", "exist"), ("conflict",), ("in", "use"))),
    ("invalid_arguments", (("invalid",), ("validation",), ("malformed",), ("missing", "parameter"))),
)


def is_xml(media: str) -> bool:
    """Whether a media type is XML (``application/xml``, ``text/xml``, ``application/atom+xml``)."""
    kind = media.lower().split(";")[0].strip()
    return kind in ("application/xml", "text/xml") or kind.endswith("+xml")


def error_name(response: dict[str, Any], raw_schema: Any) -> str | None:
    """The name a declared error response gives its error: its schema's component name, else a
    description that is one name (``NoSuchEntityException``), with ``Exception`` dropped."""
    name = ref_name(raw_schema.get("$ref")) if isinstance(raw_schema, dict) else None
    if name is None:
        text = response.get("description")
        name = text.strip() if isinstance(text, str) and _NAME.match(text.strip()) else None
    if not name:
        return None
    return name[: -len("Exception")] if name.endswith("Exception") and name != "Exception" else name


def error_code_of(name: str, status: int | None) -> str | None:
    """The CompoWorld error code a declared error means, by its status where it is a standard one
    (404, 409, 400/422), else by the words of its name (``NoSuchEntity``, ``EntityAlreadyExists``)."""
    by_status = {404: "not_found", 409: "conflict", 400: "invalid_arguments", 422: "invalid_arguments"}
    if status in by_status:
        return by_status[status]
    words = split_words(name)
    for code, sequences in _CODE_WORDS:
        for seq in sequences:
            if any(tuple(words[i : i + len(seq)]) == seq for i in range(len(words))):
                return code
    return None


_GENERAL = frozenset(
    {"parameter", "parameters", "input", "validation", "value", "request", "argument", "arguments"}
)


def error_rank(code: str, name: str) -> int:
    """How well a declared error's name says a code in general (0 best): of several ``Invalid*``
    errors, ``InvalidParameterValue`` says "invalid arguments" better than ``InvalidNextToken``."""
    if code != "invalid_arguments":
        return 0
    return 0 if _GENERAL & set(split_words(name)) else 1


def _signed_by_aws(doc: dict[str, Any]) -> bool:
    components: Any = doc.get("components") if isinstance(doc.get("components"), dict) else {}
    schemes: Any = components.get("securitySchemes") if isinstance(components, dict) else None
    if not isinstance(schemes, dict):
        schemes = doc.get("securityDefinitions") if isinstance(doc.get("securityDefinitions"), dict) else {}
    return any(isinstance(s, dict) and "x-amazon-apigateway-authtype" in s for s in schemes.values())


def _names_items_item(doc: dict[str, Any]) -> bool:
    """Whether the document's list schemas name their items ``item`` (EC2's list elements)."""
    components = doc.get("components") if isinstance(doc.get("components"), dict) else {}
    schemas = components.get("schemas") if isinstance(components, dict) else None
    if not isinstance(schemas, dict):
        return False
    lists = named = 0
    for schema in schemas.values():
        if not isinstance(schema, dict) or schema.get("type") != "array":
            continue
        lists += 1
        items = schema.get("items")
        members = items.get("allOf", [items]) if isinstance(items, dict) else []
        if any(isinstance(m, dict) and (m.get("xml") or {}).get("name") == "item" for m in members):
            named += 1
    return lists > 0 and named * 2 >= lists


class XmlDocument:
    """What one document says about its XML bodies (read once per document)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.aws = _signed_by_aws(doc)
        self.ec2 = self.aws and _names_items_item(doc)
        info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
        assert isinstance(info, dict)
        self.version = str(info.get("version") or "")
        servers = doc.get("servers")
        url = (
            servers[0].get("url")
            if isinstance(servers, list) and servers and isinstance(servers[0], dict)
            else None
        )
        host = str(url or doc.get("host") or "").split("://")[-1].split("/")[0]
        self.label = host.split(".")[0] if host and "{" not in host.split(".")[0] else ""

    def _query_name(self, path: str, op: dict[str, Any]) -> str | None:
        """The action of an AWS query-protocol operation (``/#Action=CreateUser``), or None."""
        if not self.aws or "#Action=" not in path:
            return None
        name = op.get("x-aws-operation-name")
        if isinstance(name, str) and name:
            return name
        found = path.split("#Action=", 1)[1].split("&", 1)[0]
        return found or None

    def wire(self, path: str, op: dict[str, Any], media: str, schema: Any, raw_schema: Any) -> XmlWire:
        """The XML wire of one operation's success body declared in ``media``."""
        action = self._query_name(path, op)
        if action is not None:
            protocol: XmlProtocol = "aws-ec2" if self.ec2 else "aws-query"
            namespace = f"https://{self.label}.amazonaws.com/doc/{self.version}/" if self.label else None
            return XmlWire(
                media=media,
                root=f"{action}Response",
                protocol=protocol,
                result=f"{action}Result" if protocol == "aws-query" else None,
                namespace=namespace,
            )
        declared: dict[str, Any] = (
            schema["xml"] if isinstance(schema, dict) and isinstance(schema.get("xml"), dict) else {}
        )
        name = declared.get("name")
        root = name if isinstance(name, str) and name else None
        if root is None and isinstance(raw_schema, dict):
            root = ref_name(raw_schema.get("$ref"))
            if root is None and isinstance(raw_schema.get("items"), dict):
                root = ref_name(raw_schema["items"].get("$ref"))
                root = f"{root}s" if root else None
        namespace = declared.get("namespace")
        return XmlWire(
            media=media,
            root=root or "response",
            protocol="aws-rest-xml" if self.aws else "xml",
            namespace=namespace if isinstance(namespace, str) and namespace else None,
        )
