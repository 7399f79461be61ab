"""The conformance checker every generated service passes, run in-process over ``httpx.ASGITransport``.

Checks, per tool: reads succeed on the seed; create -> read round-trips; an update is
visible; delete -> read is not-found; responses validate against the declared output
schemas; invalid arguments give ``success: false`` naming the field; and, per service,
the same seed built twice gives the same state hash. A tool that fails is reported with
the reason so the build can switch it to the simulated backend.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, Field

from compoworld.contracts import ToolResult
from compoworld.manifest import ToolDef
from compoworld.patterns import first_error, schema_validator
from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.runtime.world import generate_value
from compoworld.seeding import seeded_rng
from compoworld.settings import Settings
from compoworld.synth.verify_world import CheckFailure, check_action, check_simulated

__all__ = ["ToolCheck", "VerifyReport", "probe_server_errors", "verify_runtime", "verify_service"]

_TOKEN = "verify-token"


class ToolCheck(BaseModel):
    """The verdict on one tool."""

    tool: str = Field(description="Tool name.")
    operation: str = Field(description="Operation the tool is bound to.")
    backend: str = Field(description="implemented | action | simulated, as served.")
    passed: bool = Field(description="Whether every check of the tool passed.")
    checks: list[str] = Field(default_factory=list, description="Checks that ran and passed.")
    failure: str | None = Field(default=None, description="The first failed check and why.")


class VerifyReport(BaseModel):
    """The verify report written as ``verify.json``."""

    service: str = Field(description="Service name.")
    passed: bool = Field(description="Whether every tool and service check passed.")
    tools: list[ToolCheck] = Field(description="Per-tool verdicts, in manifest order.")
    seed_hash: str = Field(description="State hash of the seed.")
    deterministic: bool = Field(description="Two builds from the same files gave the same hash.")
    implemented: int = Field(description="Tools served by CRUD on typed state.")
    actions: int = Field(default=0, description="Tools served as state transitions on typed state.")
    simulated: int = Field(description="Tools served by the world model.")

    @property
    def failed_tools(self) -> dict[str, str]:
        return {t.tool: t.failure or "" for t in self.tools if not t.passed}


_Failure = CheckFailure


def _rng(*parts: str) -> random.Random:
    return seeded_rng("verify", *parts)


class _Checker:
    def __init__(self, runtime: ServiceRuntime, client: httpx.AsyncClient) -> None:
        self.rt = runtime
        self.client = client
        self.counter = 0

    def episode(self) -> str:
        self.counter += 1
        return f"verify-{self.counter}"

    async def call(self, episode: str | None, tool: str, args: dict[str, Any]) -> ToolResult:
        headers = {"X-Episode-Id": episode} if episode else {}
        resp = await self.client.post(f"/tools/{tool}", json=args, headers=headers)
        if resp.status_code >= 500:
            raise _Failure(f"HTTP {resp.status_code} from /tools/{tool}")
        try:
            return ToolResult.from_envelope(resp.json())
        except ValueError as exc:
            raise _Failure(f"/tools/{tool} did not answer a tool-result envelope: {exc}") from exc

    def seed_row(self, tool: ToolDef) -> dict[str, Any] | None:
        if tool.entity is None:
            return None
        entity = self.rt.manifest.entity(tool.entity)
        if entity is None:
            return None
        rows = self.rt.select(None, entity.table)
        return rows[0] if rows else None

    def args_for(self, tool: ToolDef, row: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        """Valid arguments: ids and references from the seed, the rest generated from the schema."""
        props = tool.input_schema.get("properties") or {}
        required = set(tool.input_schema.get("required") or [])
        rng = _rng(self.rt.name, tool.name)
        args: dict[str, Any] = {}
        entity = self.rt.manifest.entity(tool.entity) if tool.entity else None
        for name in sorted(props):
            column_name = tool.arg_columns.get(name)
            column = entity.column(column_name) if entity and column_name else None
            in_row = row is not None and column is not None and row.get(column.name) is not None
            if name == tool.pk_arg and row is not None and entity is not None:
                args[name] = row[entity.pk]
            elif (
                in_row and column is not None and (column.ref or tool.operation in ("read", "list", "search"))
            ):
                args[name] = row[column.name]  # type: ignore[index]
            elif column is not None and column.ref:
                target = self.rt.manifest.entity(column.ref)
                rows = self.rt.select(None, target.table) if target else []
                if rows and target:
                    args[name] = rows[0][target.pk]
            elif name in required or (full and column is not None and not column.read_only):
                args[name] = generate_value(props[name], rng, name)
        if tool.operation in ("list", "search"):
            for name in (tool.limit_arg, tool.offset_arg):
                if name and name not in required:
                    args.pop(name, None)
            if tool.search_arg and tool.search_arg not in required:
                args.pop(tool.search_arg, None)
            for name in tool.arg_columns:
                if name not in required and name != tool.pk_arg:
                    args.pop(name, None)
        return {k: v for k, v in args.items() if v is not None or k in required}

    def check_schema(self, tool: ToolDef, data: Any) -> None:
        validator = schema_validator(tool.output_schema) if tool.output_schema else None
        if validator is None:  # no schema, or one that is itself invalid: nothing to hold the data to
            return
        error = first_error(validator, data)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise _Failure(f"response does not match the output schema at {where}: {error.message[:160]}")

    async def expect_ok(self, episode: str | None, tool: ToolDef, args: dict[str, Any]) -> Any:
        out = await self.call(episode, tool.name, args)
        if not out.success:
            raise _Failure(f"{tool.name}({sorted(args)}) failed: {out.code}: {out.message}")
        self.check_schema(tool, out.data)
        return out.data

    def reader_of(self, entity: str | None) -> ToolDef | None:
        return next(
            (
                t
                for t in self.rt.manifest.tools
                if t.entity == entity and t.operation == "read" and t.backend == "implemented"
            ),
            None,
        )

    async def check_invalid(self, tool: ToolDef) -> str:
        props = tool.input_schema.get("properties") or {}
        if tool.input_schema.get("additionalProperties", False) is False:
            out = await self.call(self.episode(), tool.name, {"__not_a_field__": 1})
            if out.success or ("__not_a_field__" not in out.message and "missing" not in out.message):
                raise _Failure(f"an unknown argument was not refused with a message naming it: {out}")
            return "unknown argument refused"
        typed = next(
            (n for n, s in sorted(props.items()) if s.get("type") in ("integer", "boolean", "number")), None
        )
        if typed is not None:
            out = await self.call(self.episode(), tool.name, {typed: "not-a-number"})
            if out.success:
                raise _Failure(f"a wrong type for '{typed}' was accepted")
            return "wrong type refused"
        return "no invalid input to probe"

    async def check_tool(self, tool: ToolDef) -> ToolCheck:
        backend = self.rt.tools[tool.name].backend
        checks: list[str] = []
        try:
            checks.append(await self.check_invalid(tool))
            if backend == "simulated":
                await check_simulated(self, tool, checks)
            elif backend == "action":
                await check_action(self, tool, checks)
            else:
                await self._check_implemented(tool, checks)
        except _Failure as exc:
            failure: str | None = str(exc)
        except Exception as exc:  # a crash of the checker itself fails the tool, with the reason
            failure = f"verifier crashed: {type(exc).__name__}: {exc}"
        else:
            failure = None
        return ToolCheck(
            tool=tool.name,
            operation=tool.operation,
            backend=backend,
            passed=failure is None,
            checks=checks,
            failure=failure,
        )

    async def _check_implemented(self, tool: ToolDef, checks: list[str]) -> None:
        entity = self.rt.manifest.entity(tool.entity or "")
        assert entity is not None
        row = self.seed_row(tool)
        op = tool.operation
        if op in ("read", "list", "search"):
            if op == "read" and row is None:
                checks.append("no seed rows to read")
                return
            await self.expect_ok(None, tool, self.args_for(tool, row, full=False))
            checks.append("read on seed")
            return
        episode = self.episode()
        reader = self.reader_of(tool.entity)
        if op == "create":
            created = await self.expect_ok(episode, tool, self.args_for(tool, None, full=True))
            key = created.get(entity.pk) if isinstance(created, dict) else None
            if key is None:
                raise _Failure("create returned no key")
            if reader is not None:
                got = await self.expect_ok(episode, reader, self.reader_args(reader, created, key))
                if got.get(entity.pk) != key:
                    raise _Failure("create -> read did not round-trip")
                checks.append("create -> read")
            return
        if row is None:
            checks.append("no seed rows to change")
            return
        args = self.args_for(tool, row, full=True)
        data = await self.expect_ok(episode, tool, args)
        if op == "update" and reader is not None:
            got = await self.expect_ok(episode, reader, self.reader_args(reader, row, row[entity.pk]))
            changed = {
                tool.arg_columns[a]: v for a, v in args.items() if a in tool.arg_columns and a != tool.pk_arg
            }
            for column, value in changed.items():
                if column in got and got[column] != value and not isinstance(value, (dict, list)):
                    raise _Failure(f"update of '{column}' not visible: {got[column]!r} != {value!r}")
            checks.append("update visible")
        if op == "delete" and reader is not None:
            out = await self.call(episode, reader.name, self.reader_args(reader, row, row[entity.pk]))
            if out.success or out.code != "not_found":
                raise _Failure(f"delete -> read did not give not_found: {out}")
            checks.append("delete -> not found")
        del data

    def reader_args(self, reader: ToolDef, row: dict[str, Any], key: Any) -> dict[str, Any]:
        """Arguments that read ``row`` back: its key, its parents' ids, and any other required argument."""
        args = self.args_for(reader, row, full=False)
        args.update(self._parents(reader, row))
        args[reader.pk_arg or "id"] = key
        return args

    def _parents(self, reader: ToolDef, row: dict[str, Any]) -> dict[str, Any]:
        required = set(reader.input_schema.get("required") or [])
        return {
            a: row[c]
            for a, c in reader.arg_columns.items()
            if a in required and a != reader.pk_arg and c in row
        }


async def verify_runtime(runtime: ServiceRuntime, rebuilt: ServiceRuntime | None = None) -> VerifyReport:
    """Run every check against one loaded service."""
    settings = Settings(admin_token=_TOKEN)
    app = create_service_app(runtime, settings)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://verify") as client:
        health = await client.get("/health")
        if health.status_code != 200:
            raise RuntimeError(f"{runtime.name}: /health answered {health.status_code}")
        checker = _Checker(runtime, client)
        results = [await checker.check_tool(t) for t in runtime.manifest.tools]
    seed_hash = runtime.state_hash(None)
    deterministic = rebuilt is None or rebuilt.state_hash(None) == seed_hash
    implemented = sum(1 for b in runtime.tools.values() if b.backend == "implemented")
    actions = sum(1 for b in runtime.tools.values() if b.backend == "action")
    return VerifyReport(
        service=runtime.name,
        passed=all(r.passed for r in results) and deterministic,
        tools=results,
        seed_hash=seed_hash,
        deterministic=deterministic,
        implemented=implemented,
        actions=actions,
        simulated=len(runtime.tools) - implemented - actions,
    )


def verify_service(folder: Path) -> VerifyReport:
    """Load a generated service folder twice and run the conformance checks."""
    first = ServiceRuntime.from_folder(folder)
    second = ServiceRuntime.from_folder(folder)
    return asyncio.run(verify_runtime(first, second))


async def probe_server_errors(runtime: ServiceRuntime) -> list[str]:
    """Call every tool with garbage and empty bodies and every REST route once; list any 5xx answer.

    Nothing a client sends may make a service answer 500: this is the cheap, broad probe behind
    that promise (the conformance checks above cover valid calls).
    """
    app = create_service_app(runtime, Settings(admin_token=_TOKEN))
    bad: list[str] = []
    headers = {"X-Episode-Id": "probe"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://probe") as client:
        for tool in runtime.manifest.tools:
            for body in (b"{}", b'{"x": [1, {"y": null}]}', b"[]", b"\x00\xff"):
                resp = await client.post(f"/tools/{tool.name}", content=body, headers=headers)
                if resp.status_code >= 500:
                    bad.append(f"{runtime.name}: POST /tools/{tool.name} {body!r} -> {resp.status_code}")
            if tool.path:
                path = tool.path.replace("{", "").replace("}", "")
                resp = await client.request(tool.method, path, content=b"{}", headers=headers)
                if resp.status_code >= 500:
                    bad.append(f"{runtime.name}: {tool.method} {path} -> {resp.status_code}")
    return bad
