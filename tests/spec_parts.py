"""Pieces of OpenAPI 3 documents written inline by tests: a JSON answer, a JSON body, a path parameter."""

from __future__ import annotations

from typing import Any

__all__ = ["json_body", "ok", "path_param"]


def ok(schema: dict[str, Any]) -> dict[str, Any]:
    """``responses`` with one 200 answer of ``schema`` as JSON."""
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A required JSON ``requestBody`` of ``schema``."""
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def path_param(name: str) -> dict[str, Any]:
    """A required string path parameter."""
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
