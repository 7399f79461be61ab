"""Seed keys meet the pattern a path parameter declares, so a read by path accepts them."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.build import build_service
from compoworld.synth.verify import verify_runtime


def _doc() -> dict[str, Any]:
    event = {"$ref": "#/components/schemas/Event"}
    ok = {"description": "ok", "content": {"application/json": {"schema": event}}}
    key = {
        "name": "eventId",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^OB_EV\\d{1,7}$"},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Events", "version": "1"},
        "paths": {
            "/events": {
                "get": {
                    "operationId": "listEvents",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"type": "array", "items": event}}},
                        }
                    },
                }
            },
            "/events/{eventId}": {
                "get": {"operationId": "getEvent", "parameters": [key], "responses": {"200": ok}}
            },
        },
        "components": {
            "schemas": {
                "Event": {
                    "type": "object",
                    "properties": {"eventId": {"type": "string"}, "name": {"type": "string"}},
                }
            }
        },
    }


def test_seed_keys_match_the_path_pattern_and_read_back(tmp_path: Path) -> None:
    spec = tmp_path / "events.json"
    spec.write_text(json.dumps(_doc()))
    rt = ServiceRuntime.from_folder(Path(build_service(spec, tmp_path / "lib").folder), Settings())
    keys = [row["eventId"] for row in rt.select(None, "event")]
    assert keys and all(re.fullmatch(r"OB_EV\d{1,7}", k) for k in keys), keys[:5]
    report = asyncio.run(verify_runtime(rt))
    assert [(t.tool, t.failure) for t in report.tools if not t.passed] == []
