"""What a list call found (``Page``) and the value of each paging field of the spec's list body:
totals, page size and number, the next and previous page's cursor, link or number, ``has_more``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compoworld.runtime.fit import compile_fit
from compoworld.runtime.schema_read import default_value, match_key, schema_types

__all__ = ["MISSING", "Page", "Slot", "Url", "paging_slot"]


class Page:
    """What a list call found: the page, and the arguments that fetch its neighbours."""

    __slots__ = ("args", "limit", "next_args", "offset", "prev_args", "total")

    def __init__(
        self,
        total: int,
        limit: int,
        offset: int,
        *,
        next_args: dict[str, Any] | None = None,
        prev_args: dict[str, Any] | None = None,
        args: dict[str, Any] | None = None,
    ) -> None:
        self.total = total
        self.limit = limit
        self.offset = offset
        self.next_args = next_args
        self.prev_args = prev_args
        self.args = args or {}


Slot = Callable[[Any, "Page | None", int], Any]
Url = Callable[["Page", dict[str, Any]], str]
MISSING: Any = object()


def _is_link(key: str, schema: dict[str, Any]) -> bool:
    k = match_key(key)
    return str(schema.get("format") or "") in ("uri", "url", "uri-reference") or any(
        w in k for w in ("url", "link", "href", "uri")
    )


def _page_value(role: str, key: str, schema: dict[str, Any], page: Page | None, count: int, url: Url) -> Any:
    """The value of one paging field (``MISSING``: leave it out; None: there is no such page)."""
    if page is None:
        return MISSING
    if role == "total":
        return page.total
    if role == "count":
        return count
    if role == "limit":
        return page.limit
    if role == "offset":
        return page.offset
    if role == "page":
        return page.offset // max(page.limit, 1) + 1
    if role == "pages":
        return -(-page.total // max(page.limit, 1))
    if role == "has_more":
        return page.next_args is not None or page.offset + count < page.total
    wanted = page.next_args if role == "next" else page.prev_args
    if wanted is None:
        return None
    types, _ = schema_types(schema)
    if types and types <= {"integer", "number"}:
        numbers = [v for v in wanted.values() if isinstance(v, int) and not isinstance(v, bool)]
        return numbers[0] if len(numbers) == 1 else None
    if _is_link(key, schema) or len(wanted) != 1:
        return url(page, {**page.args, **wanted})
    (value,) = wanted.values()
    return str(value)


def paging_slot(role: str, key: str, schema: dict[str, Any], required: bool, url: Url) -> Slot:
    _, nullable = schema_types(schema)
    fit = compile_fit(schema, key)
    fallback = default_value(schema, key) if required else MISSING

    def slot(payload: Any, page: Page | None, count: int) -> Any:
        value = _page_value(role, key, schema, page, count, url)
        if value is MISSING:
            return fallback
        if value is None:
            return None if nullable else fallback
        return fit(value) if fit is not None else value

    return slot
