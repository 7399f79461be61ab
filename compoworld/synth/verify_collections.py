"""Conformance checks of actions over a whole collection (``compoworld.synth.collection_actions``).

A count must answer the number of typed rows that hold the values its arguments name: all of
them with no filter, the rows of one seed row's value with it, zero for a value no row holds; and
it changes nothing. A clear of a whole table must leave it empty, as a later list of it shows.
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ActionDef, EntityDef, ToolDef
from compoworld.synth.verify_lists import as_arg
from compoworld.synth.verify_world import Checker, CheckFailure

__all__ = ["check_clear_all", "check_collection", "check_count"]


def _holds(row: dict[str, Any], column: str, value: Any) -> bool:
    held = row.get(column)
    if isinstance(value, bool) or isinstance(held, bool):
        return held == value
    return held is not None and str(held) == str(value)


def _number(action: ActionDef, data: Any) -> Any:
    return data.get(action.answer) if action.answer is not None and isinstance(data, dict) else data


async def _expect(
    ck: Checker, episode: str, tool: ToolDef, action: ActionDef, args: dict[str, Any], wanted: int
) -> None:
    got = _number(action, await ck.expect_ok(episode, tool, args))
    if got != wanted or isinstance(got, bool):
        raise CheckFailure(f"{tool.name}({args}) answered {got!r}; the typed state holds {wanted} such rows")


async def check_count(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    """The count of every row, of the rows holding a seed row's value, and of a value none holds."""
    entity: EntityDef | None = ck.rt.manifest.entity(action.target)
    if entity is None:
        raise CheckFailure(f"{tool.name} counts entity '{action.target}', which the service does not have")
    rows = ck.rt.select(None, entity.table)
    if not rows:
        checks.append("no seed rows to count")
        return
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    named = {**tool.arg_columns, **action.scope}
    first = rows[0]
    base = {a: as_arg(props[a], first[c]) for a, c in named.items() if a in required and a in props}
    base = {**ck.args_for(tool, None, full=False), **base}

    def held(args: dict[str, Any]) -> int:
        return sum(1 for r in rows if all(_holds(r, named[a], v) for a, v in args.items() if a in named))

    episode = ck.episode()
    await _expect(ck, episode, tool, action, base, held(base))
    optional = sorted(a for a in named if a not in base and a in props and first.get(named[a]) is not None)
    if optional:
        arg = optional[0]
        given = {**base, arg: as_arg(props[arg], first[named[arg]])}
        await _expect(ck, episode, tool, action, given, held(given))
    checks.append("count answers the typed rows holding its arguments")
    free = sorted(a for a in named if a in props and (props[a].get("type") in ("string", None)))
    if free and "enum" not in props[free[0]]:
        await _expect(ck, episode, tool, action, {**base, free[0]: "no-such-value"}, 0)
        checks.append("a value no row holds counts 0")
    if ck.rt.state_hash(episode) != ck.seed_hash():
        raise CheckFailure(f"{tool.name} (a read) changed the typed state")


async def check_clear_all(ck: Checker, tool: ToolDef, action: ActionDef, checks: list[str]) -> None:
    """A clear of the whole table leaves no row of it, as a later argument-free list shows."""
    entity = ck.rt.manifest.entity(action.target)
    if entity is None:
        raise CheckFailure(f"{tool.name} clears entity '{action.target}', which the service does not have")
    if not ck.rt.select(None, entity.table):
        checks.append("no seed rows to clear")
        return
    episode = ck.episode()
    await ck.expect_ok(episode, tool, {})
    if ck.rt.select(episode, entity.table):
        raise CheckFailure(f"{tool.name} left {entity.name} rows in the typed state")
    lister = next(
        (
            t
            for t in ck.rt.manifest.tools
            if t.entity == entity.name
            and t.operation == "list"
            and ck.rt.tools[t.name].backend == "implemented"
            and not t.input_schema.get("required")
        ),
        None,
    )
    if lister is not None:
        listed = lister.rows_in(await ck.expect_ok(episode, lister, {})) or []
        if listed:
            raise CheckFailure(
                f"{lister.name} still lists {len(listed)} {entity.name} rows after {tool.name}"
            )
    checks.append("clear visible to a later read")


async def check_collection(ck: Checker, tool: ToolDef, checks: list[str]) -> bool:
    """Check ``tool`` here if it acts on a whole collection; whether it did."""
    action = tool.action
    if action is not None and action.kind == "count":
        await check_count(ck, tool, action, checks)
        return True
    if action is not None and action.kind == "clear" and action.parent_column is None:
        await check_clear_all(ck, tool, action, checks)
        return True
    return False
