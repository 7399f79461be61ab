"""ServiceRuntime: one generated service's state, tools and dispatcher, with no HTTP in sight.

``dispatch`` validates arguments once and runs the implemented operation against the
episode's SQLite fork synchronously (the hot path), or hands back a ``SimulatedCall`` to
await the world model; ``call_tool`` does both. Writes are logged, and every call ends as a
``ToolResult``: anything a client can send is a failure result, never an exception.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compoworld.contracts import ERROR_STATUS, Backend, ToolResult
from compoworld.errors import EpisodeStateLost, LibraryError
from compoworld.llm import LLMClient
from compoworld.manifest import ServiceManifest, ToolDef, library_folders, load_manifest
from compoworld.runtime.actions import op_action
from compoworld.runtime.ops import OPERATIONS, Deleted, Listed, Op, ToolFailure
from compoworld.runtime.shape import Shaper
from compoworld.runtime.state import Episode, StateStore
from compoworld.runtime.tables import EntityTable
from compoworld.runtime.validate import ArgsValidator, ArgumentError, json_schema_nullable
from compoworld.runtime.world import WorldModel
from compoworld.sanitize import InputRefused, Limits, check_value
from compoworld.settings import Settings

__all__ = [
    "SCHEMA_FILE",
    "ServiceRuntime",
    "SimulatedCall",
    "library_folders",
    "load_library",
    "read_schema",
    "sqlmodel_ddl",
]

log = logging.getLogger(__name__)

#: The DDL of a folder's ``models.py``, written by the build so a service loads without importing it.
SCHEMA_FILE = "schema.sql"


def sqlmodel_ddl(folder: Path, service: str) -> list[str] | None:
    """CREATE TABLE statements from the service's SQLModel classes (models.py), if it has them."""
    path = folder / "models.py"
    if not path.exists():
        return None
    module_name = f"compoworld_generated.{service}.models"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # the SQLModel classes resolve their annotations through it
    try:
        spec.loader.exec_module(module)
        metadata = getattr(module, "metadata", None)
        if metadata is None:
            return None
        from sqlalchemy.dialects import sqlite
        from sqlalchemy.schema import CreateTable

        dialect = sqlite.dialect()
        return [str(CreateTable(t).compile(dialect=dialect)).strip() for t in metadata.sorted_tables]
    except Exception as exc:
        raise LibraryError(f"{path}: generated models do not import: {exc}") from exc
    finally:  # only the DDL text is kept: a build of thousands of services must not keep every module
        sys.modules.pop(module_name, None)


def read_schema(folder: Path) -> list[str] | None:
    """The statements of ``schema.sql`` (written by the build from ``models.py``), if the folder has one."""
    path = folder / SCHEMA_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    statements: list[str] = []
    pending = ""
    for line in text.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip().removesuffix(";").rstrip())
            pending = ""
    if pending.strip():
        raise LibraryError(f"{path}: incomplete SQL statement at the end: {pending.strip()[:80]}")
    return statements


class _BoundTool:
    """A tool with its compiled table, ready to dispatch; its validator is compiled on first use.

    Compiling every validator up front made loading a large service cost hundreds of ms; a
    library app loads services on first call, and most tools of a service are never called.
    The response shaper is compiled on first use for the same reason.
    """

    __slots__ = ("_shaper", "_validator", "backend", "defn", "op", "success_status", "table")

    def __init__(self, defn: ToolDef, table: EntityTable | None) -> None:
        self.defn = defn
        self.table = table
        self._validator: ArgsValidator | None = None
        self.op: Op | None = None
        if table is not None and defn.backend == "implemented":
            self.op = OPERATIONS.get(defn.operation)
        elif table is not None and defn.backend == "action" and defn.action is not None:
            self.op = op_action
        self.backend: Backend = defn.backend if self.op is not None else "simulated"
        self._shaper: Shaper | None = None
        self.success_status = defn.shape.status

    @property
    def shaper(self) -> Shaper:
        """The tool's response shaper (``compoworld.runtime.shape``), compiled on first use."""
        if self._shaper is None:
            self._shaper = Shaper(self.defn, self.table.entity if self.table is not None else None)
        return self._shaper

    def body(self, found: Any) -> Any:
        """The success body of what an operation found (a row, a ``Listed`` page, a ``Deleted`` row).

        An action whose binding answers the spec's own body (``returns: body``) built it already.
        """
        action = self.defn.action
        if action is not None and action.returns == "body":
            return found if self.shaper.has_body else None
        if isinstance(found, Listed):
            return self.shaper.many(found.rows, found.page)
        if isinstance(found, Deleted):
            return self.shaper.deleted(found.row)
        return self.shaper.one(found)

    def failure(self, code: str, message: str) -> ToolResult:
        """A failure with the HTTP status the spec declares for it."""
        return ToolResult.fail(
            code, message, self.backend, self.shaper.error_status(code, ERROR_STATUS.get(code, 400))
        )

    @property
    def validator(self) -> ArgsValidator:
        if self._validator is None:
            self._validator = ArgsValidator(self.defn.input_schema)
        return self._validator

    @validator.setter
    def validator(self, value: ArgsValidator) -> None:
        self._validator = value


class ServiceRuntime:
    """Serves one service: episodes, tools, typed state dumps."""

    def __init__(
        self,
        manifest: ServiceManifest,
        seed_rows: dict[str, list[dict[str, Any]]],
        *,
        settings: Settings,
        ddl: list[str] | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        self.settings = settings
        self.limits = Limits.from_settings(self.settings)
        self.manifest = manifest
        self.name = manifest.name
        tables = [EntityTable(e) for e in manifest.entities]
        by_entity = {t.entity.name: t for t in tables}
        self.store = StateStore(
            tables,
            seed_rows,
            ddl=ddl,
            default_today=self.settings.default_today,
            ttl_s=self.settings.episode_ttl_s,
            max_episodes=self.settings.max_episodes,
            name=manifest.name,
        )
        self.tools: dict[str, _BoundTool] = {
            t.name: _BoundTool(t, by_entity.get(t.entity or "")) for t in manifest.tools
        }
        self.world = WorldModel(
            self.name, llm, retries=self.settings.llm_retries, tools=manifest.tools, store=self.store
        )

    @classmethod
    def from_folder(
        cls,
        folder: Path,
        settings: Settings,
        llm: LLMClient | None = None,
        *,
        ddl: list[str] | None = None,
    ) -> ServiceRuntime:
        """Load a generated service folder (manifest.json, seed.json, schema.sql or models.py).

        ``ddl`` compiled elsewhere (``compoworld.deploy.entrypoint`` does it in a child process for
        a folder without schema.sql) spares this process importing models.py and SQLAlchemy.
        """
        try:
            # parse then validate: the parser shares repeated keys, and the shared table one
            # object per repeated subschema, which keeps a large manifest's schemas several times
            # smaller in memory than model_validate_json.
            manifest = load_manifest(folder)
            seed_path = folder / "seed.json"
            seed_rows = json.loads(seed_path.read_text()) if seed_path.exists() else {}
            ddl = ddl if ddl is not None else read_schema(folder)
        except (OSError, ValueError) as exc:
            raise LibraryError(f"{folder}: cannot load service: {exc}") from exc
        if ddl is None:
            ddl = sqlmodel_ddl(folder, manifest.name)
        return cls(manifest, seed_rows, settings=settings, ddl=ddl, llm=llm)

    # -- episodes ---------------------------------------------------------------------

    def fork(self, episode_id: str, source: str | None = None, today: str | None = None) -> Episode:
        return self.store.fork(episode_id, source, today)

    def delete(self, episode_id: str) -> bool:
        return self.store.delete(episode_id)

    def freeze(self, episode_id: str) -> bool:
        """Make an ended episode's state read-only until it is deleted; False if it is not held."""
        episode = self.store.episodes.get(episode_id)
        if episode is None:
            return False
        episode.frozen = True
        return True

    def touch(self, episode_ids: list[str]) -> list[str]:
        """Keep these episodes' states alive (see ``StateStore.touch``); returns the ids not held."""
        return self.store.touch(episode_ids)

    def has_episode(self, episode_id: str) -> bool:
        return episode_id in self.store.episodes

    def dump(self, episode_id: str | None) -> dict[str, Any]:
        return self.store.dump(self.store.get(episode_id) if episode_id else self.store.seed_view())

    def state_hash(self, episode_id: str | None) -> str:
        return self.store.state_hash(self.store.get(episode_id) if episode_id else self.store.seed_view())

    def select(
        self, episode_id: str | None, table: str, where: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        episode = self.store.get(episode_id) if episode_id else self.store.seed_view()
        return self.store.select(episode, table, where)

    def write_log(self, episode_id: str) -> list[dict[str, Any]]:
        return list(self.store.get(episode_id).write_log)

    # -- tools ------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas with kind/backend/operation annotations; parameters are JSON
        Schema (a spec's OpenAPI ``nullable: true`` shown as ``null`` among the types)."""
        return [
            {
                "type": "function",
                "function": {
                    "name": b.defn.name,
                    "description": b.defn.description,
                    "parameters": json_schema_nullable(b.defn.input_schema, drop_keyword=True),
                },
                "x-kind": b.defn.kind,
                "x-backend": b.backend,
                "x-operation": b.defn.operation,
            }
            for b in self.tools.values()
        ]

    def dispatch(
        self, episode_id: str | None, name: str, args: Any, call_id: str | None = None
    ) -> ToolResult | SimulatedCall:
        """Validate and run one call synchronously; a simulated tool comes back prepared, to be awaited.

        Validation happens once: the ``SimulatedCall`` carries the checked tool and episode. A
        ``call_id`` this episode already ran is answered from its memory of it, not run again (an
        orchestrator replica retrying a turn another replica died in the middle of).
        """
        replayed = self._replayed(episode_id, call_id)
        if replayed is not None:
            return replayed
        bound = self.tools.get(name)
        if bound is None:
            return ToolResult.fail("unknown_tool", f"service '{self.name}' has no tool '{name}'")
        try:
            check_value(args, self.limits, "arguments")
        except InputRefused as exc:
            return bound.failure(exc.code, exc.message)
        try:
            bound.validator(args)
        except ArgumentError as exc:
            return bound.failure("invalid_arguments", str(exc))
        try:
            episode = self.store.get(episode_id)
        except EpisodeStateLost as exc:  # never a silent re-fork from the seed
            return bound.failure("episode_gone", str(exc))
        if episode.read_only and bound.defn.is_write:
            return ToolResult.fail(
                "episode_required",
                f"'{name}' changes state: open an episode (POST /episodes) and send its id as X-Episode-Id",
                bound.backend,
            )
        if episode.frozen and bound.defn.is_write:
            return bound.failure(
                "episode_finished",
                f"'{name}' changes state, and this episode has ended: its state is read-only",
            )
        if bound.op is None:
            return SimulatedCall(self, bound, episode, args, call_id)
        return remember(episode, call_id, self._run_implemented(bound, episode, name, args))

    async def call_tool(
        self, episode_id: str | None, name: str, args: Any, call_id: str | None = None
    ) -> ToolResult:
        """Run one tool call in an episode, awaiting the world model if the tool is simulated."""
        result = self.dispatch(episode_id, name, args, call_id)
        return result if isinstance(result, ToolResult) else await result.run()

    def _replayed(self, episode_id: str | None, call_id: str | None) -> ToolResult | None:
        if call_id is None or not episode_id:
            return None
        episode = self.store.episodes.get(episode_id)
        return None if episode is None else episode.replies.get(call_id)

    def _run_each(self, bound: _BoundTool, episode: Episode, args: dict[str, Any]) -> ToolResult:
        """A batch read: the one-row read's answer for each key of the body, in order; a key the
        state does not hold fails the call as that read does."""
        assert bound.defn.action is not None and bound.defn.action.each is not None
        one = self.tools[bound.defn.action.each]
        assert one.defn.pk_arg is not None
        shared = {k: v for k, v in args.items() if k != bound.defn.body_whole}
        answers = []
        for key in args.get(bound.defn.body_whole or "") or []:
            result = self._run_implemented(one, episode, one.defn.name, {**shared, one.defn.pk_arg: key})
            if not result.success:
                return bound.failure(result.code, result.message)
            answers.append(result.data)
        return ToolResult.ok(answers, bound.backend, bound.success_status)

    def _run_implemented(self, bound: _BoundTool, episode: Episode, name: str, args: Any) -> ToolResult:
        if bound.defn.action is not None and bound.defn.action.each is not None:
            return self._run_each(bound, episode, args)
        assert bound.op is not None and bound.table is not None
        try:
            data = bound.body(bound.op(self.store, bound.defn, bound.table, episode, args))
        except ToolFailure as exc:
            result = bound.failure(exc.code, exc.message)
        except (ValueError, TypeError, OverflowError) as exc:
            result = bound.failure("invalid_arguments", f"{name}: {exc}")
        except sqlite3.IntegrityError as exc:  # a unique or not-null rule of the table: the API's 409
            result = bound.failure("conflict", f"{name}: {exc}")
        except Exception as exc:  # sqlite errors from odd values: a client error, never a 500
            log.exception("tool %s.%s failed", self.name, name)
            result = bound.failure("tool_error", f"{name} could not be executed: {type(exc).__name__}: {exc}")
        else:
            result = ToolResult.ok(data, bound.backend, bound.success_status)
        if bound.defn.is_write:
            self.log_write(episode, name, args, result)
        return result

    def log_write(self, episode: Episode, name: str, args: Any, result: ToolResult) -> None:
        """Append a write call to the episode's write log (the seed view keeps none)."""
        if episode.read_only:
            return
        episode.write_log.append(
            {
                "seq": len(episode.write_log) + 1,
                "tool": name,
                "arguments": args,
                "success": result.success,
                "backend": result.backend,
                "time": episode.now,
                "wall_time": time.time(),
            }
        )


class SimulatedCall:
    """A validated call of a simulated tool, waiting on the world model (``await call.run()``)."""

    __slots__ = ("args", "bound", "call_id", "episode", "runtime")

    def __init__(
        self,
        runtime: ServiceRuntime,
        bound: _BoundTool,
        episode: Episode,
        args: Any,
        call_id: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.bound = bound
        self.episode = episode
        self.args = args
        self.call_id = call_id

    async def run(self) -> ToolResult:
        runtime, defn = self.runtime, self.bound.defn
        try:
            data = await runtime.world.respond(defn, self.args, self.episode)
            if not defn.shape.body:  # the spec declares no body (204): the uniform route's data is none too
                data = None
            result = ToolResult.ok(data, "simulated", self.bound.success_status)
        except ToolFailure as exc:  # an id that names nothing: not found, as a real API answers
            result = ToolResult.fail(exc.code, exc.message, "simulated")
        except Exception as exc:
            log.exception("simulated tool %s.%s failed", runtime.name, defn.name)
            result = ToolResult.fail("tool_error", f"{defn.name} could not be simulated: {exc}", "simulated")
        if defn.is_write:
            runtime.log_write(self.episode, defn.name, self.args, result)
        return remember(self.episode, self.call_id, result)


def remember(episode: Episode, call_id: str | None, result: ToolResult) -> ToolResult:
    """Keep the answer of an identified call in its episode, for a retry of the same call."""
    if call_id is not None and not episode.read_only:
        episode.replies[call_id] = result
    return result


def load_library(
    path: Path,
    settings: Settings,
    llm: LLMClient | None = None,
    on_loaded: Callable[[str], None] | None = None,
) -> dict[str, ServiceRuntime]:
    """Every service under ``path``, sorted by name; ``on_loaded`` hears each name (progress bars)."""
    runtimes: dict[str, ServiceRuntime] = {}
    for folder in library_folders(path):
        runtime = ServiceRuntime.from_folder(folder, settings, llm)
        if runtime.name in runtimes:
            raise LibraryError(f"{folder}: duplicate service name '{runtime.name}'")
        runtimes[runtime.name] = runtime
        if on_loaded is not None:
            on_loaded(runtime.name)
    return runtimes
