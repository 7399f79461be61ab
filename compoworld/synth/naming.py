"""Names for generated code: identifiers, snake case, class names.

Everything synthesis emits (columns, classes, tables) must be a valid Python identifier that
does not shadow a keyword or an attribute SQLModel/pydantic put on every model, and the same
input must always give the same name, so these helpers are pure functions of their input.
"""

from __future__ import annotations

import keyword
import re

from compoworld.specs.words import split_words

__all__ = [
    "RESERVED_ATTRIBUTES",
    "class_name",
    "identifier",
    "match_key",
    "snake",
    "unique",
    "unique_column",
]

#: Attributes every SQLModel class has (plus SQLAlchemy/pydantic internals); a column with one
#: of these names would shadow it, so it gets a trailing underscore.
RESERVED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "fields",
        "from_orm",
        "json",
        "metadata",
        "model_computed_fields",
        "model_config",
        "model_construct",
        "model_copy",
        "model_dump",
        "model_dump_json",
        "model_extra",
        "model_fields",
        "model_fields_set",
        "model_json_schema",
        "model_parametrized_name",
        "model_post_init",
        "model_rebuild",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "registry",
        "schema",
        "schema_json",
        "sqlmodel_update",
        "update_forward_refs",
        "validate",
        # what the metaclass gives every class (abc's ``register``, type's ``mro``): a field
        # named so is dropped from the table and its annotation left as ``Any``
        "mro",
        "register",
        # names the rendered models.py imports or uses in annotations (a class attribute
        # named ``str`` would break every later ``str | None`` annotation in the class body)
        "Any",
        "bool",
        "bytes",
        "float",
        "int",
        "list",
        "object",
        "str",
        "Column",
        "Field",
        "JSON",
        "SQLModel",
    }
)


def snake(text: str) -> str:
    """``calendarList`` -> ``calendar_list``; ``free-trial-numbers`` -> ``free_trial_numbers``."""
    return "_".join(split_words(text))


def match_key(text: str) -> str:
    """Case- and separator-blind key, so ``companyId``, ``company_id`` and ``CompanyID`` meet."""
    return "".join(split_words(text))


def identifier(text: str, *, fallback: str = "field") -> str:
    """A valid, non-reserved Python identifier close to ``text`` (keeps its case).

    Invalid characters become ``_``, leading underscores are dropped (pydantic treats those
    as private attributes), a leading digit gets an ``n_`` prefix, and keywords or
    SQLModel attributes get a trailing ``_``.
    """
    name = re.sub(r"[^0-9A-Za-z_]", "_", text.strip())
    name = re.sub(r"_+", "_", name).strip("_")
    if not name:
        name = fallback
    if name[0].isdigit():
        name = "n_" + name
    if keyword.iskeyword(name) or name in RESERVED_ATTRIBUTES:
        name += "_"
    return name


def class_name(entity: str) -> str:
    """``time_off_request`` -> ``TimeOffRequest`` (never a keyword or a reserved name)."""
    name = "".join(w.capitalize() for w in split_words(entity)) or "Entity"
    if name[0].isdigit():
        name = "E" + name
    if name in RESERVED_ATTRIBUTES or keyword.iskeyword(name):
        name += "Row"
    return name


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... whichever is not in ``taken``; adds it to ``taken``."""
    candidate = name
    n = 2
    while candidate in taken:
        candidate = f"{name}_{n}"
        n += 1
    taken.add(candidate)
    return candidate


def unique_column(name: str, taken: set[str]) -> str:
    """Like ``unique``, blind to case: SQL column names are (``Id`` and ``id`` are one column).

    ``taken`` holds the case-folded names given so far.
    """
    candidate, n = name, 2
    while candidate.casefold() in taken:
        candidate = f"{name}_{n}"
        n += 1
    taken.add(candidate.casefold())
    return candidate
