"""A small OpenAPI document whose reads address rows, whose sends add to a qualified collection,
and whose moves and quick adds name their columns indirectly (read-side and action-args tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FOLDER = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
FILE = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "name": {"type": "string"},
        "size": {"type": "integer"},
        "folder_id": {"type": "integer"},
    },
}
OUTBOUND = {
    "type": "object",
    "properties": {
        "MessageID": {"type": "string", "readOnly": True},
        "To": {"type": "string"},
        "Subject": {"type": "string"},
        "Status": {"type": "string", "enum": ["Queued", "Sent"]},
    },
}
INBOUND = {
    "type": "object",
    "properties": {
        "MessageID": {"type": "string", "readOnly": True},
        "From": {"type": "string"},
        "Subject": {"type": "string"},
    },
}
CARD = {
    "type": "object",
    "properties": {
        "card_id": {"type": "string"},
        "number": {"type": "string"},
        "profile_id": {"type": "string"},
    },
}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _id(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": kind}}


def _q(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": True, "schema": {"type": "string"}}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _listing(key: str, ref: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": _ref(ref)}, "TotalCount": {"type": "integer"}},
    }


def readside_doc() -> dict[str, Any]:
    folder, file = _id("folderId", "integer"), _id("fileId", "integer")
    body = {"required": True, "content": {"application/json": {"schema": _ref("File")}}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Readside", "version": "1"},
        "paths": {
            "/folders": {
                "get": {
                    "operationId": "listFolders",
                    "responses": _ok({"type": "array", "items": _ref("Folder")}),
                },
                "post": {
                    "operationId": "createFolder",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("Folder")}},
                    },
                    "responses": _ok(_ref("Folder")),
                },
            },
            "/folders/{folderId}/files": {
                "get": {
                    "operationId": "listFiles",
                    "parameters": [folder],
                    "responses": _ok({"type": "array", "items": _ref("File")}),
                },
                "post": {
                    "operationId": "createFile",
                    "parameters": [folder],
                    "requestBody": body,
                    "responses": _ok(_ref("File")),
                },
            },
            "/folders/{folderId}/files/{fileId}": {
                "get": {
                    "operationId": "getFile",
                    "parameters": [folder, file],
                    "responses": _ok(_ref("File")),
                }
            },
            "/folders/{folderId}/files/{fileId}/download": {
                "get": {
                    "operationId": "downloadFile",
                    "parameters": [folder, file],
                    "responses": _ok({"type": "string", "format": "binary"}),
                }
            },
            "/folders/{folderId}/files/{fileId}/move": {
                "post": {
                    "operationId": "moveFile",
                    "parameters": [folder, file, _q("destination")],
                    "responses": _ok(_ref("File")),
                }
            },
            "/folders/{folderId}/files/quickAdd": {
                "post": {
                    "operationId": "quickAddFile",
                    "parameters": [folder, _q("text")],
                    "responses": _ok(_ref("File")),
                }
            },
            "/messages/outbound": {
                "get": {"operationId": "searchOutbound", "responses": _ok(_listing("Messages", "Outbound"))}
            },
            "/messages/outbound/{messageid}/details": {
                "get": {
                    "operationId": "outboundDetails",
                    "parameters": [_id("messageid")],
                    "responses": _ok(_ref("Outbound")),
                }
            },
            "/messages/inbound": {
                "get": {
                    "operationId": "searchInbound",
                    "responses": _ok(_listing("InboundMessages", "Inbound")),
                }
            },
            "/email": {
                "post": {
                    "operationId": "sendEmail",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"To": {"type": "string"}, "Subject": {"type": "string"}},
                                    "required": ["To"],
                                }
                            }
                        },
                    },
                    "responses": _ok(
                        {
                            "type": "object",
                            "properties": {
                                "MessageID": {"type": "string"},
                                "To": {"type": "string"},
                                "SubmittedAt": {"type": "string", "format": "date-time"},
                            },
                        }
                    ),
                }
            },
            "/server": {
                "get": {"operationId": "getServer", "responses": _ok(_ref("Server"))},
                "put": {
                    "operationId": "editServer",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("ServerEdit")}},
                    },
                    "responses": _ok(_ref("Server")),
                },
            },
            "/report": {
                "get": {
                    "operationId": "getReport",
                    "parameters": [_q("from_date")],
                    "responses": _ok(
                        {
                            "type": "object",
                            "properties": {"id": {"type": "string"}, "total": {"type": "number"}},
                        }
                    ),
                }
            },
            "/profiles": {
                "get": {
                    "operationId": "listProfiles",
                    "responses": _ok({"type": "array", "items": _ref("Profile")}),
                }
            },
            "/profiles/{profileId}": {
                "get": {
                    "operationId": "getProfile",
                    "parameters": [_id("profileId")],
                    "responses": _ok(_ref("Profile")),
                }
            },
            "/profiles/{profileId}/cards": {
                "get": {
                    "operationId": "listCards",
                    "parameters": [_id("profileId")],
                    "responses": _ok(
                        {
                            "type": "object",
                            "properties": {
                                "card": {"type": "array", "items": _ref("Card")},
                                "code": {"type": "integer"},
                                "message": {"type": "string"},
                            },
                        }
                    ),
                }
            },
        },
        "components": {
            "schemas": {
                "Folder": FOLDER,
                "File": FILE,
                "Outbound": OUTBOUND,
                "Inbound": INBOUND,
                "Card": CARD,
                "Server": {
                    "type": "object",
                    "properties": {
                        "ID": {"type": "integer"},
                        "Name": {"type": "string"},
                        "Color": {"type": "string"},
                    },
                },
                "ServerEdit": {
                    "type": "object",
                    "properties": {"Name": {"type": "string"}, "Color": {"type": "string"}},
                },
                "Profile": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                },
            }
        },
    }


def write_readside_spec(root: Path) -> Path:
    path = root / "readside.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(readside_doc(), indent=1))
    return path
