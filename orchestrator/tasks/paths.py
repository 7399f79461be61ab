"""Concrete paths into tool results, and where a walk's values came from.

A concrete path names one value in one result: ``email``, ``items.0.email``. A binding's
provenance is ``step:<i>:<path>``; an answer's or a condition's source is that, or an
aggregate over a list step (``count:<i>``, ``sum:<i>:<field>``, filtered with ``@<path>=<value>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compoworld.manifest import ResponseShape, ToolDef

__all__ = [
    "MISSING",
    "get_path",
    "list_items",
    "page_size",
    "parse_step_ref",
    "resolve_source",
    "set_arg",
    "step_ref",
]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: Returned when a path or source does not resolve.
MISSING: Any = _Missing()


def page_size(tool: ToolDef, wanted: int) -> int | str | None:
    """The page-size argument a list call sends for ``wanted`` rows, typed as the tool declares it.

    A spec may declare the size as a string (``display_size: "500"``) or cap it (``maximum``);
    None when the tool has no page-size argument.
    """
    if not tool.limit_arg:
        return None
    schema = (tool.input_schema.get("properties") or {}).get(tool.limit_arg) or {}
    cap = schema.get("maximum")
    size = min(wanted, int(cap)) if isinstance(cap, (int, float)) and not isinstance(cap, bool) else wanted
    return str(size) if schema.get("type") == "string" else size


def get_path(data: Any, path: str) -> Any:
    """The value at a dotted path (list indices as digits), or MISSING."""
    if not path:
        return data
    current = data
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return MISSING
    return current


def _row_lists(data: Any, prefix: str, depth: int) -> list[tuple[str, list[Any]]]:
    """Lists of objects reachable through object keys (never through a list), with their paths."""
    if not isinstance(data, dict) or depth > 3:
        return []
    found: list[tuple[str, list[Any]]] = []
    for key, value in data.items():
        if (isinstance(value, list) and value and all(isinstance(r, dict) for r in value)) or (
            isinstance(value, list) and not value
        ):
            found.append((f"{prefix}{key}.", value))
        elif isinstance(value, dict):
            found += _row_lists(value, f"{prefix}{key}.", depth + 1)
    return found


def _rows(data: Any, shape: ResponseShape | None) -> tuple[str, list[Any]] | None:
    """(path prefix, rows) of a list result: where its response shape says, else the one list of rows."""
    if shape is not None:
        if not shape.many:
            return None
        node: Any = data
        prefix = ""
        for key in shape.rows_at:
            if not isinstance(node, dict) or key not in node:
                return None
            node, prefix = node[key], f"{prefix}{key}."
        return (prefix, node) if isinstance(node, list) else None
    if isinstance(data, list):
        return "", data
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        return "items.", data["items"]
    lists = _row_lists(data, "", 0)
    return lists[0] if len(lists) == 1 else None


def list_items(data: Any, shape: ResponseShape | None = None) -> list[Any] | None:
    """The rows of a list result, or None for a non-list result.

    ``shape`` (the tool's ``ResponseShape``) says where they sit; without it, a bare list, an
    ``items`` list or the only list of objects in the body (``{"data": [...], "meta": {...}}``).
    """
    found = _rows(data, shape)
    return found[1] if found is not None else None


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def step_ref(index: int, path: str) -> str:
    return f"step:{index}:{path}"


def parse_step_ref(ref: str) -> tuple[int, str] | None:
    """``step:<i>:<path>`` -> (i, path); None for 'seed', 'literal' or anything else."""
    kind, _, rest = ref.partition(":")
    index, sep, path = rest.partition(":")
    if kind != "step" or not sep or not index.isdigit():
        return None
    return int(index), path


def _where(items: list[Any], spec: str) -> list[Any]:
    """Rows of a list whose value at a path equals a value (strings up to case): ``path=value``."""
    path, _, wanted = spec.partition("=")
    out = []
    for row in items:
        value = get_path(row, path)
        if isinstance(value, str) and value.casefold() == wanted.casefold():
            out.append(row)
    return out


def resolve_source(source: str, results: Sequence[Any]) -> Any:
    """The value an answer or condition source names in a list of step results (MISSING if it does not).

    ``step:<i>:<path>`` is one value; ``count:<i>``, ``sum:<i>:<field>``, ``max:<i>:<field>`` and
    ``min:<i>:<field>`` aggregate the rows of a list result, optionally only those matching
    ``@<path>=<value>`` (``sum:3:amount@email=ana@example.com``).
    """
    kind, _, rest = source.partition(":")
    index_s, _, field = rest.partition(":")
    index_s, _, where_a = index_s.partition("@")
    field, _, where_b = field.partition("@")
    where = where_a or where_b
    if not index_s.isdigit() or int(index_s) >= len(results):
        return MISSING
    data = results[int(index_s)]
    if data is None or data is MISSING:
        return MISSING
    if kind == "step":
        value = get_path(data, field)
        return value if _is_scalar(value) else MISSING
    items = list_items(data)
    if items is None:
        return MISSING
    if where:
        items = _where(items, where)
    if kind == "count":
        return len(items)
    if kind in ("sum", "max", "min"):
        values = [get_path(r, field) for r in items if isinstance(r, dict)]
        numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not values or len(numbers) != len(values):
            return MISSING
        total = sum(numbers) if kind == "sum" else max(numbers) if kind == "max" else min(numbers)
        return round(total, 2)
    return MISSING


def set_arg(args: dict[str, Any], name: str, value: Any) -> None:
    """Set an argument; ``body.key`` sets a field of a nested body object, ``emails.0.email`` a field of
    an item of a list argument the call already holds."""
    head, _, rest = name.partition(".")
    if not rest:
        args[name] = value
        return
    inner = args.setdefault(head, {})
    if isinstance(inner, list):
        index, _, tail = rest.partition(".")
        if index.isdigit() and int(index) < len(inner):
            item = inner[int(index)]
            if not tail:
                inner[int(index)] = value
            elif isinstance(item, dict):
                set_arg(item, tail, value)
    elif isinstance(inner, dict):
        inner[rest] = value
