"""A small OpenAPI document whose non-CRUD operations have evident effects (actions tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DOCUMENT = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "number": {"type": "string"},
        "total": {"type": "number"},
        "status": {"type": "string", "enum": ["draft", "sent", "paid", "cancelled"]},
        "cancelled_at": {"type": "string", "format": "date-time", "readOnly": True},
    },
    "required": ["number"],
}
CAMPAIGN = {
    "type": "object",
    "properties": {
        "campaignId": {"type": "string", "readOnly": True},
        "campaignName": {"type": "string"},
        "campaignStatus": {"type": "string", "description": "The status: RUNNING, PAUSED or ENDED."},
    },
}
MESSAGE = {
    "type": "object",
    "properties": {
        "messageId": {"type": "string", "readOnly": True},
        "to": {"type": "string"},
        "text": {"type": "string"},
        "status": {"type": "string", "enum": ["queued", "sent", "failed"]},
    },
}
FOLDER = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
ITEM = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "title": {"type": "string"}, "folder_id": {"type": "integer"}},
}


def _ok(schema: dict[str, Any] | None, code: str = "200") -> dict[str, Any]:
    if schema is None:
        return {"204": {"description": "done"}}
    return {code: {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _id(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": kind}}


def _collection(name: str, ref: str) -> dict[str, Any]:
    return {
        "get": {"operationId": f"list{name}", "responses": _ok({"type": "array", "items": _ref(ref)})},
        "post": {
            "operationId": f"create{name}",
            "requestBody": _body(_ref(ref)),
            "responses": _ok(_ref(ref)),
        },
    }


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def actions_doc() -> dict[str, Any]:
    """Documents that cancel and send, campaigns that pause and resume, messages that are sent,
    folders whose items clear and that copy, and a rate conversion (a computation)."""
    doc_id, camp_id, folder_id = _id("id", "integer"), _id("campaignId"), _id("folderId", "integer")
    return {
        "openapi": "3.0.0",
        "info": {"title": "Actions", "version": "1"},
        "paths": {
            "/documents": _collection("Documents", "Document"),
            "/documents/{id}": {
                "get": {
                    "operationId": "getDocument",
                    "parameters": [doc_id],
                    "responses": _ok(_ref("Document")),
                }
            },
            "/documents/{id}/cancel": {
                "post": {
                    "operationId": "cancelDocument",
                    "parameters": [doc_id],
                    "responses": _ok(_ref("Document")),
                }
            },
            "/documents/{id}/send": {
                "post": {
                    "operationId": "sendDocument",
                    "parameters": [doc_id],
                    "responses": _ok(_ref("Document")),
                }
            },
            "/campaigns": _collection("Campaigns", "Campaign"),
            "/campaigns/{campaignId}": {
                "get": {
                    "operationId": "getCampaign",
                    "parameters": [camp_id],
                    "responses": _ok(_ref("Campaign")),
                }
            },
            "/campaigns/{campaignId}/pause": {
                "post": {"operationId": "pauseCampaign", "parameters": [camp_id], "responses": _ok(None)}
            },
            "/campaigns/{campaignId}/resume": {
                "post": {"operationId": "resumeCampaign", "parameters": [camp_id], "responses": _ok(None)}
            },
            "/messages": {
                "get": {
                    "operationId": "listMessages",
                    "responses": _ok({"type": "array", "items": _ref("Message")}),
                }
            },
            "/messages/{messageId}": {
                "get": {
                    "operationId": "getMessage",
                    "parameters": [_id("messageId")],
                    "responses": _ok(_ref("Message")),
                }
            },
            "/messages/send": {
                "post": {
                    "operationId": "sendMessage",
                    "requestBody": _body(
                        {
                            "type": "object",
                            "properties": {"to": {"type": "string"}, "text": {"type": "string"}},
                            "required": ["to", "text"],
                        }
                    ),
                    "responses": _ok(
                        {
                            "type": "object",
                            "properties": {"messageId": {"type": "string"}, "status": {"type": "string"}},
                        }
                    ),
                }
            },
            "/folders": _collection("Folders", "Folder"),
            "/folders/{folderId}": {
                "get": {
                    "operationId": "getFolder",
                    "parameters": [folder_id],
                    "responses": _ok(_ref("Folder")),
                }
            },
            "/folders/{folderId}/items": {
                "get": {
                    "operationId": "listItems",
                    "parameters": [folder_id],
                    "responses": _ok({"type": "array", "items": _ref("Item")}),
                },
                "post": {
                    "operationId": "createItem",
                    "parameters": [folder_id],
                    "requestBody": _body(_ref("Item")),
                    "responses": _ok(_ref("Item")),
                },
            },
            "/folders/{folderId}/clear": {
                "post": {
                    "operationId": "clearFolder",
                    "description": "Deletes every item of the folder.",
                    "parameters": [folder_id],
                    "responses": _ok(None),
                }
            },
            "/folders/{folderId}/copy": {
                "post": {
                    "operationId": "copyFolder",
                    "parameters": [folder_id],
                    "responses": _ok(_ref("Folder")),
                }
            },
            "/rates": {
                "get": {
                    "operationId": "getRate",
                    "parameters": [
                        {"name": "from", "in": "query", "required": True, "schema": {"type": "string"}},
                        {"name": "to", "in": "query", "required": True, "schema": {"type": "string"}},
                    ],
                    "responses": _ok(
                        {
                            "type": "object",
                            "properties": {
                                "from": {"type": "string"},
                                "to": {"type": "string"},
                                "rate": {"type": "number"},
                            },
                            "required": ["from", "to", "rate"],
                        }
                    ),
                }
            },
        },
        "components": {
            "schemas": {
                "Document": DOCUMENT,
                "Campaign": CAMPAIGN,
                "Message": MESSAGE,
                "Folder": FOLDER,
                "Item": ITEM,
            }
        },
    }


def write_actions_spec(root: Path) -> Path:
    path = root / "actions.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(actions_doc(), indent=1))
    return path
