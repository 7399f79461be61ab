"""The spec's declared error body, built for one failure: message, code and HTTP status placed where
its fields name them (``{"error": {"code", "message"}}``, ``{"status": 404, "detail": ...}``, a list).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compoworld.runtime.schema_read import default_value, match_key, schema_props, schema_types

__all__ = ["STATUS_KEYS", "compile_error"]

STATUS_KEYS = frozenset({"status", "statuscode", "code", "httpstatus", "httpstatuscode", "httpcode"})
_MESSAGE_KEYS = frozenset(
    {"message", "detail", "details", "errordescription", "description", "title", "errormessage", "msg"}
    | {"reason", "error", "errortext", "text"}
)
_CODE_KEYS = frozenset({"code", "errorcode", "type", "typename", "errortype", "name", "kind", "key"})
_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
}


def compile_error(schema: dict[str, Any]) -> Callable[[str, str, int], Any]:
    """A builder of the spec's error body: message, code and status where its fields name them."""

    def build(node: dict[str, Any], code: str, message: str, status: int, depth: int) -> Any:
        types, _ = schema_types(node)
        if types == {"array"} and isinstance(node.get("items"), dict) and depth < 4:
            return [build(node["items"], code, message, status, depth + 1)]
        props, required = schema_props(node)
        if not props:
            return message if types == {"string"} else default_value(node, "error")
        out: dict[str, Any] = {}
        for key, sub in props.items():
            k = match_key(key)
            sub_types, _ = schema_types(sub)
            if (
                sub_types <= {"object", "array"}
                and sub_types
                and depth < 4
                and k in ("error", "errors", "detail", "details")
            ):
                out[key] = build(sub, code, message, status, depth + 1)
            elif k in STATUS_KEYS and sub_types <= {"integer", "number"} and sub_types and "enum" not in sub:
                out[key] = status
            elif k in ("status", "statustext") and sub_types == {"string"} and "enum" not in sub:
                out[key] = _REASONS.get(status, "Error")
            elif k in _MESSAGE_KEYS and sub_types == {"string"} and "enum" not in sub:
                out[key] = message
            elif k in _CODE_KEYS and sub_types == {"string"} and "enum" not in sub:
                out[key] = code
            elif key in required:
                out[key] = default_value(sub, key)
        return out

    return lambda code, message, status: build(schema, code, message, status, 0)
