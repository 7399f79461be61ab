"""REST operations (OpenAPI 3 shaped) -> ToolSpecs: flattened inputs, success output, names.

Both the OpenAPI 3.x and the Swagger 2.0 ingesters end here; Swagger operations are
converted to the OpenAPI 3 shape first. A tool's input is its path, query and
header parameters plus its request body: an object body's properties become
parameters (``body_`` prefixed on a clash), any other body travels as one ``body``
parameter. Credentials (``Authorization``, API keys) and transport headers are not
tool inputs. Request-body ``required`` lists are honoured unless the body itself
is declared optional (``required: false``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compoworld.specs.errors import SpecError, join_pointer
from compoworld.specs.fields import input_schema, make_field, object_fields, response_fields
from compoworld.specs.model import FieldSpec, ToolSpec
from compoworld.specs.refs import DOC_NODE_BUDGET, MIN_NODE_BUDGET, NODE_BUDGET, Resolver, ref_name
from compoworld.specs.shapes import find_wrapper, named_entity, object_view, text_of
from compoworld.specs.words import entity_for_schema, path_entity
from compoworld.specs.xml_media import XmlDocument, error_code_of, error_name, error_rank, is_xml

__all__ = ["HTTP_METHODS", "RestBuilder", "RestOperation", "template_params"]

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_AUTH_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "apikey"}
)
_TRANSPORT_HEADERS = frozenset(
    {"accept", "content-type", "content-length", "user-agent", "accept-encoding", "host", "connection"}
)
_AUTH_FRAGMENTS = ("api-key", "apikey", "api_key")
#: AWS Signature Version 4's request headers: the SDK's signer writes them, no caller does.
_SIGNING_HEADER = re.compile(
    r"^x-amz-(algorithm|credential|date|signedheaders|signature|content-sha256|security-token)$"
)
_AUTH_WORDS = frozenset({"auth", "authorization", "token", "secret", "password", "signature", "credentials"})
_AUTH_QUERY = frozenset(
    {"access_token", "oauth_token", "api_key", "apikey", "api-key", "apitoken", "api_token"}
)
_NOT_ENTITIES = frozenset({"id", "ids", "response", "result", "success", "status", "empty", "ok"})
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


@dataclass(frozen=True)
class RestOperation:
    """One operation, OpenAPI 3 shaped, with where it sits in the source document."""

    method: str
    path: str
    op: dict[str, Any]
    at: tuple[object, ...]
    shared_params: list[Any] = field(default_factory=list)
    shared_at: tuple[object, ...] = ()


def template_params(path: str) -> list[str]:
    """Parameter names in a path template (``/a/{id}/{+name}`` -> ``[id, name]``)."""
    return [m.strip("+*") for m in re.findall(r"\{([^{}]+)\}", path)]


def _pick_media(content: Any, prefer_form: bool, xml: bool = False) -> tuple[str, dict[str, Any]] | None:
    """The media a body is read in: JSON first, then a form (``prefer_form``), ``*/*``, and XML
    (``xml``: a response declared only in XML)."""
    if not isinstance(content, dict):
        return None
    kinds = {str(k): str(k).lower().split(";")[0].strip() for k, v in content.items() if isinstance(v, dict)}
    order = [k for k, kind in kinds.items() if kind == "application/json"]
    order += [k for k, kind in kinds.items() if "json" in kind]
    if prefer_form:
        order += [k for k, kind in kinds.items() if kind in _FORM_TYPES]
    order += [k for k, kind in kinds.items() if kind == "*/*"]
    if xml:
        order += [k for k, kind in kinds.items() if is_xml(kind)]
    return (order[0], content[order[0]]) if order else None


def _raw_media(content: Any) -> tuple[str, dict[str, Any]] | None:
    """The first declared media that is neither JSON nor a form (``application/octet-stream``,
    ``image/png``, ``text/plain``), or None."""
    if not isinstance(content, dict):
        return None
    for key, value in content.items():
        kind = str(key).lower().split(";")[0].strip()
        if isinstance(value, dict) and "json" not in kind and kind not in _FORM_TYPES and kind != "*/*":
            return str(key), value
    return None


def _xml_media_of(op: dict[str, Any]) -> str | None:
    """The first XML media an operation declares for any response, or None."""
    responses = op.get("responses")
    for resp in responses.values() if isinstance(responses, dict) else ():
        content = resp.get("content") if isinstance(resp, dict) else None
        for media in content if isinstance(content, dict) else ():
            if is_xml(str(media)):
                return str(media)
    return None


# Request context a client sets once (tenant, consumer, app ids; language and charset negotiation),
# not a value an agent should have to supply to every tool.
_CONTEXT_HEADER = re.compile(
    r"(tenant|consumer|app|client|service|organi[sz]ation|org|workspace)[-_]?id$|^(accept|content)-(language|charset|encoding)$"
)


def one_value(param: FieldSpec) -> str | None:
    """The one value a header or query parameter may take (AWS's ``X-Amz-Target:
    CertificateManager.DeleteCertificate``, its query protocol's ``Action=DescribeAddresses`` and
    ``Version=2016-11-15``), as it travels; None for any other parameter. It picks the operation a
    request goes to: the client sends it, no caller chooses it."""
    values = param.json_schema.get("enum")
    if param.location not in ("header", "query") or not isinstance(values, list) or len(values) != 1:
        return None
    value = values[0]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, str | int | float) else None


def _fixed(params: list[FieldSpec], fixed: dict[str, str], where: str) -> dict[str, str]:
    return {
        p.original_name or p.name: fixed[p.name] for p in params if p.name in fixed and p.location == where
    }


class RestBuilder:
    """Turns the RestOperations of one document into ToolSpecs (names are chosen by the caller)."""

    def __init__(
        self,
        resolver: Resolver,
        security_names: dict[str, set[str]],
        n_operations: int = 1,
        xml: XmlDocument | None = None,
    ) -> None:
        self.r = resolver
        self.xml = xml or XmlDocument({})
        self.budget = max(MIN_NODE_BUDGET, min(NODE_BUDGET, DOC_NODE_BUDGET // max(n_operations, 1)))
        self.file = resolver.file
        self.auth_headers = {n.lower() for n in security_names.get("header", set())}
        self.auth_query = {n.lower() for n in security_names.get("query", set())}
        self.warnings = resolver.warnings

    def _ptr(self, at: tuple[object, ...]) -> str:
        return join_pointer(at)

    def _is_credential(self, name: str, where: str, description: str) -> bool:
        low = name.lower()
        if where == "header":
            return (
                _CONTEXT_HEADER.search(low) is not None
                or low in _AUTH_HEADERS
                or low in _TRANSPORT_HEADERS
                or low in self.auth_headers
                or _SIGNING_HEADER.match(low) is not None
                or any(f in low for f in _AUTH_FRAGMENTS)
                or not _AUTH_WORDS.isdisjoint(re.split(r"[-_. ]+", low))
            )
        if where == "query":
            return (
                low in _AUTH_QUERY
                or low in self.auth_query
                or _SIGNING_HEADER.match(low) is not None  # a presigned URL's signature
                or (low == "key" and "api key" in description.lower())
            )
        return where == "cookie"

    def _raw_params(self, rop: RestOperation) -> list[tuple[dict[str, Any], tuple[object, ...]]]:
        merged: dict[tuple[str, str], tuple[dict[str, Any], tuple[object, ...]]] = {}
        for source, base in (
            (rop.shared_params, rop.shared_at),
            (rop.op.get("parameters"), (*rop.at, "parameters")),
        ):
            if source is None:
                continue
            if not isinstance(source, list):
                raise SpecError(self.file, self._ptr(base), "parameters must be a list")
            for i, raw in enumerate(source):
                param, at = self.r.deref(raw, (*base, i))
                if not isinstance(param, dict):
                    raise SpecError(self.file, self._ptr(at), "parameter must be an object")
                name, where = param.get("name"), param.get("in")
                if not isinstance(name, str) or not isinstance(where, str):
                    raise SpecError(self.file, self._ptr(at), "parameter needs a string 'name' and 'in'")
                merged[(name, where)] = (param, at)
        return list(merged.values())

    def _params(self, rop: RestOperation, taken: set[str]) -> list[FieldSpec]:
        in_template = template_params(rop.path)
        resource = path_entity(rop.path)
        groups: dict[str, list[FieldSpec]] = {"path": [], "query": [], "header": []}
        declared_path: set[str] = set()
        for param, at in self._raw_params(rop):
            name, where = param["name"], param["in"]
            desc = text_of(param.get("description"))
            if where not in groups or self._is_credential(name, where, desc):
                if where not in groups and where != "cookie":
                    self.warnings.append(f"#{self._ptr(at)}: parameter location {where!r} ignored")
                continue
            if where == "path" and name not in in_template:
                self.warnings.append(
                    f"#{self._ptr(at)}: path parameter {name!r} is not in {rop.path}; dropped"
                )
                continue
            schema: Any = {"type": "string"}
            if "schema" in param:
                schema = self.r.schema(param["schema"], (*at, "schema"))
            elif isinstance(param.get("content"), dict) and param["content"]:
                key, media = next(iter(param["content"].items()))
                schema = self.r.schema(
                    media.get("schema", {}) if isinstance(media, dict) else {},
                    (*at, "content", key, "schema"),
                )
            entity = path_entity(rop.path, name) if where == "path" else resource
            if where == "path":
                declared_path.add(name)
            made = make_field(
                name,
                schema,
                location=where,  # type: ignore[arg-type]
                required=where == "path" or param.get("required") is True,
                taken=taken,
                file=self.file,
                pointer=at,
                entity=entity or resource,
                description=desc,
            )
            style, explode = param.get("style"), param.get("explode")
            if isinstance(style, str) or isinstance(explode, bool):
                made.style = style if isinstance(style, str) else None
                made.explode = explode if isinstance(explode, bool) else None
            groups[where].append(made)
        for name in in_template:
            if name not in declared_path:
                self.warnings.append(
                    f"#{self._ptr(rop.at)}: path parameter {name!r} undeclared; assumed string"
                )
                declared_path.add(name)
                groups["path"].append(
                    make_field(
                        name,
                        {"type": "string"},
                        location="path",
                        required=True,
                        taken=taken,
                        file=self.file,
                        pointer=rop.at,
                        entity=path_entity(rop.path, name) or resource,
                    )
                )
        order = {n: i for i, n in enumerate(in_template)}
        groups["path"].sort(key=lambda f: order.get(f.original_name or f.name, len(order)))
        return groups["path"] + groups["query"] + groups["header"]

    def _body(
        self, rop: RestOperation, params: list[FieldSpec], taken: set[str]
    ) -> tuple[list[FieldSpec], bool, str | None, str | None]:
        raw_body = rop.op.get("requestBody")
        if raw_body is None:
            return [], True, None, None
        body, at = self.r.deref(raw_body, (*rop.at, "requestBody"))
        if not isinstance(body, dict):
            raise SpecError(self.file, self._ptr(at), "requestBody must be an object")
        picked = _pick_media(body.get("content"), prefer_form=True)
        if picked is None:
            content = body.get("content")
            if not isinstance(content, dict) or not content:
                return [], True, None, None
            first = next(iter(content))
            picked = (str(first), content[first] if isinstance(content[first], dict) else {})
        media_type, media = picked
        raw_schema = media.get("schema", {})
        schema = self.r.schema_within(raw_schema, (*at, "content", media_type, "schema"), self.budget // 2)
        view = object_view(schema)
        if media_type.lower().split(";")[0].strip() in _FORM_TYPES and not (view and view["properties"]):
            # a form of no fields (a converter's file schema under ``multipart/form-data`` beside
            # ``application/octet-stream``): the body is the raw media the document also declares
            raw = _raw_media(body.get("content"))
            if raw is not None:
                media_type, media = raw
                raw_schema = media.get("schema", {})
                schema = self.r.schema_within(
                    raw_schema, (*at, "content", media_type, "schema"), self.budget // 2
                )
                view = object_view(schema)
        media_kind = media_type.lower().split(";")[0].strip()
        wrapper = find_wrapper(view) if view else None
        body_entity = named_entity(self.r, raw_schema, wrapper)
        entity = entity_for_schema(body_entity) if body_entity else path_entity(rop.path)
        body_required = body.get("required") is not False
        pointer = (*at, "content", media_type, "schema")
        if view is not None and view["properties"]:
            clash = {p.original_name or p.name for p in params} | {p.name for p in params}
            fields = object_fields(
                view,
                location="body",
                file=self.file,
                pointer=pointer,
                taken=taken,
                entity=entity or None,
                required_ok=body_required,
                skip_read_only=True,
                clash=clash,
            )
            return fields, True, body_entity, media_kind
        single = make_field(
            "body",
            schema,
            location="body",
            required=body_required,
            taken=taken,
            file=self.file,
            pointer=pointer,
            entity=entity or None,
            description=body.get("description"),
            tag_by_name=False,
        )
        return [single], False, body_entity, media_kind

    def _response(self, rop: RestOperation) -> tuple[Any, str, tuple[object, ...], int] | None:
        """The first declared 2xx response with a JSON schema (else an XML one): (schema, media,
        pointer, status)."""
        responses = rop.op.get("responses")
        if not isinstance(responses, dict):
            return None
        codes = sorted(str(k) for k in responses if re.fullmatch(r"2\d\d", str(k)))
        codes += [str(k) for k in responses if str(k).upper() == "2XX"]
        by_str = {str(k): v for k, v in responses.items()}
        for xml in (False, True):
            for code in codes:
                resp, at = self.r.deref(by_str[code], (*rop.at, "responses", code))
                if not isinstance(resp, dict):
                    continue
                picked = _pick_media(resp.get("content"), prefer_form=False, xml=xml)
                if picked is not None and "schema" in picked[1]:
                    status = int(code) if code.isdigit() else 200
                    return picked[1]["schema"], picked[0], (*at, "content", picked[0], "schema"), status
        return None

    def _plain_number(self, rop: RestOperation) -> tuple[Any, str, tuple[object, ...], int] | None:
        """A 2xx answer declared only as ``text/plain`` whose schema is an integer (Graph's
        ``/$count``, ``ODataCountResponse``): its digits read as that JSON number, so a count's
        answer has a schema to be checked against; (schema, media, pointer, status), or None."""
        responses = rop.op.get("responses")
        if not isinstance(responses, dict):
            return None
        codes = sorted(str(k) for k in responses if re.fullmatch(r"2\d\d", str(k)))
        codes += [str(k) for k in responses if str(k).upper() == "2XX"]
        by_str = {str(k): v for k, v in responses.items()}
        for code in codes:
            resp, at = self.r.deref(by_str[code], (*rop.at, "responses", code))
            content = resp.get("content") if isinstance(resp, dict) else None
            for media, value in content.items() if isinstance(content, dict) else ():
                if str(media).lower().split(";")[0].strip() != "text/plain" or not isinstance(value, dict):
                    continue
                schema, _ = self.r.deref(value.get("schema"), (*at, "content", media, "schema"))
                if isinstance(schema, dict) and schema.get("type") == "integer":
                    return (
                        value["schema"],
                        str(media),
                        (*at, "content", media, "schema"),
                        (int(code) if code.isdigit() else 200),
                    )
        return None

    def _success_status(self, rop: RestOperation) -> int | None:
        """The lowest declared 2xx status (a spec that declares only 204 answers without a body)."""
        responses = rop.op.get("responses")
        if not isinstance(responses, dict):
            return None
        codes = sorted(int(k) for k in map(str, responses) if re.fullmatch(r"2\d\d", k))
        return codes[0] if codes else None

    def _errors(self, rop: RestOperation, xml: bool = False) -> tuple[list[int], dict[str, Any] | None]:
        """Declared 4xx statuses, and the schema of the first declared error body (4xx, then default;
        ``xml``: an XML one too, for an operation whose success body is XML)."""
        responses = rop.op.get("responses")
        if not isinstance(responses, dict):
            return [], None
        by_str = {str(k): v for k, v in responses.items()}
        statuses = sorted(int(k) for k in by_str if re.fullmatch(r"4\d\d", k))
        for code in [*map(str, statuses), "default"]:
            if code not in by_str:
                continue
            resp, at = self.r.deref(by_str[code], (*rop.at, "responses", code))
            picked = (
                _pick_media(resp.get("content"), prefer_form=False, xml=xml)
                if isinstance(resp, dict)
                else None
            )
            if picked is not None and isinstance(picked[1].get("schema"), dict):
                pointer = (*at, "content", picked[0], "schema")
                try:
                    schema = self.r.schema_within(picked[1]["schema"], pointer, self.budget // 8)
                except SpecError:  # a broken error schema only costs the error body its shape
                    return statuses, None
                if isinstance(schema, dict) and (schema.get("properties") or schema.get("allOf")):
                    return statuses, schema
        return statuses, None

    def _xml_errors(self, rop: RestOperation) -> dict[str, tuple[int, str]]:
        """CompoWorld error code -> (declared status, the spec's name of that error), over the declared
        4xx responses (the first of each code wins, unless a later one names it better,
        ``error_rank``): ``NoSuchEntityException`` at 481 is not_found."""
        responses = rop.op.get("responses")
        if not isinstance(responses, dict):
            return {}
        out: dict[str, tuple[int, str]] = {}
        for key in sorted(str(k) for k in responses if re.fullmatch(r"4\d\d", str(k))):
            resp, _ = self.r.deref(responses.get(key, responses.get(int(key))), (*rop.at, "responses", key))
            if not isinstance(resp, dict):
                continue
            content = resp.get("content")
            media: Any = next(iter(content.values()), {}) if isinstance(content, dict) and content else {}
            name = error_name(resp, media.get("schema") if isinstance(media, dict) else None)
            code = (
                error_code_of(name or "", int(key)) if name or key in ("400", "404", "409", "422") else None
            )
            better = code not in out or error_rank(code, name or "") < error_rank(code, out[code][1])
            if code is not None and better:
                out[code] = (int(key), name or "")
        return out

    def _request_root(self, rop: RestOperation) -> str | None:
        """The ``xml.name`` an XML request body's schema gives its root element, if any."""
        body, _ = self.r.deref(rop.op.get("requestBody"), (*rop.at, "requestBody"))
        content = body.get("content") if isinstance(body, dict) else None
        for media_type, media in content.items() if isinstance(content, dict) else ():
            if is_xml(str(media_type)) and isinstance(media, dict):
                target, _ = self.r.deref(media.get("schema"), ())
                declared = target.get("xml") if isinstance(target, dict) else None
                if isinstance(declared, dict) and isinstance(declared.get("name"), str):
                    return str(declared["name"])
        return None

    def _error_root(self, rop: RestOperation) -> str | None:
        """The root element of the first declared XML error body: its ``xml.name`` or component name."""
        responses = rop.op.get("responses")
        if not isinstance(responses, dict):
            return None
        keys = [*sorted(str(k) for k in responses if re.fullmatch(r"4\d\d", str(k))), "default"]
        by_str = {str(k): v for k, v in responses.items()}
        for key in keys:
            resp, _ = self.r.deref(by_str.get(key), (*rop.at, "responses", key))
            content = resp.get("content") if isinstance(resp, dict) else None
            for media_type, media in (content or {}).items() if isinstance(content, dict) else ():
                if not is_xml(str(media_type)) or not isinstance(media, dict):
                    continue
                raw = media.get("schema")
                target, _ = self.r.deref(raw, ())
                declared = target.get("xml") if isinstance(target, dict) else None
                if isinstance(declared, dict) and isinstance(declared.get("name"), str):
                    return str(declared["name"])
                return ref_name(raw.get("$ref")) if isinstance(raw, dict) else None
        return None

    def tool(self, rop: RestOperation, name: str, original: str | None) -> ToolSpec:
        """The ToolSpec of one operation, named ``name``; body and output each within half the node budget."""
        taken: set[str] = set()
        params = self._params(rop, taken)
        params_all = params
        fixed = {p.name: value for p in params if (value := one_value(p)) is not None}
        params = [p for p in params if p.name not in fixed]
        body, body_is_object, body_entity, body_media = self._body(rop, params, taken)
        params += body
        output_schema = None
        fields: list[FieldSpec] = []
        response_entity = None
        success_status = self._success_status(rop)
        found = self._response(rop) or self._plain_number(rop)
        xml_wire = None
        if found is not None:
            raw_schema, media, at, success_status = found
            output_schema = self.r.schema_within(raw_schema, at, self.budget // 2)
            if is_xml(media):
                xml_wire = self.xml.wire(rop.path, rop.op, media, output_schema, raw_schema)
            view = object_view(output_schema)
            wrapper = find_wrapper(view) if view else None
            response_entity = named_entity(self.r, raw_schema, wrapper)
            entity = entity_for_schema(response_entity) if response_entity else None
            if not entity or entity.split("_")[-1] in _NOT_ENTITIES:
                entity = (entity_for_schema(body_entity) if body_entity else None) or path_entity(rop.path)
            where = f"#{self._ptr(rop.at)}"
            fields = response_fields(output_schema, entity or None, self.warnings, where)
            if not isinstance(output_schema, dict):
                output_schema = None
        if xml_wire is None and found is None and self.xml.aws:
            # an AWS operation that declares no success body still answers in its protocol's XML
            # (the query protocol's envelope, an error layout), where the document speaks XML for it
            declared_media = _xml_media_of(rop.op)
            if declared_media is not None:
                xml_wire = self.xml.wire(rop.path, rop.op, declared_media, None, None)
        op = rop.op
        summary = text_of(op.get("summary"))
        description = text_of(op.get("description"))
        if summary and description and summary.strip().rstrip(".") not in description:
            description = f"{summary}\n\n{description}"
        tags = op.get("tags")
        if xml_wire is not None and body_media is not None and is_xml(body_media):
            xml_wire.request_root = self._request_root(rop) or body_entity or "request"
        error_statuses, error_schema = self._errors(rop, xml=xml_wire is not None)
        xml_errors: dict[str, int] = {}
        if xml_wire is not None:
            declared = self._xml_errors(rop)
            xml_wire.error_codes = {code: name for code, (_, name) in declared.items() if name}
            xml_errors = {code: status for code, (status, _) in declared.items()}
            if error_schema is not None and xml_wire.protocol == "xml":
                xml_wire.error_root = self._error_root(rop)
        return ToolSpec(
            name=name,
            original_name=original,
            description=(description or summary).strip(),
            method=rop.method.upper(),
            path=rop.path,
            params=params,
            body_is_object=body_is_object,
            input_schema=input_schema(params),
            output_schema=output_schema,
            response_fields=fields,
            response_entity=response_entity,
            body_entity=body_entity,
            success_status=success_status,
            body_media=body_media,
            error_statuses=error_statuses,
            error_schema=error_schema,
            response_xml=xml_wire,
            xml_error_statuses=xml_errors,
            tags=[str(t) for t in tags if isinstance(t, str | int)] if isinstance(tags, list) else [],
            pointer=self._ptr(rop.at),
            fixed_headers=_fixed(params_all, fixed, "header"),
            fixed_query=_fixed(params_all, fixed, "query"),
        )
