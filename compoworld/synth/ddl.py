"""The DDL of a service's tables from its entities, as importing its ``models.py`` compiles it.

``models.py`` (one SQLModel class per entity) is the source of the tables' DDL, and the build
writes what it compiles to as ``schema.sql``. Importing it builds a pydantic model and an
SQLAlchemy mapping per table, an eighth of a build's CPU. For the columns the template writes,
the tables SQLModel builds are known: the writable columns in manifest order, then the key and
the read-only ones; ``str`` VARCHAR, ``int`` INTEGER, ``float`` FLOAT, ``bool`` BOOLEAN, ``json``
a ``Column(JSON)``; NOT NULL where the annotation is not optional (and on the key). ``entity_ddl``
builds those ``Table`` objects and compiles them with the same SQLAlchemy compiler. Anything it
does not recognise as plain (a name that pydantic, SQLModel or the module itself gives a meaning,
a JSON key, duplicate names, a ``models.py`` that does not compile) answers None, and the build
imports ``models.py`` as before, failing as it did. ``tests/test_synth_ddl.py`` compares both.
"""

from __future__ import annotations

import functools
import keyword
import re
from typing import Any

from compoworld.manifest import ColumnDef, EntityDef

__all__ = ["entity_ddl"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: Names bound at the top of the rendered models.py: an entity class by one of them would rebind it.
_MODULE_NAMES = frozenset({"Any", "JSON", "Column", "registry", "Field", "SQLModel", "metadata", "_Model"})


@functools.cache
def _taken() -> frozenset[str]:
    """Attribute names of an SQLModel table class: a column by one of them is not a plain field."""
    from sqlmodel import SQLModel

    return frozenset(dir(SQLModel)) | {"metadata", "registry"}


def _plain_column(column: ColumnDef) -> bool:
    name = column.name
    return (
        bool(_NAME.match(name))
        and not keyword.iskeyword(name)
        and not name.startswith("model_")
        and name not in _taken()
        and column.type in ("integer", "number", "string", "boolean", "json")
        and not (column.primary_key and column.type == "json")
    )


def _plain(entities: list[EntityDef]) -> bool:
    classes = [e.class_name for e in entities] + [e.class_name + "Base" for e in entities]
    if len(set(classes)) != len(classes) or len({e.table for e in entities}) != len(entities):
        return False
    for entity in entities:
        names = [c.name for c in entity.columns]
        if (
            not _NAME.match(entity.class_name)
            or keyword.iskeyword(entity.class_name)
            or {entity.class_name, entity.class_name + "Base"} & _MODULE_NAMES
            or len(set(names)) != len(names)
            or sum(1 for c in entity.columns if c.primary_key) != 1
            or not all(_plain_column(c) for c in entity.columns)
        ):
            return False
    return True


def _column(column: ColumnDef) -> Any:
    from sqlalchemy import JSON, Boolean, Column, Float, Integer, String

    if column.type == "json":
        return Column(column.name, JSON)
    kind = {"integer": Integer, "number": Float, "string": String, "boolean": Boolean}[column.type]
    nullable = column.nullable and not column.primary_key
    return Column(column.name, kind, primary_key=column.primary_key, nullable=nullable)


def entity_ddl(entities: list[EntityDef], models_text: str) -> list[str] | None:
    """The CREATE TABLE statements importing ``models_text`` (rendered from ``entities``) gives, or
    None where only importing it can tell."""
    if not _plain(entities):
        return None
    try:
        compile(models_text, "models.py", "exec")
    except (SyntaxError, ValueError):
        return None
    from sqlalchemy import MetaData, Table
    from sqlalchemy.dialects import sqlite
    from sqlalchemy.schema import CreateTable

    metadata = MetaData()
    for entity in entities:
        writable = [c for c in entity.columns if not c.primary_key and not c.read_only]
        fixed = [c for c in entity.columns if c.primary_key or c.read_only]
        Table(entity.table, metadata, *(_column(c) for c in writable + fixed))
    dialect = sqlite.dialect()
    return [str(CreateTable(t).compile(dialect=dialect)).strip() for t in metadata.sorted_tables]
