"""The world model: responses for tools that are not served from typed state, that keep their word.

Offline (the default) a deterministic generator produces a schema-valid response seeded by
sha256(service, tool, arguments). With an LLM endpoint configured the model proposes the
response, which must validate against the tool's output schema (invalid: retry, then the
offline generator). Whichever proposed it, the answer is then made consistent:

- inputs the response has a place for are echoed (``?from=EUR&to=HUF`` answers EUR -> HUF);
- an id argument naming a typed entity must name an existing row (else ``not_found``), and a
  response that describes that row reflects it;
- within an episode a simulated collection keeps what its calls showed and did
  (``compoworld.runtime.worldstate``): a created id reads back and is listed, an update is seen by
  later reads, a deleted id is gone, and an id nobody showed or created is not found.

Repeated reads return the same answer (the generated base is cached per episode, the state
overlaid on every call), and every simulated write is recorded in the typed ``action_log``.
"""

from __future__ import annotations

import copy
import json
import logging
import random
from collections.abc import Iterator
from typing import Any

from compoworld.errors import LLMError
from compoworld.llm import LLMClient
from compoworld.manifest import EntityDef, ToolDef
from compoworld.patterns import SchemaValidator
from compoworld.runtime.echo import describes_row, echo, norm, row_source
from compoworld.runtime.generate import generate_value
from compoworld.runtime.ops import ToolFailure
from compoworld.runtime.state import Episode, StateStore
from compoworld.runtime.worldstate import (
    Address,
    address_of,
    cached_calls,
    id_of,
    known_objects,
    main_object,
)
from compoworld.seeding import value_seed

__all__ = ["WorldModel", "generate_value"]

log = logging.getLogger(__name__)


def _scalars(args: dict[str, Any]) -> dict[str, Any]:
    return {norm(k): v for k, v in args.items() if v is not None and not isinstance(v, (dict, list))}


def _first_list(value: Any, schema: Any, depth: int = 0) -> tuple[list[Any], Any] | None:
    """The array a list response carries (a bare array, or the first inside its envelope) and the
    schema of its items."""
    if depth > 3:
        return None
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(value, list):
        return value, schema.get("items")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, item in value.items():
            found = _first_list(item, props.get(key), depth + 1) if isinstance(item, (dict, list)) else None
            if found is not None:
                return found
    return None


def _set_key(target: dict[str, Any], key_arg: str, key: Any) -> None:
    """Make the object's own id field say the id it was asked for."""
    by_norm = {norm(k): k for k in target}
    field = by_norm.get(norm(key_arg)) or by_norm.get("id")
    if field is None or isinstance(target[field], (dict, list)):
        return
    current = target[field]
    if isinstance(current, int) and not isinstance(current, bool) and str(key).lstrip("-").isdigit():
        target[field] = int(key)
    elif isinstance(current, str):
        target[field] = str(key)


class WorldModel:
    """Simulated backend of one service, aware of its typed tables and its other simulated tools."""

    def __init__(
        self,
        service: str,
        llm: LLMClient | None = None,
        retries: int = 2,
        *,
        tools: list[ToolDef] | None = None,
        store: StateStore | None = None,
    ) -> None:
        self.service = service
        self.llm = llm
        self.retries = retries
        self.store = store
        self.tools = {t.name: t for t in tools or []}
        self.addresses: dict[str, Address | None] = {t.name: address_of(t) for t in tools or []}
        self.keys: dict[str, str] = {}
        for address in self.addresses.values():
            if address is not None and address.key_arg:
                self.keys.setdefault(address.collection, address.key_arg)

    # -- proposing a response ---------------------------------------------------------------

    def _offline(self, tool: ToolDef, args: dict[str, Any], today: str, salt: int) -> Any:
        rng = random.Random(value_seed(self.service, tool.name, args, salt))
        schema = tool.output_schema or {"type": "object", "properties": {"id": {"type": "string"}}}
        return generate_value(schema, rng, tool.name, today)

    async def _from_llm(
        self, tool: ToolDef, args: dict[str, Any], episode: Episode, history: list[Any]
    ) -> Any:
        assert self.llm is not None
        validator = SchemaValidator(tool.output_schema) if tool.output_schema else None
        system = (
            "You simulate the backend of a real API for testing. Reply with only the JSON value the "
            "tool returns on success (no envelope), valid against the output schema, consistent with the "
            f"earlier simulated actions. Today is {episode.today}."
        )
        user = json.dumps(
            {
                "service": self.service,
                "tool": tool.name,
                "description": tool.description,
                "arguments": args,
                "output_schema": tool.output_schema,
                "earlier_actions": history[-10:],
            },
            default=str,
        )
        for _ in range(self.retries + 1):
            try:
                value = await self.llm.complete_json(system, user, seed=value_seed(tool.name, args) % 2**31)
            except LLMError as exc:
                log.warning("world model LLM failed for %s.%s: %s", self.service, tool.name, exc)
                return None
            if validator is None or not any(True for _ in validator.iter_errors(value)):
                return value
        return None

    def _history(self, episode: Episode) -> list[dict[str, Any]]:
        rows = episode.conn.execute("SELECT tool, arguments, response FROM action_log ORDER BY seq")
        return [{"tool": t, "arguments": json.loads(a), "response": json.loads(r)} for t, a, r in rows]

    async def _base(self, tool: ToolDef, args: dict[str, Any], episode: Episode, key: str) -> Any:
        """The proposed response before it is made consistent (a read's is cached per episode)."""
        if not tool.is_write and key in episode.sim_cache:
            return episode.sim_cache[key]
        salt = 0
        if tool.is_write:
            salt = episode.conn.execute("SELECT COUNT(*) FROM action_log").fetchone()[0]
        value = None
        if self.llm is not None:
            value = await self._from_llm(tool, args, episode, self._history(episode))
        if value is None:
            value = self._offline(tool, args, episode.today, salt)
        return value

    async def respond(self, tool: ToolDef, args: dict[str, Any], episode: Episode) -> Any:
        """The simulated ``data`` of a successful call (``ToolFailure`` for an id that names nothing).

        Writes are appended to the action log.
        """
        rows = self._typed_rows(tool, args, episode)
        key = json.dumps([tool.name, args], sort_keys=True, separators=(",", ":"), default=str)
        base = await self._base(tool, args, episode, key)
        value = copy.deepcopy(base)
        value = echo(value, _scalars(args), tool.output_schema, keep=frozenset(), ids=True)
        for entity, row in rows:
            value = self._reflect(tool, value, entity, row)
        address = self.addresses.get(tool.name) or address_of(tool)
        if address is not None:
            value = self._keep_word(tool, address, args, value, episode, bool(rows))
        if tool.is_write:
            self._record(tool, args, value, episode)
        elif not episode.read_only:  # what a read showed stays shown (the seed view keeps nothing)
            episode.sim_cache[key] = base
        return value

    # -- consistency with typed state ------------------------------------------------------

    def _typed_rows(
        self, tool: ToolDef, args: dict[str, Any], episode: Episode
    ) -> list[tuple[EntityDef, Any]]:
        """Rows of typed entities the id arguments name; ``not_found`` for one that does not exist."""
        if self.store is None:
            return []
        found = []
        for arg, tag in sorted(tool.arg_semantics.items()):
            table = self.store.by_entity.get(tag[3:]) if tag.startswith("id:") else None
            value = args.get(arg)
            if table is None or value is None or isinstance(value, (dict, list, bool)):
                continue
            in_path = tool.arg_locations.get(arg) == "path"
            if not in_path and not (tool.is_write and tool.operation != "create"):
                continue  # a list filter on an unknown id finds nothing; it is not an error
            if tool.operation == "create" and table.entity.name == tool.entity and not in_path:
                continue
            key: Any = value
            if table.entity.pk_type == "integer" and isinstance(value, str) and value.lstrip("-").isdigit():
                key = int(value)
            elif table.entity.pk_type == "string" and not isinstance(value, str):
                continue  # an integer cannot name a row of string keys: the tag is a guess, not a reference
            row = episode.conn.execute(table.sql_get, (key,)).fetchone()
            if row is None:
                raise ToolFailure("not_found", f"{table.entity.name} '{value}' not found")
            found.append((table.entity, table.decode(row)))
        return found

    def _reflect(self, tool: ToolDef, value: Any, entity: EntityDef, row: dict[str, Any]) -> Any:
        """Fill the response from a row: all of it where it describes the row, else the row's key."""
        target = main_object(value, None)
        source = row_source(row, entity)
        if target is not None and describes_row(tool.output_schema, entity):
            echo(target, source, tool.output_schema)
            return value
        own = norm(entity.name + "id")
        keys = {own: row[entity.pk]} if row.get(entity.pk) is not None else {}
        return echo(value, keys, tool.output_schema, keep=frozenset(keys))

    # -- consistency within a simulated collection -----------------------------------------

    def _shown(self, episode: Episode) -> Iterator[tuple[Address, dict[str, Any], Any]]:
        for name, args, value in cached_calls(episode.sim_cache):
            address = self.addresses.get(name)
            if address is not None:
                yield address, args, value

    def _written(self, episode: Episode) -> Iterator[tuple[Address, dict[str, Any], Any]]:
        for entry in self._history(episode):
            address = self.addresses.get(entry["tool"])
            if address is not None and isinstance(entry["arguments"], dict):
                yield address, entry["arguments"], entry["response"]

    def _listing(self, collection: str, episode: Episode) -> Iterator[tuple[Address, dict[str, Any], Any]]:
        """What the collection's argument-free lists show on any fork: its objects before anyone wrote."""
        for name, address in sorted(self.addresses.items()):
            tool = self.tools[name]
            if address is None or address.collection != collection or address.role != "list":
                continue
            if tool.input_schema.get("required"):
                continue
            yield address, {}, self._offline(tool, {}, episode.today, 0)

    def _objects(self, collection: str, episode: Episode) -> dict[str, dict[str, Any] | None]:
        shown = [*self._listing(collection, episode), *self._shown(episode)]
        return known_objects(collection, self.keys.get(collection), shown, self._written(episode))

    def _keep_word(
        self, tool: ToolDef, address: Address, args: dict[str, Any], value: Any, episode: Episode, typed: bool
    ) -> Any:
        if address.role == "list":
            return self._list(tool, address, value, episode)
        if address.key_arg is None or address.role == "create" or args.get(address.key_arg) is None:
            return value
        key = str(args[address.key_arg])
        objects = self._objects(address.collection, episode)
        if key not in objects and not typed:
            raise ToolFailure("not_found", f"'{key}' not found: no {address.collection} object has that id")
        current = objects.get(key, {})
        if current is None:
            raise ToolFailure("not_found", f"'{key}' not found: it was deleted")
        target = main_object(value, address.key_arg)
        if target is not None:
            if current:
                echo(target, _scalars(current), tool.output_schema)
            if address.role in ("read", "update"):
                _set_key(target, address.key_arg, args[address.key_arg])
        return value

    def _list(self, tool: ToolDef, address: Address, value: Any, episode: Episode) -> Any:
        """A list shows the collection's objects as they stand: created ones added, deleted ones gone."""
        objects = self._objects(address.collection, episode)
        listed = _first_list(value, tool.output_schema)
        if listed is None or not objects:
            return value
        items, item_schema = listed
        key_arg = self.keys.get(address.collection)
        template = next((i for i in items if isinstance(i, dict)), None)
        present = {str(id_of(i, key_arg)): i for i in items if isinstance(i, dict)}
        kept = [
            i for i in items if not isinstance(i, dict) or objects.get(str(id_of(i, key_arg)), {}) is not None
        ]
        for key, obj in sorted(objects.items()):
            if obj is None:
                continue
            if key in present:
                echo(present[key], _scalars(obj), item_schema)
            elif template is not None:
                item = copy.deepcopy(template)
                echo(item, _scalars(obj), item_schema)
                if id_of(item, key_arg) is not None and str(id_of(item, key_arg)) == key:
                    kept.append(item)
        items[:] = kept
        return value

    def _record(self, tool: ToolDef, args: dict[str, Any], value: Any, episode: Episode) -> None:
        if episode.read_only:
            return
        episode.conn.execute(
            "INSERT INTO action_log (tool, operation, arguments, response, time) VALUES (?, ?, ?, ?, ?)",
            (
                tool.name,
                tool.operation,
                json.dumps(args, sort_keys=True, default=str),
                json.dumps(value, sort_keys=True, default=str),
                episode.now,
            ),
        )
