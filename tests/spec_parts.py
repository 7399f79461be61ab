"""Pieces of OpenAPI 3 documents written inline by tests: a JSON or XML answer, a JSON body, a path parameter."""

from __future__ import annotations

from typing import Any

__all__ = ["json_body", "ok", "path_param", "xml_ok"]


def ok(schema: dict[str, Any]) -> dict[str, Any]:
    """``responses`` with one 200 answer of ``schema`` as JSON."""
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A required JSON ``requestBody`` of ``schema``."""
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def path_param(name: str) -> dict[str, Any]:
    """A required string path parameter."""
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def xml_ok(schema: dict[str, Any] | None, media: str = "text/xml") -> dict[str, Any]:
    """``responses`` with one 200 answer of ``schema`` declared only as XML (no body for None)."""
    if schema is None:
        return {"200": {"description": "Success"}}
    return {"200": {"description": "Success", "content": {media: {"schema": schema}}}}


def amz_target_op(
    target: str, body: dict[str, Any], answer: dict[str, Any], params: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One operation of AWS's JSON protocol as the corpus writes it: ``{"/#X-Amz-Target=Svc.Op":
    {"post": ...}}``, the target a one-valued required header, a JSON body and a JSON answer."""
    header = {
        "name": "X-Amz-Target",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "enum": [target]},
    }
    return {
        f"/#X-Amz-Target={target}": {
            "post": {
                "operationId": target.rsplit(".", 1)[-1],
                "parameters": [header, *(params or [])],
                "requestBody": json_body(body),
                "responses": ok(answer),
            }
        }
    }
