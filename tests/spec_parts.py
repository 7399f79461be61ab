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
