"""The seed database is the same, page for page, however its rows are grouped into statements.

``StateStore`` inserts the seed as one ``executemany`` per run of rows that carry the same columns;
the image must equal what one INSERT per row in file order makes (the determinism check and every
fork compare images and hashes), and a row that breaks the key fails the build as it did.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from compoworld.manifest import ColumnDef, EntityDef
from compoworld.runtime.state import StateStore
from compoworld.runtime.tables import ACTION_LOG_DDL, SEQ_DDL, EntityTable


def _table() -> EntityTable:
    columns = [
        ColumnDef(name="id", type="string", primary_key=True),
        ColumnDef(name="name", type="string"),
        ColumnDef(name="active", type="boolean"),
        ColumnDef(name="tags", type="json"),
        ColumnDef(name="extra", type="string"),
    ]
    return EntityTable(
        EntityDef(name="item", class_name="Item", table="item", pk="id", pk_type="string", columns=columns)
    )


_ROWS: list[dict[str, Any]] = [
    {"id": "b", "name": "Bee", "active": True, "tags": ["x"]},
    {"id": "a", "name": "Ay", "active": False, "tags": {"k": 1}},
    {"id": "c", "name": "Cee"},
    {"id": "d", "name": None, "active": None, "tags": None, "extra": {"nested": [1, 2]}},
    {"id": "e", "name": "Ee", "active": 1, "tags": []},
]


def _row_by_row(table: EntityTable, rows: list[dict[str, Any]]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("BEGIN")
    for statement in (table.ddl(), SEQ_DDL, ACTION_LOG_DDL):
        conn.execute(statement)
    for row in rows:
        cols = [c for c in table.column_names if c in row]
        values = [table.encode_value(c, row[c]) for c in cols]
        conn.execute(f"INSERT INTO item ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", values)
    conn.execute("INSERT INTO _cw_seq (tbl, next) VALUES (?, ?)", ("item", len(rows) + 1))
    conn.execute("COMMIT")
    return conn


def test_the_seed_image_is_what_one_insert_per_row_makes() -> None:
    table = _table()
    store = StateStore([table], {"item": _ROWS})
    assert store.seed.serialize() == _row_by_row(table, _ROWS).serialize()
    assert store.select(store.seed_view(), "item", {"id": "d"})[0]["extra"] == '{"nested":[1,2]}'


def test_a_row_that_repeats_a_key_fails_the_seed_as_it_did() -> None:
    rows = [*_ROWS, {"id": "a", "name": "again"}]
    with pytest.raises(sqlite3.IntegrityError, match=r"UNIQUE constraint failed: item\.id"):
        StateStore([_table()], {"item": rows})
