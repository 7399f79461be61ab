"""SQL for one entity table, compiled once from the manifest: DDL, row encoding and decoding.

The hot path talks to ``sqlite3`` directly with these precompiled statements; SQLModel
defines the typed schema (``models.py``) and the DDL is taken from it when present.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from compoworld.manifest import ColumnDef, EntityDef

__all__ = ["ACTION_LOG_DDL", "SEQ_DDL", "EntityTable", "quote"]

SEQ_DDL = "CREATE TABLE _cw_seq (tbl TEXT PRIMARY KEY, next INTEGER NOT NULL)"
ACTION_LOG_DDL = (
    "CREATE TABLE action_log (seq INTEGER PRIMARY KEY, tool TEXT NOT NULL, operation TEXT NOT NULL, "
    "arguments TEXT NOT NULL, response TEXT NOT NULL, time TEXT NOT NULL)"
)
_SQL_TYPES = {"integer": "INTEGER", "number": "REAL", "string": "TEXT", "boolean": "BOOLEAN", "json": "JSON"}


_TIMESTAMP_WORDS = ("created", "updated", "modified")


def _is_timestamp(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in _TIMESTAMP_WORDS)


def _is_update_stamp(name: str) -> bool:
    low = name.lower()
    return "updat" in low or "modif" in low


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _encode_plain(value: Any) -> Any:
    return _dumps(value) if isinstance(value, (dict, list)) else value


def _encode_bool(value: Any) -> Any:
    return None if value is None else 1 if value else 0


def _encode_json(value: Any) -> Any:
    return None if value is None else _dumps(value)


#: ``EntityTable.encode_value`` by column kind: any other, boolean, JSON.
_ENCODERS: tuple[Callable[[Any], Any], ...] = (_encode_plain, _encode_bool, _encode_json)


class EntityTable:
    """Precompiled statements and codecs for one entity."""

    def __init__(self, entity: EntityDef) -> None:
        self.entity = entity
        self.name = entity.table
        self.pk = entity.pk
        self.columns: list[ColumnDef] = list(entity.columns)
        self.column_names: list[str] = [c.name for c in self.columns]
        self.column_set = frozenset(self.column_names)
        self.by_name = {c.name: c for c in self.columns}
        self._json_cols = frozenset(c.name for c in self.columns if c.type == "json")
        self._bool_cols = frozenset(c.name for c in self.columns if c.type == "boolean")
        qt = quote(self.name)
        cols = ", ".join(quote(c) for c in self.column_names)
        self.q_table = qt
        self.sql_get = f"SELECT {cols} FROM {qt} WHERE {quote(self.pk)} = ?"
        self.sql_exists = f"SELECT 1 FROM {qt} WHERE {quote(self.pk)} = ?"
        self.sql_all = f"SELECT {cols} FROM {qt} ORDER BY {quote(self.pk)}"
        self.sql_select = f"SELECT {cols} FROM {qt}"
        self.sql_count = f"SELECT COUNT(*) FROM {qt}"
        self.sql_delete = f"DELETE FROM {qt} WHERE {quote(self.pk)} = ?"
        self.text_columns = [c.name for c in self.columns if c.type == "string"]
        self.refs: dict[str, str] = {c.name: c.ref for c in self.columns if c.ref is not None}
        stamps = [  # a timestamp is text: ``lastUpdatedBy: {id, name}`` names who, not when
            c
            for c in self.columns
            if c.read_only and not c.primary_key and c.type == "string" and _is_timestamp(c.name)
        ]
        self.stamp_on_create = [(c.name, c.format == "date") for c in stamps]
        self.stamp_on_update = [(c.name, c.format == "date") for c in stamps if _is_update_stamp(c.name)]
        self._inserts: dict[tuple[str, ...], str] = {}
        self._decode_plan = [
            (i, c.name, 1 if c.name in self._json_cols else 2 if c.name in self._bool_cols else 0)
            for i, c in enumerate(self.columns)
        ]

    def ddl(self) -> str:
        parts = []
        for c in self.columns:
            spec = f"{quote(c.name)} {_SQL_TYPES[c.type]}"
            if c.primary_key:
                spec += " NOT NULL PRIMARY KEY"
            parts.append(spec)
        return f"CREATE TABLE {self.q_table} ({', '.join(parts)})"

    def decode(self, row: tuple[Any, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, name, kind in self._decode_plan:
            value = row[i]
            if value is not None:
                if kind == 1:
                    # a JSON column (declared JSON: numeric affinity) hands a bare number back as one
                    value = json.loads(value) if isinstance(value, str | bytes) else value
                elif kind == 2:
                    value = bool(value)
            out[name] = value
        return out

    def encoder(self, column: str) -> Callable[[Any], Any]:
        """How a value of ``column`` is stored: JSON text, 0/1, or as it is (a dict or list as JSON)."""
        return _ENCODERS[2 if column in self._json_cols else 1 if column in self._bool_cols else 0]

    def encode_value(self, column: str, value: Any) -> Any:
        return self.encoder(column)(value)

    def encoders(self, columns: Sequence[str]) -> list[tuple[str, Callable[[Any], Any]]]:
        """(column, ``encode_value`` of that column) for each of ``columns``: a row's values
        encoded without looking each column's kind up again."""
        return [(c, self.encoder(c)) for c in columns]

    def insert_sql(self, columns: Sequence[str]) -> str:
        key = tuple(columns)
        found = self._inserts.get(key)
        if found is None:
            cols = ", ".join(quote(c) for c in key)
            marks = ", ".join("?" for _ in key)
            found = f"INSERT INTO {self.q_table} ({cols}) VALUES ({marks})"
            if len(self._inserts) < 64:  # the column sets seed rows and creates use: a handful
                self._inserts[key] = found
        return found

    def update_sql(self, columns: list[str]) -> str:
        sets = ", ".join(f"{quote(c)} = ?" for c in columns)
        return f"UPDATE {self.q_table} SET {sets} WHERE {quote(self.pk)} = ?"
