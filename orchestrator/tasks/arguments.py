"""Arguments for a walk step: the bound upstream value, then every other required argument.

Required arguments come, in order of preference, from values earlier steps produced (the
most recent first), from the seed state (keys and filters must name real rows), or, for
what a write sets, from plausible literals that the instruction will state. An update
always changes at least one field, so doing nothing cannot pass its check.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from compoworld.manifest import EntityDef, ServiceManifest, ToolDef
from compoworld.runtime.service import ServiceRuntime
from orchestrator.graph.model import InputPort, ToolNode
from orchestrator.graph.ports import ACCEPTS
from orchestrator.tasks.execute import Session
from orchestrator.tasks.literals import literal_value
from orchestrator.tasks.paths import MISSING, get_arg, set_arg, step_ref
from orchestrator.tasks.seeds import SeedIndex, value_key
from orchestrator.tasks.walkstate import Walk, coerce_key

__all__ = ["ArgumentFiller", "arguments_read"]


def arguments_read(tool: ToolDef, manifest: ServiceManifest, backend: str) -> set[str]:
    """Arguments a call's outcome depends on (nested body fields as ``body.key``).

    An implemented tool reads its key, its query, its body and the columns it sets or filters
    on, except read-only ones (the service sets those itself); anything else, such as a
    parent id in the path or a header, it ignores. A value passed there flows nowhere, and
    perturbing it changes nothing a rubric could catch. A simulated tool logs every argument.
    """
    props = tool.input_schema.get("properties") or {}
    names = set(props)
    if backend != "implemented":
        return names - {tool.limit_arg, tool.offset_arg}
    entity = manifest.entity(tool.entity or "")
    read: set[str] = {a for a in (tool.pk_arg, tool.search_arg) if a}
    for arg, column_name in tool.arg_columns.items():
        column = entity.column(column_name) if entity else None
        if column is not None and (not column.read_only or tool.operation in ("list", "search")):
            read.add(arg)
    body = props.get(tool.body_arg) if tool.body_arg else None
    if isinstance(body, dict) and entity is not None:
        for key in body.get("properties") or {}:
            column = entity.column(key) or next((c for c in entity.columns if c.source_name == key), None)
            if column is not None and not column.read_only:
                read.add(f"{tool.body_arg}.{key}")
    return {r for r in read if r in names or "." in r}


class ArgumentFiller:
    """Completes a step's arguments from the walk so far, the seed state and literals."""

    def __init__(self, runtimes: Mapping[str, ServiceRuntime], seeds: SeedIndex, today: str) -> None:
        self.runtimes = runtimes
        self.seeds = seeds
        self.today = today

    def tool(self, node: ToolNode) -> ToolDef:
        tool = self.runtimes[node.service].manifest.tool(node.tool)
        assert tool is not None
        return tool

    def entity(self, node: ToolNode) -> EntityDef | None:
        return self.seeds.entity(node.service, node.entity)

    @staticmethod
    def usable(walk: Walk, service: str, semantic: str, value: Any, port: InputPort) -> bool:
        """A key created during the walk may name its row, never be stored: its value depends on how
        many creates came before, so a check on it would punish an agent for a harmless failed attempt."""
        if port.role == "pk" or not semantic.startswith("id:") or not walk.generated:
            return True
        return (service, semantic, value_key(value)) not in walk.generated

    def _from_pool(self, walk: Walk, node: ToolNode, port: InputPort) -> tuple[Any, str] | None:
        wanted = {port.semantic} | ACCEPTS.get(port.semantic, frozenset())
        for index in range(len(walk.nodes) - 1, -1, -1):
            source = walk.nodes[index]
            semantics = {o.path: o.semantic for o in source.outputs}
            same_entity = (source.service, source.entity) == (node.service, node.entity)
            if node.operation in ("create", "update") and same_entity and not port.semantic.startswith("id:"):
                continue  # never copy a row's own values into a write on the same entity
            for spath, (path, value) in sorted(walk.pools[index].items()):
                sem = semantics.get(spath)
                if sem not in wanted or (sem.startswith("id:") and source.service != node.service):
                    continue  # keys are service-local
                if self.usable(walk, source.service, sem, value, port):
                    return value, step_ref(index, path)
        return None

    def _from_seed(self, rng: random.Random, node: ToolNode, port: InputPort) -> tuple[Any, str] | None:
        entity = self.entity(node)
        column = port.column
        if (port.semantic.startswith("id:") and port.role != "filter") or column is None:
            # a key or reference: a real key of the named entity, in the same service
            entity = self.seeds.entity(node.service, port.semantic.removeprefix("id:"))
            column = entity.pk if entity is not None else None
        if entity is None or column is None:
            return None
        rows = self.seeds.rows(node.service, entity.table)
        values = [r.get(column) for r in rows if r.get(column) is not None]
        return (rng.choice(values), "seed") if values else None

    def assemble(
        self,
        rng: random.Random,
        walk: Walk,
        node: ToolNode,
        arg: str,
        value: Any,
        provenance: str,
        session: Session,
    ) -> tuple[dict[str, Any], dict[str, str]] | None:
        """Arguments for ``node`` with ``arg`` bound to an upstream value; None if they cannot be completed."""
        args: dict[str, Any] = {}
        set_arg(args, arg, value)
        return self.complete(rng, walk, node, args, {arg: provenance}, session)

    def complete(
        self,
        rng: random.Random,
        walk: Walk,
        node: ToolNode,
        args: dict[str, Any],
        bindings: dict[str, str],
        session: Session,
    ) -> tuple[dict[str, Any], dict[str, str]] | None:
        """Fill every required argument ``args`` lacks; None if a key or filter has no real value."""
        tool = self.tool(node)
        entity = self.entity(node)
        ports = {p.name: p for p in node.inputs}
        for port in node.inputs:
            if port.name in bindings or not port.required:
                continue
            keyed = port.role in ("pk", "filter") or port.semantic.startswith("id:")
            found = self._from_pool(walk, node, port)
            if found is None and keyed:
                found = self._from_seed(rng, node, port)
            if found is None:
                if keyed:
                    return None
                found = (self._literal(rng, tool, entity, port.name, port.semantic), "literal")
            set_arg(args, port.name, found[0])
            bindings[port.name] = found[1]
        for name in self._required(tool, entity):
            if get_arg(args, name) is MISSING:
                known = ports.get(name)
                if known is not None and known.semantic.startswith("id:"):
                    return None
                set_arg(args, name, self._literal(rng, tool, entity, name, known.semantic if known else None))
                bindings[name] = "literal"
        if (
            tool.operation == "update"
            and entity is not None
            and not self._add_change(rng, node, entity, args, bindings, session)
        ):
            return None
        return args, bindings

    def _required(self, tool: ToolDef, entity: EntityDef | None) -> list[str]:
        names = [r for r in tool.input_schema.get("required") or [] if isinstance(r, str)]
        if tool.body_arg and tool.body_arg in names:
            props = tool.input_schema.get("properties") or {}
            body = props.get(tool.body_arg) or {}
            names.remove(tool.body_arg)
            names += [f"{tool.body_arg}.{r}" for r in body.get("required") or [] if isinstance(r, str)]
        if tool.operation == "create" and entity is not None:
            by_column = {c: a for a, c in tool.arg_columns.items()}
            for column in entity.columns:
                if not column.nullable and not column.primary_key and not column.read_only:
                    arg = by_column.get(column.name) or (
                        f"{tool.body_arg}.{column.name}" if tool.body_arg else None
                    )
                    if arg and arg not in names:
                        names.append(arg)
        return names

    def _arg_schema(self, tool: ToolDef, name: str) -> dict[str, Any]:
        props = tool.input_schema.get("properties") or {}
        head, _, rest = name.partition(".")
        schema = props.get(head) or {}
        if rest:
            schema = (schema.get("properties") or {}).get(rest) or {}
        return schema if isinstance(schema, dict) else {}

    def _literal(
        self,
        rng: random.Random,
        tool: ToolDef,
        entity: EntityDef | None,
        name: str,
        semantic: str | None,
        avoid: Any = None,
    ) -> Any:
        column_name = tool.arg_columns.get(name) or (name.split(".", 1)[1] if "." in name else None)
        column = entity.column(column_name) if entity and column_name else None
        sem = semantic or (column.semantic if column else None)
        enum = column.enum if column else None
        return literal_value(rng, name, self._arg_schema(tool, name), sem, self.today, enum, avoid)

    def _add_change(
        self,
        rng: random.Random,
        node: ToolNode,
        entity: EntityDef,
        args: dict[str, Any],
        bindings: dict[str, str],
        session: Session,
    ) -> bool:
        """Make sure an update sets at least one field to a new value (a literal one, stated in the task)."""
        tool = self.tool(node)
        key = args.get(tool.pk_arg or "")
        rows = session.select(node.service, entity.table, {entity.pk: coerce_key(entity, key)})
        if not rows:
            return False
        current = rows[0]
        settable = sorted(
            a
            for a, c in tool.arg_columns.items()
            if a not in bindings
            and a != tool.pk_arg
            and (col := entity.column(c)) is not None
            and not col.read_only
            and not col.primary_key
            and col.ref is None
            and col.type != "json"
        )
        bound_change = any(
            tool.arg_columns.get(a) and current.get(tool.arg_columns[a]) != get_arg(args, a)
            for a in bindings
            if a != tool.pk_arg
        )
        if not settable:
            return bound_change
        if bound_change and rng.random() < 0.5:
            return True
        arg = rng.choice(settable)
        column = tool.arg_columns[arg]
        set_arg(args, arg, self._literal(rng, tool, entity, arg, None, avoid=current.get(column)))
        bindings[arg] = "literal"
        return True
