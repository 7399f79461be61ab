"""Importing this module builds one tiny service, so a process forked afterwards starts warm.

A corpus build's workers fork from a forkserver that preloads this module
(``compoworld.synth.batch``): without it every worker, and every fresh pool after a recycle,
paid about a second of CPU on its first unit importing what a build loads lazily (Faker's locale
providers, phone-number metadata, SQLAlchemy's dialect, SQLModel) and filling per-process caches.
What it leaves behind (frozen out of the collector's walks, ``gc.freeze``) are caches keyed by
content (templates, compiled patterns) and Faker instances that ``people.faker_for`` seeds before
every use, so what a worker builds does not depend on it. It never raises: a failure here only means a cold start.
"""

from __future__ import annotations

import gc
import json
import tempfile
from pathlib import Path

__all__ = ["warm"]

_DOC = {
    "openapi": "3.0.3",
    "info": {"title": "Warm-up", "version": "1.0.0"},
    "paths": {
        "/contacts": {
            "get": {
                "operationId": "listContacts",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "Contacts.",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Contact"}}
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "createContact",
                "requestBody": {
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Contact"}}}
                },
                "responses": {
                    "201": {
                        "description": "Created.",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Contact"}}},
                    }
                },
            },
        },
        "/contacts/{contactId}": {
            "parameters": [
                {"name": "contactId", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "get": {
                "operationId": "getContact",
                "responses": {
                    "200": {
                        "description": "A contact.",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Contact"}}},
                    }
                },
            },
            "delete": {"operationId": "deleteContact", "responses": {"204": {"description": "Deleted."}}},
        },
    },
    "components": {
        "schemas": {
            "Contact": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "readOnly": True},
                    "name": {"type": "string"},
                    "email": {"type": "string", "format": "email"},
                    "phone": {"type": "string"},
                    "company": {"type": "string"},
                    "country": {"type": "string", "pattern": "^[A-Z]{2}$"},
                    "created": {"type": "string", "format": "date-time", "readOnly": True},
                    "score": {"type": "number"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            }
        }
    },
}


def warm() -> None:
    """Build the warm-up service in a temporary folder and load every locale's Faker."""
    # our own modules are imported outside the guard: a broken one fails loudly, never as a cold start
    from compoworld.people import COUNTRIES, _faker
    from compoworld.synth.build import build_work_folder, release_caches

    try:
        for country in COUNTRIES:
            _faker(country.locale)
        with tempfile.TemporaryDirectory(prefix="compoworld-warm-") as scratch:
            spec = Path(scratch) / "warm.json"
            spec.write_text(json.dumps(_DOC), encoding="utf-8")
            build_work_folder(spec, Path(scratch) / "warm_up", "warm_up")
        release_caches()
        # what the warm-up leaves is live for good: frozen, a worker's collections never walk it
        # (a third of their gen-2 time, ~6% of a build's CPU measured in-process; and fewer pages
        # a forked worker copies, since a collection writes to every object it walks)
        gc.collect()
        gc.freeze()
    except Exception:  # a warm-up that fails leaves a cold start, nothing worse
        return


warm()
