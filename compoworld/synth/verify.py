"""The conformance checker every generated service passes, run in-process over ``httpx.ASGITransport``.

Checks, per tool: reads succeed on the seed; create -> read round-trips; an update is
visible; delete -> read is not-found; actions and simulated tools as ``verify_world`` says;
invalid arguments give ``success: false`` naming the field. Every one of these calls is made
twice (``compoworld.synth.twin``): over the uniform route and over the spec's own REST route in
its declared wire format, which must accept it, answer the declared status and the same body,
conforming strictly to the declared schema. Per service, the same seed built twice gives the
same state hash. A tool that fails is reported with the reason so the build can switch it to
the simulated backend.
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
from compoworld.runtime import ServiceRuntime, create_service_app
from compoworld.runtime.rest import RESERVED_PREFIX, plan_routes
from compoworld.runtime.tables import quote
from compoworld.runtime.world import generate_value
from compoworld.seeding import seeded_rng
from compoworld.settings import Settings
from compoworld.synth.asgi_client import AsgiClient
from compoworld.synth.reverify import Verdicts, called, looks_up
from compoworld.synth.twin import Twin, TwinFailure
from compoworld.synth.verify_collections import check_collection
from compoworld.synth.verify_lists import ListTally, as_arg, check_listing, expressions_arg
from compoworld.synth.verify_world import CheckFailure, check_action, check_simulated, check_unhonoured

__all__ = [
    "ToolCheck",
    "VerifyReport",
    "probe_server_errors",
    "same_seed",
    "verify_round",
    "verify_runtime",
    "verify_service",
    "with_determinism",
]

_TOKEN = "verify-token"


class ToolCheck(BaseModel):
    """The verdict on one tool."""

    tool: str = Field(description="Tool name.")
    operation: str = Field(description="Operation the tool is bound to.")
    backend: str = Field(description="implemented | action | simulated, as served.")
    passed: bool = Field(description="Whether every check of the tool passed.")
    checks: list[str] = Field(default_factory=list, description="Checks that ran and passed.")
    failure: str | None = Field(default=None, description="The first failed check and why.")
    calls: int = Field(
        default=0, description="Successful calls made (each over both routes where the tool has REST)."
    )
    conforming: int = Field(
        default=0, description="Of those, calls whose status and body were exactly what the spec declares."
    )
    list_params: ListTally | None = Field(
        default=None,
        description="Of a list/search tool: its declared parameters verified, refused, untested.",
    )


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
    def __init__(self, runtime: ServiceRuntime, twin: Twin) -> None:
        self.rt = runtime
        self.twin = twin
        self.counter = 0
        self.tallies: dict[str, ListTally] = {}
        self.called: set[str] = set()  # tools called in the check under way (``reach``)

    def episode(self) -> str:
        self.counter += 1
        return f"verify-{self.counter}"

    def seed_hash(self) -> str:
        """The seed view's state hash (the store dumps the seed again only once it changed)."""
        return self.rt.state_hash(None)

    async def call(self, episode: str | None, tool: str, args: dict[str, Any]) -> ToolResult:
        """A twin call: the uniform route, and the spec's REST route in the episode's twin."""
        self.called.add(tool)
        defn = self.rt.manifest.tool(tool)
        if defn is None:
            raise _Failure(f"no tool '{tool}'")
        try:
            return await self.twin.call(episode, defn, args, self.rt.tools[tool].backend)
        except TwinFailure as exc:
            raise _Failure(str(exc)) from exc

    def first_seed_row(self, table: str) -> dict[str, Any] | None:
        """The seed's row of ``table`` with the smallest key: ``select(None, table)[0]``, reading one row.

        Keys are unique (``PRIMARY KEY``), so ``ORDER BY`` key ``LIMIT 1`` is that first row; most
        checks start from it, and decoding the whole table for it was a twentieth of verification.
        """
        spec = self.rt.store.tables.get(table)
        if spec is None:
            return next(iter(self.rt.select(None, table)), None)  # fails as select fails
        found = self.rt.store.seed_view().conn.execute(f"{spec.sql_select} ORDER BY {quote(spec.pk)} LIMIT 1")
        row = found.fetchone()
        return spec.decode(row) if row is not None else None

    def seed_row(self, tool: ToolDef) -> dict[str, Any] | None:
        if tool.entity is None:
            return None
        entity = self.rt.manifest.entity(tool.entity)
        if entity is None:
            return None
        props = tool.input_schema.get("properties") or {}
        fixed = (props.get(tool.pk_arg or "") or {}).get("enum")
        if isinstance(fixed, list):  # ``/lexicalcategories/{language}`` takes ``en`` only: a row it can name
            allowed = {str(v) for v in fixed}
            return next(
                (r for r in self.rt.select(None, entity.table) if str(r.get(entity.pk)) in allowed), None
            )
        return self.first_seed_row(entity.table)

    def args_for(self, tool: ToolDef, row: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        """Valid arguments: ids and references from the seed, the rest generated from the schema."""
        props = tool.input_schema.get("properties") or {}
        required = set(tool.input_schema.get("required") or [])
        rng = _rng(self.rt.name, tool.name)
        args: dict[str, Any] = {}
        entity = self.rt.manifest.entity(tool.entity) if tool.entity else None
        expressions = tool.listing.expressions if tool.listing is not None else None
        for name in sorted(props):
            column_name = tool.arg_columns.get(name)
            column = entity.column(column_name) if entity and column_name else None
            in_row = row is not None and column is not None and row.get(column.name) is not None
            if name == tool.pk_arg and row is not None and entity is not None:
                args[name] = row[entity.pk]
            elif (
                in_row and column is not None and (column.ref or tool.operation in ("read", "list", "search"))
            ):
                value = row[column.name]  # type: ignore[index]
                # a stored value as the argument's declared type (``season: "2018"`` for an integer column)
                args[name] = value if column.ref else as_arg(props[name], value)
            elif column is not None and column.ref:
                target = self.rt.manifest.entity(column.ref)
                head = self.first_seed_row(target.table) if target else None
                if head is not None and target:
                    args[name] = head[target.pk]
            elif tool.listing is not None and name in tool.listing.refused and name in required:
                args[name] = props[name].get("default")  # served only at its declared default
            elif expressions is not None and name == expressions.arg and name in required:
                args[name] = expressions_arg(expressions, [])  # no filter: every row
            elif name in required or (full and column is not None and not column.read_only):
                args[name] = generate_value(props[name], rng, name)
        if tool.operation in ("list", "search"):
            for name in (tool.limit_arg, tool.offset_arg):
                if name and name not in required:
                    args.pop(name, None)
                elif name:  # a required page size or offset: a count, even where the spec types it as text
                    first = 10 if name == tool.limit_arg else 1 if "page" in name.lower() else 0
                    low, high = props[name].get("minimum"), props[name].get("maximum")
                    first = max(first, low) if isinstance(low, int) and not isinstance(low, bool) else first
                    first = (
                        min(first, high) if isinstance(high, int) and not isinstance(high, bool) else first
                    )
                    args[name] = as_arg(props[name], first)
            if tool.search_arg and tool.search_arg not in required:
                args.pop(tool.search_arg, None)
            for name in tool.arg_columns:
                if name not in required and name != tool.pk_arg:
                    args.pop(name, None)
        return {k: v for k, v in args.items() if v is not None or k in required}

    async def expect_ok(self, episode: str | None, tool: ToolDef, args: dict[str, Any]) -> Any:
        out = await self.call(episode, tool.name, args)
        if not out.success:
            raise _Failure(f"{tool.name}({sorted(args)}) failed: {out.code}: {out.message}")
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
            out = await self.twin.refused(self.episode(), tool.name, {"__not_a_field__": 1})
            if out.success or ("__not_a_field__" not in out.message and "missing" not in out.message):
                raise _Failure(f"an unknown argument was not refused with a message naming it: {out}")
            return "unknown argument refused"
        typed = next(
            (n for n, s in sorted(props.items()) if s.get("type") in ("integer", "boolean", "number")), None
        )
        if typed is not None:
            out = await self.twin.refused(self.episode(), tool.name, {typed: "not-a-number"})
            if out.success:
                raise _Failure(f"a wrong type for '{typed}' was accepted")
            return "wrong type refused"
        return "no invalid input to probe"

    def reach(self, tool: ToolDef) -> frozenset[str]:
        """What the check of ``tool`` just run could find other tools by, and the tools it called
        (``compoworld.synth.reverify``)."""
        keys = set(looks_up(tool, self.rt.tools[tool.name].backend))
        for name in self.called:
            other = self.rt.manifest.tool(name)
            keys |= called(other) if other is not None else {f"tool:{name}"}
        return frozenset(keys)

    async def check_tool(self, tool: ToolDef) -> ToolCheck:
        backend = self.rt.tools[tool.name].backend
        checks: list[str] = []
        first = len(self.twin.records)
        try:
            checks.append(await self.check_invalid(tool))
            if backend == "simulated":
                await check_simulated(self, tool, checks)
            elif backend == "action" and not await check_collection(self, tool, checks):
                await check_action(self, tool, checks)
            else:
                await self._check_implemented(tool, checks)
        except (_Failure, TwinFailure) as exc:
            failure: str | None = str(exc)
        except Exception as exc:  # a crash of the checker itself fails the tool, with the reason
            failure = f"verifier crashed: {type(exc).__name__}: {exc}"
        else:
            failure = None
        self.twin.release()  # no other tool's check calls in this one's episodes
        records = [r for r in self.twin.records[first:] if r.tool == tool.name and r.success]
        return ToolCheck(
            tool=tool.name,
            operation=tool.operation,
            backend=backend,
            passed=failure is None,
            checks=checks,
            failure=failure,
            calls=len(records),
            conforming=sum(1 for r in records if not r.problems),
            list_params=self.tallies.get(tool.name),
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
            base = self.args_for(tool, row, full=False)
            await self.expect_ok(None, tool, base)
            checks.append("read on seed")
            if op == "read":
                await check_unhonoured(self, tool, base, checks)
            if op != "read":
                self.tallies[tool.name] = await check_listing(self, tool, base, checks)
            return
        episode = self.episode()
        reader = self.reader_of(tool.entity)
        if op == "create":
            created = await self.expect_ok(episode, tool, self.args_for(tool, None, full=True))
            key = _key_of(tool, created, entity.pk)
            if key is None and (entity.pk in tool.shape.fields or not tool.shape.declared):
                raise _Failure("create returned no key")
            if reader is not None and key is not None:  # read back as stored (its parents, its fields)
                stored = self.rt.select(episode, entity.table, {entity.pk: key}) or [{entity.pk: key}]
                got = await self.expect_ok(episode, reader, self.reader_args(reader, stored[0], key))
                carries_key = entity.pk in reader.shape.fields or not reader.shape.declared
                if carries_key and _key_of(reader, got, entity.pk) != key:
                    raise _Failure("create -> read did not round-trip")
                checks.append("create -> read")
            return
        if row is None:
            checks.append("no seed rows to change")
            return
        args = self.args_for(tool, row, full=True)
        await self.expect_ok(episode, tool, args)
        if op == "update" and reader is not None:
            body = await self.expect_ok(episode, reader, self.reader_args(reader, row, row[entity.pk]))
            found = reader.rows_in(body)
            got = found[0][1] if found else {}
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


def _key_of(tool: ToolDef, body: Any, pk: str) -> Any:
    """The key of the row a write answered with (read back through the tool's response shape)."""
    rows = tool.rows_in(body)
    return rows[0][1].get(pk) if rows else None


async def verify_runtime(runtime: ServiceRuntime, rebuilt: ServiceRuntime | None = None) -> VerifyReport:
    """Run every check against one loaded service."""
    report, _ = await verify_round(runtime, rebuilt)
    return report


async def verify_round(
    runtime: ServiceRuntime, rebuilt: ServiceRuntime | None = None, kept: Verdicts | None = None
) -> tuple[VerifyReport, Verdicts]:
    """Run every check against one loaded service, except those whose verdict ``kept`` carries from
    the round before (``Verdicts.kept``: no tool switched since can change them); the report, and
    every verdict with what its check reached, for the next round."""
    app = create_service_app(runtime, Settings.defaults(admin_token=_TOKEN))
    client = AsgiClient(app, "http://verify")  # the requests httpx.ASGITransport sends, without httpx
    health = await client.get(f"{RESERVED_PREFIX}/health")
    if health.status_code != 200:
        raise RuntimeError(f"{runtime.name}: /health answered {health.status_code}")
    rest_tools = {name for _, _, name in plan_routes(runtime.manifest).spec_routes}
    checker = _Checker(runtime, Twin(client, _TOKEN, rest_tools, runtime))
    verdicts = Verdicts()
    for tool in runtime.manifest.tools:
        if kept is not None and tool.name in kept.checks:
            verdicts.add(kept.checks[tool.name], kept.reach[tool.name])
            continue
        checker.called.clear()
        check = await checker.check_tool(tool)
        verdicts.add(check, checker.reach(tool))
    results = list(verdicts.checks.values())
    seed_hash = checker.seed_hash()
    deterministic = rebuilt is None or same_seed(runtime, rebuilt)
    implemented = sum(1 for b in runtime.tools.values() if b.backend == "implemented")
    actions = sum(1 for b in runtime.tools.values() if b.backend == "action")
    report = VerifyReport(
        service=runtime.name,
        passed=all(r.passed for r in results) and deterministic,
        tools=results,
        seed_hash=seed_hash,
        deterministic=deterministic,
        implemented=implemented,
        actions=actions,
        simulated=len(runtime.tools) - implemented - actions,
    )
    return report, verdicts


def same_seed(runtime: ServiceRuntime, rebuilt: ServiceRuntime) -> bool:
    """Whether a second load of the same folder seeded the same state (the same state hash).

    The same database image under the same tables dumps the same rows, so it has the same hash
    without dumping either (hashing a large seed costs tens of ms; comparing its image, a fraction
    of one); only where the images differ are the hashes compared.
    """
    same_tables = runtime.manifest.entities == rebuilt.manifest.entities
    if same_tables and runtime.store.seed.serialize() == rebuilt.store.seed.serialize():
        return True
    return rebuilt.state_hash(None) == runtime.state_hash(None)


def with_determinism(report: VerifyReport, runtime: ServiceRuntime, rebuilt: ServiceRuntime) -> VerifyReport:
    """``report`` (made with no second load) with the determinism check of ``rebuilt`` added."""
    deterministic = same_seed(runtime, rebuilt)
    return report.model_copy(
        update={"deterministic": deterministic, "passed": report.passed and deterministic}
    )


def verify_service(folder: Path) -> VerifyReport:
    """Load a generated service folder twice and run the conformance checks."""
    settings = Settings.defaults()  # a report must not depend on the environment it ran in
    first = ServiceRuntime.from_folder(folder, settings)
    second = ServiceRuntime.from_folder(folder, settings)
    return asyncio.run(verify_runtime(first, second))


async def probe_server_errors(runtime: ServiceRuntime) -> list[str]:
    """Call every tool with garbage and empty bodies and every REST route once; list any 5xx answer.

    Nothing a client sends may make a service answer 500: this is the cheap, broad probe behind
    that promise (the conformance checks above cover valid calls).
    """
    app = create_service_app(runtime, Settings.defaults(admin_token=_TOKEN))
    bad: list[str] = []
    headers = {"X-Episode-Id": "probe"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://probe") as client:
        admin = {"Authorization": f"Bearer {_TOKEN}"}
        await client.post(f"{RESERVED_PREFIX}/admin/episodes", json={"episode_id": "probe"}, headers=admin)
        for tool in runtime.manifest.tools:
            for body in (b"{}", b'{"x": [1, {"y": null}]}', b"[]", b"\x00\xff"):
                resp = await client.post(
                    f"{RESERVED_PREFIX}/tools/{tool.name}", content=body, headers=headers
                )
                if resp.status_code >= 500:
                    bad.append(f"{runtime.name}: POST /tools/{tool.name} {body!r} -> {resp.status_code}")
            if tool.path:
                path = tool.path.replace("{", "").replace("}", "")
                resp = await client.request(tool.method, path, content=b"{}", headers=headers)
                if resp.status_code >= 500:
                    bad.append(f"{runtime.name}: {tool.method} {path} -> {resp.status_code}")
    return bad
