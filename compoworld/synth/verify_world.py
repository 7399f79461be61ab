"""Conformance checks of action and simulated tools (the CRUD checks are in ``verify``).

An action is checked as CRUD is: its effect must be visible to a later read. A transition is
run on a seed row it applies to, the row is read back in the same episode (through the entity's
read tool where it has one, always through the typed state) with the new status or flags, and a
repeat that the action's own rules refuse is refused with ``invalid_transition``. An insert or
copy must leave a new row that reads back; a clear must leave the addressed row without the
children it names; a set must leave the written columns as given. A lookup (a read action on one
row) must answer from the row it addresses, leave the state as it was, and refuse an unknown id.

A simulated tool must keep its word: its answer validates against its schema, an item read of an
id nobody showed or created is not found, and a simulated create's id reads back in its episode.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from compoworld.contracts import ToolResult
from compoworld.manifest import ActionDef, ColumnDef, EntityDef, ToolDef
from compoworld.patterns import SchemaValidator
from compoworld.runtime import ServiceRuntime
from compoworld.runtime.actions import dated, match_day, member_value, request_body
from compoworld.runtime.echo import norm
from compoworld.runtime.generate import generate_value
from compoworld.runtime.validate import ArgsValidator, ArgumentError
from compoworld.runtime.worldstate import address_of, id_of, main_object, object_items
from compoworld.schema_types import schema_types
from compoworld.seeding import seeded_rng
from compoworld.specs.shapes import json_type
from compoworld.synth.actions import patch_columns
from compoworld.values import fit_string

__all__ = ["CheckFailure", "Checker", "check_action", "check_simulated", "check_unhonoured", "state_of"]


class CheckFailure(Exception):
    """A conformance check that failed, with the reason."""


class Checker(Protocol):
    """What these checks need from the conformance checker."""

    rt: ServiceRuntime

    def episode(self) -> str: ...

    def seed_hash(self) -> str: ...

    async def call(self, episode: str | None, tool: str, args: dict[str, Any]) -> ToolResult: ...

    async def expect_ok(self, episode: str | None, tool: ToolDef, args: dict[str, Any]) -> Any: ...

    def args_for(self, tool: ToolDef, row: dict[str, Any] | None, *, full: bool) -> dict[str, Any]: ...

    def reader_of(self, entity: str | None) -> ToolDef | None: ...

    def reader_args(self, reader: ToolDef, row: dict[str, Any], key: Any) -> dict[str, Any]: ...


def _get(row: dict[str, Any], path: str) -> Any:
    column, _, key = path.partition(".")
    value = row.get(column)
    return (value.get(key) if isinstance(value, dict) else None) if key else value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return norm(a) == norm(b)
    return bool(a == b)


def state_of(action: ActionDef, row: dict[str, Any]) -> str | None:
    """Why ``row`` is not a row the transition applies to (None: it applies)."""
    for path, allowed in action.requires.items():
        if not any(_same(_get(row, path), v) for v in allowed):
            return f"{path} is {_get(row, path)!r}"
    for path, refused in action.refuses.items():
        if any(_same(_get(row, path), v) for v in refused):
            return f"{path} is {_get(row, path)!r}"
    return None


def _entity(rt: ServiceRuntime, name: str) -> EntityDef:
    entity = rt.manifest.entity(name)
    if entity is None:
        raise CheckFailure(f"the action writes entity '{name}', which the service does not have")
    return entity


def _rows(rt: ServiceRuntime, entity: EntityDef, episode: str | None = None) -> list[dict[str, Any]]:
    return rt.select(episode, entity.table)


def _action_args(ck: Checker, tool: ToolDef, row: dict[str, Any] | None) -> dict[str, Any]:
    args = ck.args_for(tool, row, full=True)
    if row is not None and tool.action is not None:
        entity = _entity(ck.rt, tool.entity or "")
        if tool.pk_arg:
            args[tool.pk_arg] = row[entity.pk]
        for arg, column in tool.action.scope.items():
            if row.get(column) is not None:
                args[arg] = row[column]
    return args


async def _read_back(ck: Checker, episode: str, entity: EntityDef, key: Any) -> dict[str, Any]:
    """The row as a later read sees it: through the entity's read tool (if any) and the typed state."""
    rows = ck.rt.select(episode, entity.table, {entity.pk: key})
    if not rows:
        raise CheckFailure(f"{entity.name} '{key}' is not in the typed state after the action")
    reader = ck.reader_of(entity.name)
    if reader is not None:
        got = await ck.expect_ok(episode, reader, ck.reader_args(reader, rows[0], key))
        found = reader.rows_in(got) or []  # through the reader's response shape: keyed by column
        seen = found[0][1].get(entity.pk, key) if len(found) == 1 else key
        if str(seen) != str(key):  # the spec may type the key as a string
            raise CheckFailure(f"reading {entity.name} '{key}' back returned another row")
    return rows[0]


async def _set_up(
    ck: Checker, tool: ToolDef, action: ActionDef, rows: list[dict[str, Any]], episode: str
) -> dict[str, Any] | None:
    """A row the transition applies to, made by running another transition first (pause, then resume)."""
    entity = _entity(ck.rt, tool.entity or "")
    for other in ck.rt.manifest.tools:
        first = other.action
        if (
            other.name == tool.name
            or first is None
            or first.kind != "transition"
            or other.entity != tool.entity
        ):
            continue
        if ck.rt.tools[other.name].backend != "action":
            continue
        reaches = all(
            path in first.sets and any(_same(first.sets[path], v) for v in allowed)
            for path, allowed in action.requires.items()
        )
        start = next((r for r in rows if state_of(first, r) is None), None) if reaches else None
        if start is None:
            continue
        out = await ck.call(episode, other.name, _action_args(ck, other, start))
        if out.success:
            row = ck.rt.select(episode, entity.table, {entity.pk: start[entity.pk]})[0]
            if state_of(action, row) is None:
                return row
    return None


async def _check_transition(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    entity = _entity(ck.rt, tool.entity or "")
    rows = _rows(ck.rt, entity)
    if not rows:
        checks.append("no seed rows to act on")
        return
    fit = next((r for r in rows if state_of(action, r) is None), None)
    episode = ck.episode()
    if fit is None:
        fit = await _set_up(ck, tool, action, rows, episode)
        if fit is not None:
            checks.append("brought into its starting state by another action")
    if fit is None:
        out = await ck.call(episode, tool.name, _action_args(ck, tool, rows[0]))
        if out.success or out.code != "invalid_transition":
            raise CheckFailure(
                f"{tool.name} on a row it does not apply to ({state_of(action, rows[0])}) was not refused"
            )
        checks.append("invalid transition refused")
        return
    await ck.expect_ok(episode, tool, _action_args(ck, tool, fit))
    after = await _read_back(ck, episode, entity, fit[entity.pk])
    for path, value in action.sets.items():
        if not _same(_get(after, path), value):
            raise CheckFailure(f"{tool.name} left {path} = {_get(after, path)!r}, not {value!r}")
    checks.append("transition visible to a later read")
    if state_of(action, after) is not None:
        again = await ck.call(episode, tool.name, _action_args(ck, tool, after))
        if again.success or again.code != "invalid_transition":
            raise CheckFailure(f"repeating {tool.name} ({state_of(action, after)}) was not refused")
        checks.append("repeat refused")


async def _check_insert(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    written = _entity(ck.rt, action.target)
    addressed = _entity(ck.rt, tool.entity or "")
    source = None
    if action.kind in ("copy", "clear", "set"):
        rows = _rows(ck.rt, addressed)
        if not rows:
            checks.append("no seed rows to act on")
            return
        source = rows[0]
    episode = ck.episode()
    before = {r[written.pk] for r in _rows(ck.rt, written, None)}
    args = _action_args(ck, tool, source)
    patched = _patch(tool, action, addressed, source, args) if action.patch is not None else None
    await ck.expect_ok(episode, tool, args)
    after = {r[written.pk] for r in _rows(ck.rt, written, episode)}
    if action.kind == "clear":
        assert source is not None and action.parent_column is not None
        left = ck.rt.select(episode, written.table, {action.parent_column: source[addressed.pk]})
        left = [r for r in left if all(any(_same(r.get(c), v) for v in vs) for c, vs in action.where.items())]
        if left:
            raise CheckFailure(f"{tool.name} left {len(left)} {written.name} rows it should clear")
        checks.append("clear visible to a later read")
        return
    if action.kind == "set":
        assert source is not None
        got = await _read_back(ck, episode, addressed, source[addressed.pk])
        if action.member is not None:  # the row's sub-record holds the body sent
            held = addressed.column(action.member)
            listed = held is not None and json_type(held.json_schema) == "array"
            body = request_body(tool, args)
            wanted = member_value(listed, tool.method, source.get(action.member), body)
            if got.get(action.member) != wanted:
                raise CheckFailure(
                    f"{tool.name} left {action.member} = {got.get(action.member)!r}, not {wanted!r}"
                )
        for arg, column in tool.arg_columns.items():
            value = args.get(arg)
            if arg in args and not isinstance(value, (dict, list)) and not _same(got.get(column), value):
                raise CheckFailure(f"{tool.name} left {column} = {got.get(column)!r}, not {value!r}")
        if patched is not None and got.get(patched[0]) != patched[1]:  # the patched field holds it
            raise CheckFailure(f"{tool.name} left {patched[0]} = {got.get(patched[0])!r}, not {patched[1]!r}")
        checks.append("patch visible to a later read" if patched else "set visible to a later read")
        return
    new = sorted(after - before, key=str)
    if len(new) != 1:
        raise CheckFailure(f"{tool.name} added {len(new)} {written.name} rows, not one")
    row = await _read_back(ck, episode, written, new[0])
    for path, value in action.sets.items():
        if not _same(_get(row, path), value):
            raise CheckFailure(f"the inserted {written.name} has {path} = {_get(row, path)!r}, not {value!r}")
    checks.append(f"{action.kind} visible to a later read")


def _patch(
    tool: ToolDef, action: ActionDef, entity: EntityDef, row: dict[str, Any] | None, args: dict[str, Any]
) -> tuple[str, Any]:
    """A JSON Patch replacing one writable field of ``row`` with a new value of its type, put in
    ``args``: (column, value) the later read must show."""
    assert action.patch is not None and row is not None
    schema = (tool.input_schema.get("properties") or {}).get(action.patch) or {}
    items = schema.get("items") if isinstance(schema, dict) else None
    value_schema = (items.get("properties") or {}).get("value") if isinstance(items, dict) else None
    op = (items.get("properties") or {}).get("op") if isinstance(items, dict) else None
    spelled = [v for v in (op.get("enum") or []) if isinstance(v, str)] if isinstance(op, dict) else []
    replace = next((v for v in spelled if v.lower() == "replace"), "replace")  # the spec's spelling
    columns = patch_columns(value_schema, entity)
    if not columns:
        raise CheckFailure(f"{tool.name}: no field of {entity.name} a JSON Patch value can write")
    rng = seeded_rng("patch", tool.name)
    for column in columns:
        for _ in range(5):
            value = generate_value(column.json_schema or {"type": column.type}, rng, column.name)
            if value is not None and value != row.get(column.name):
                path = "/" + (column.source_name or column.name).replace("~", "~0").replace("/", "~1")
                args[action.patch] = [{"op": replace, "path": path, "value": value}]
                return column.name, value
    raise CheckFailure(f"{tool.name}: no new value for any patchable field of {entity.name}")


def _unknown_key(tool: ToolDef, entity: EntityDef, held: set[str]) -> Any:
    """A key of the argument's own type (and format) that no row holds."""
    schema = (tool.input_schema.get("properties") or {}).get(tool.pk_arg or "")
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = kinds if isinstance(kinds, list) else [kinds]
    column = entity.column(entity.pk)
    if "string" not in kinds and (
        "integer" in kinds or "number" in kinds or (column and column.type != "string")
    ):
        return 987654321
    # a key of the format the API fixes (``^OB_EV\\d{1,7}$``), else it is refused as invalid, not unknown
    constraints = schema if isinstance(schema, dict) else {}
    for attempt in range(20):
        key = fit_string(f"no-such-id-{attempt}", constraints, seeded_rng("unknown-key", tool.name, attempt))
        if key not in held:
            break
    return key


def _same_row(tool: ToolDef, got: dict[str, Any], row: dict[str, Any], entity: EntityDef) -> bool:
    """Whether an answer is the addressed row: its key, or where the body carries no key (a view of
    one field, ``GET /analogInputs/{ioName}/eu`` -> ``{"value": 2.5}``), every column the body
    shows (an absent field is a null column)."""
    if entity.pk in got:
        return str(got[entity.pk]) == str(row[entity.pk])
    shown = [c for c in (tool.shape.fields or got) if c in row]
    return bool(shown) and all(_text(got.get(c)) == _text(row[c]) for c in shown)


def _text(value: Any) -> str:
    """A value as text (``"42"`` and ``42`` agree: an int64 read as a string is the same value)."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _match_arg(tool: ToolDef, column: ColumnDef, value: Any) -> Any:
    """The argument naming ``value`` of ``column``: a timestamp by its day, as text where the
    argument is a string (``season: "2024"`` names the integer 2024)."""
    if dated(column):
        return match_day(value)
    arg = next((a for a, c in (tool.action.match if tool.action else {}).items() if c == column.name), "")
    schema = (tool.input_schema.get("properties") or {}).get(arg)
    kinds = schema_types(schema)[0] if isinstance(schema, dict) else set()
    if "string" in kinds:
        return str(value) if not isinstance(value, str) else value
    if isinstance(value, str) and kinds & {"number", "integer"}:  # ``lat: "38.12"`` asked as 38.12
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if "number" not in kinds and number.is_integer() else number
    return value


async def check_unhonoured(ck: Checker, tool: ToolDef, args: dict[str, Any], checks: list[str]) -> None:
    """Each parameter a read refuses (``units``, ``days``, ``fields``) is refused by name at a value
    other than its default, never answered as if it were honoured."""
    props = tool.input_schema.get("properties") or {}
    validator = ArgsValidator(tool.input_schema)
    for arg in sorted(tool.listing.refused if tool.listing is not None else {}):
        schema = props.get(arg) or {}
        rng = seeded_rng("verify-unhonoured", tool.name, arg)
        for _ in range(5):
            value = generate_value(schema, rng, arg)
            if value in (None, "", [], {}) or value == schema.get("default"):
                continue
            try:
                validator({**args, arg: value})
            except ArgumentError:
                continue
            out = await ck.call(None, tool.name, {**args, arg: value})
            if out.success or arg not in (out.message or ""):
                raise CheckFailure(f"{tool.name}: unhonoured argument '{arg}' was not refused by name: {out}")
            checks.append(f"unhonoured '{arg}' refused by name")
            break


async def _check_match(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    """A lookup by fields answers the first seed row (by key) holding the values its arguments
    name, changes nothing, and values no row holds are not found."""
    entity = _entity(ck.rt, action.target)
    columns = {c.name: c for c in entity.columns}
    rows = sorted(
        (
            r
            for r in _rows(ck.rt, entity)
            if all(
                r.get(c) is not None and _match_arg(tool, columns[c], r[c]) is not None
                for c in action.match.values()
            )
        ),
        key=lambda r: (str(type(r[entity.pk])), r[entity.pk]),
    )
    episode = ck.episode()
    args = ck.args_for(tool, rows[0] if rows else None, full=True)
    if rows:
        values = {a: _match_arg(tool, columns[c], rows[0][c]) for a, c in action.match.items()}
        args.update(values)
        held = [
            r
            for r in rows
            if all(
                _text(_match_arg(tool, columns[c], r[c])) == _text(values[a]) for a, c in action.match.items()
            )
        ]
        data = await ck.expect_ok(episode, tool, args)
        # the row, or the spec's body filled from it: where that body carries the key, the row's
        found = (tool.rows_in(data) or []) if action.returns == "row" else [(0, data)]
        keyed = action.returns == "row" or (isinstance(data, dict) and entity.pk in data)
        if keyed and (len(found) != 1 or not _same_row(tool, found[0][1], held[0], entity)):
            raise CheckFailure(
                f"{tool.name} with {values} answered another {entity.name} than '{held[0][entity.pk]}'"
            )
        if ck.rt.state_hash(episode) != ck.seed_hash():
            raise CheckFailure(f"{tool.name} (a read) changed the typed state")
        checks.append("lookup answers the row holding the values its arguments name")
        await check_unhonoured(ck, tool, args, checks)
    arg, name = sorted(action.match.items())[0]
    column = columns[name]
    if dated(column):
        missing: Any = "1901-01-01"
    else:
        schema = (tool.input_schema.get("properties") or {}).get(arg)
        numeric = isinstance(schema, dict) and bool(schema_types(schema)[0] & {"number", "integer"})
        missing = _match_arg(
            tool, column, 987654321 if numeric or column.type in ("integer", "number") else "no-such-value"
        )
    unknown = await ck.call(episode, tool.name, {**args, arg: missing})
    if unknown.success or unknown.code != "not_found":
        raise CheckFailure(
            f"{tool.name} with {arg} {missing!r}, which no row holds, was not 'not_found': {unknown}"
        )
    checks.append("unmatched values not found")


async def _check_lookup(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    """A read action answers from the row it addresses, changes nothing, and an unknown id is not found."""
    if action.match:
        await _check_match(ck, tool, action, checks)
        return
    entity = _entity(ck.rt, action.target)
    rows = _rows(ck.rt, entity)
    episode = ck.episode()
    args = _action_args(ck, tool, rows[0] if rows else None)
    if rows:
        data = await ck.expect_ok(episode, tool, args)
        if action.returns == "row":
            found = tool.rows_in(data) or []
            if len(found) != 1 or not _same_row(tool, found[0][1], rows[0], entity):
                raise CheckFailure(
                    f"{tool.name} on {entity.name} '{rows[0][entity.pk]}' answered another row"
                )
        if ck.rt.state_hash(episode) != ck.seed_hash():  # the seed view: what the fork started from
            raise CheckFailure(f"{tool.name} (a read) changed the typed state")
        checks.append("lookup answers from the addressed row")
        await check_unhonoured(ck, tool, args, checks)
    if tool.pk_arg is None:  # a record addressed without a key: nothing else to address
        return
    held = {str(r[entity.pk]) for r in rows}
    unknown = await ck.call(episode, tool.name, {**args, tool.pk_arg: _unknown_key(tool, entity, held)})
    if unknown.success or unknown.code != "not_found":
        raise CheckFailure(f"{tool.name} with an id the state does not hold was not 'not_found': {unknown}")
    checks.append("unknown id not found")


async def _check_each(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    """A batch read answers, for each key, what the one-row read answers; an unknown key is not found."""
    one = ck.rt.manifest.tool(action.each or "")
    entity = _entity(ck.rt, action.target)
    rows = _rows(ck.rt, entity)
    if one is None or one.pk_arg is None or tool.body_whole is None:
        raise CheckFailure(f"{tool.name} reads each key with '{action.each}', which reads no row by key")
    if not rows:
        checks.append("no seed rows to read")
        return
    episode = ck.episode()
    keys = [r[entity.pk] for r in rows[:2]]
    got = await ck.expect_ok(episode, tool, {tool.body_whole: keys})
    single = [await ck.expect_ok(episode, one, {one.pk_arg: key}) for key in keys]
    if got != single:
        raise CheckFailure(f"{tool.name}({keys}) did not answer what {one.name} answers for each key")
    checks.append(f"batch read answers as {one.name} does for each key")
    held = {str(r[entity.pk]) for r in rows}
    unknown = await ck.call(episode, tool.name, {tool.body_whole: [keys[0], _unknown_key(one, entity, held)]})
    if unknown.success or unknown.code != "not_found":
        raise CheckFailure(f"{tool.name} with a key the state does not hold was not 'not_found': {unknown}")
    checks.append("unknown id not found")


async def check_action(ck: Checker, tool: ToolDef, checks: list[str]) -> None:
    """The action's state change happens, is visible to a later read, and its rules hold."""
    if tool.action is None:
        raise CheckFailure("an action-backend tool has no action binding")
    if tool.action.each is not None:
        await _check_each(ck, tool, tool.action, checks)
    elif tool.action.kind == "lookup":
        await _check_lookup(ck, tool, tool.action, checks)
    elif tool.action.kind == "transition":
        await _check_transition(ck, tool, tool.action, checks)
    else:
        await _check_insert(ck, tool, tool.action, checks)


def _seed_args(ck: Checker, tool: ToolDef) -> dict[str, Any]:
    """Arguments for a simulated call: ids of typed entities from the seed, the rest generated."""
    args = ck.args_for(tool, None, full=False)
    for arg, tag in tool.arg_semantics.items():
        entity = ck.rt.manifest.entity(tag[3:]) if tag.startswith("id:") else None
        if entity is None or (arg not in args and tool.arg_locations.get(arg) != "path"):
            continue
        rows = _rows(ck.rt, entity)
        schema = (tool.input_schema.get("properties") or {}).get(arg)
        if rows and (not isinstance(schema, dict) or SchemaValidator(schema).is_valid(rows[0][entity.pk])):
            args[arg] = rows[0][entity.pk]
    return args


async def _known_key(ck: Checker, tool: ToolDef, episode: str) -> Any:
    """An id of the tool's collection that an argument-free list shows, or a create produces."""
    address = address_of(tool)
    assert address is not None
    for other in ck.rt.manifest.tools:
        there = address_of(other) if ck.rt.tools[other.name].backend == "simulated" else None
        if there is None or there.collection != address.collection:
            continue
        if there.role == "list" and not other.input_schema.get("required"):
            out = await ck.call(episode, other.name, {})
            for item in object_items(out.data) if out.success else ():
                key = id_of(item, address.key_arg)
                if key is not None:
                    return key
    return None


async def check_simulated(ck: Checker, tool: ToolDef, checks: list[str]) -> None:
    """A simulated answer validates, an unknown id is not found, a created id reads back."""
    address = address_of(tool)
    episode = ck.episode()
    args = _seed_args(ck, tool)
    if (
        address is not None
        and address.key_arg
        and address.key_arg in (tool.input_schema.get("properties") or {})
    ):
        typed = tool.arg_semantics.get(address.key_arg, "").removeprefix("id:")
        if ck.rt.manifest.entity(typed) is None:
            unknown = await ck.call(episode, tool.name, {**args, address.key_arg: "no-such-id-0"})
            if unknown.success or unknown.code != "not_found":
                raise CheckFailure(f"{tool.name} with an id nobody showed or created was not 'not_found'")
            checks.append("unknown id not found")
            key = await _known_key(ck, tool, episode)
            if key is None:
                return
            args[address.key_arg] = key
    data = await ck.expect_ok(episode, tool, args)
    checks.append("simulated response valid")
    if address is None or address.role != "create":
        return
    found = main_object(data, None)
    key = id_of(found, None) if found is not None else None
    for other in ck.rt.manifest.tools:
        there = address_of(other) if ck.rt.tools[other.name].backend == "simulated" else None
        if key is None or there is None or there.collection != address.collection or there.role != "read":
            continue
        if there.key_arg is None:
            continue
        got = await ck.call(episode, other.name, {**_seed_args(ck, other), there.key_arg: key})
        if not got.success:
            raise CheckFailure(f"the id {key!r} {tool.name} created does not read back through {other.name}")
        checks.append("simulated create -> read")
        return
