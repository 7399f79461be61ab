"""Making one seed row agree with itself and with the rows it references.

- An embedded copy of a referenced row (``customer: {id, display_name}`` beside
  ``customer_id``) gets the referenced row's values, its ``id`` the reference itself.
- A denormalised field beside a reference (``contact_name`` beside ``contact_id``) is the
  referenced row's name; never the row's own key, which must stay unique.
- Line items and totals: each item's total is quantity x unit price; the row's subtotal is
  the sum of its items, the tax a rate of it, the total their sum.
"""

from __future__ import annotations

from typing import Any

from compoworld.manifest import ColumnDef, EntityDef
from compoworld.specs.words import split_words
from compoworld.synth.seed_values import RowContext

__all__ = ["cohere"]

_REF_SUFFIXES = ("_id", "_ids", "_ref", "_key", "_uuid", "id")
_LINE_WORDS = frozenset({"line", "lines", "items", "item", "entries", "products", "charges"})
_QUANTITY = ("quantity", "qty", "units", "count")
_UNIT_PRICE = ("unit_price", "unitprice", "price", "unit_amount", "rate", "unit_cost")
_LINE_TOTAL = ("total_amount", "total", "amount", "line_total", "subtotal", "net_amount", "value")
_SUBTOTAL = ("sub_total", "subtotal", "net_amount", "net_total", "total_ex_tax", "total_before_tax")
_TAX = ("total_tax", "tax_amount", "tax", "tax_total", "vat_amount")
_TOTAL = ("total", "total_amount", "grand_total", "amount", "amount_due", "total_incl_tax", "gross_amount")


def _stem(name: str) -> str:
    low = name.lower()
    for suffix in _REF_SUFFIXES:
        if low.endswith(suffix) and len(low) > len(suffix):
            return low[: -len(suffix)].rstrip("_")
    return low


def _label(entity: EntityDef, row: dict[str, Any]) -> Any:
    if entity.label_column and row.get(entity.label_column) is not None:
        return row[entity.label_column]
    first = next(
        (row[c.name] for c in entity.columns if c.semantic == "first_name" and row.get(c.name)), None
    )
    last = next((row[c.name] for c in entity.columns if c.semantic == "last_name" and row.get(c.name)), None)
    return " ".join(p for p in (first, last) if p) or None


def _copy_into(embedded: dict[str, Any], key: Any, target: EntityDef, row: dict[str, Any]) -> None:
    by_name = {c.name.lower(): c for c in target.columns} | {
        (c.source_name or "").lower(): c for c in target.columns if c.source_name
    }
    copies: dict[str, Any] = {}
    for field in embedded:
        low = field.lower()
        if low in ("id", f"{target.name}_id") or low == target.pk.lower():
            copies[field] = key if not isinstance(embedded[field], str) or isinstance(key, str) else str(key)
            continue
        column = by_name.get(low)
        value = row.get(column.name) if column is not None else None
        if value is None and low in ("name", "display_name", "full_name", "title", "label"):
            value = _label(target, row)
        if value is not None and type(value) is type(embedded[field]) and not isinstance(value, (dict, list)):
            copies[field] = value
    dated = [f for f in embedded if _is_stamp(embedded[f])]
    if any(f not in copies for f in dated):  # half copied, half generated dates would break their order
        copies = {f: v for f, v in copies.items() if f not in dated}
    embedded.update(copies)


def _is_stamp(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) >= 10
        and value[4:5] == "-"
        and value[7:8] == "-"
        and value[:4].isdigit()
    )


def _references(entity: EntityDef) -> dict[str, ColumnDef]:
    """Reference columns by the stem they share with embedded copies (``customer_id`` -> ``customer``)."""
    return {_stem(c.name): c for c in entity.columns if c.ref is not None and not c.primary_key}


def _embedded_copies(
    entity: EntityDef,
    row: dict[str, Any],
    entities: dict[str, EntityDef],
    done: dict[str, dict[Any, dict[str, Any]]],
) -> None:
    refs = _references(entity)
    for column in entity.columns:
        value = row.get(column.name)
        ref = refs.get(column.name.lower()) or next((c for c in refs.values() if c.ref == column.name), None)
        if ref is None or ref.name == column.name or row.get(ref.name) is None:
            continue
        target = entities.get(ref.ref or "")
        target_row = done.get(ref.ref or "", {}).get(_native(target, row[ref.name]))
        if target is None or target_row is None:
            continue
        if isinstance(value, dict):
            _copy_into(value, row[ref.name], target, target_row)
    for column in entity.columns:  # contact_name beside contact_id
        words = column.name.lower().rsplit("_", 1)
        if (
            column.type != "string"
            or column.primary_key  # a key is the row's own (``publication_slug`` keying an ``id_for``)
            or len(words) != 2
            or words[0] not in refs
            or row.get(column.name) is None
        ):
            continue
        ref = refs[words[0]]
        target = entities.get(ref.ref or "")
        target_row = done.get(ref.ref or "", {}).get(_native(target, row.get(ref.name)))
        if target is None or target_row is None:
            continue
        source = next((c for c in target.columns if c.name.lower() == words[1]), None)
        copied = target_row.get(source.name) if source is not None else None
        if copied is None and words[1] in ("name", "display_name", "label", "title"):
            copied = _label(target, target_row)
        if isinstance(copied, str):
            row[column.name] = copied


def _native(target: EntityDef | None, key: Any) -> Any:
    if target is not None and target.pk_type == "integer" and isinstance(key, str) and key.isdigit():
        return int(key)
    return key


def _first(obj: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next(
        (n for n in names if isinstance(obj.get(n), (int, float)) and not isinstance(obj.get(n), bool)), None
    )


def _line_items(entity: EntityDef, row: dict[str, Any]) -> list[dict[str, Any]] | None:
    for column in entity.columns:
        value = row.get(column.name)
        if column.type != "json" or not isinstance(value, list) or not value:
            continue
        if set(split_words(column.name)) & _LINE_WORDS and all(
            isinstance(v, dict) and _first(v, _LINE_TOTAL + _UNIT_PRICE) for v in value
        ):
            return value
    return None


def _totals(entity: EntityDef, row: dict[str, Any], ctx: RowContext) -> None:
    items = _line_items(entity, row)
    subtotal: float | None = None
    if items is not None:
        subtotal = 0.0
        for item in items:
            qty_key, price_key = _first(item, _QUANTITY), _first(item, _UNIT_PRICE)
            total_key = next((k for k in _LINE_TOTAL if k in item and k != price_key), None)
            if qty_key and price_key:
                item[qty_key] = (
                    max(1, int(item[qty_key]))
                    if isinstance(item[qty_key], int)
                    else round(abs(item[qty_key]), 2)
                )
                line = round(item[qty_key] * item[price_key], 2)
            else:
                line = float(item.get(total_key or price_key or "", 0) or 0)
            if total_key is not None and isinstance(item.get(total_key), (int, float)):
                item[total_key] = line if isinstance(item[total_key], float) else round(line)
            subtotal += line
        subtotal = round(subtotal, 2)
    sub_key, tax_key, total_key = _first(row, _SUBTOTAL), _first(row, _TAX), _first(row, _TOTAL)
    if subtotal is None:
        if not (sub_key and total_key):
            return
        subtotal = float(row[sub_key])
    tax = round(subtotal * ctx.rng.choice((0.0, 0.07, 0.1, 0.2)), 2) if tax_key else 0.0
    if sub_key:
        row[sub_key] = _like(row[sub_key], subtotal)
    if tax_key:
        row[tax_key] = _like(row[tax_key], tax)
    if total_key and total_key != sub_key:
        row[total_key] = _like(row[total_key], round(subtotal + tax, 2))


def _like(old: Any, new: float) -> Any:
    return round(new) if isinstance(old, int) else new


def cohere(
    entity: EntityDef,
    row: dict[str, Any],
    entities: dict[str, EntityDef],
    done: dict[str, dict[Any, dict[str, Any]]],
    ctx: RowContext,
) -> None:
    """Make ``row`` agree with the rows it references and its own totals (in place)."""
    _embedded_copies(entity, row, entities, done)
    _totals(entity, row, ctx)
