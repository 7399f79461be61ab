"""The one exception ingestion raises for bad input.

Every problem with an input document (unreadable text, a dangling ``$ref``, a
duplicate operation id, a name that sanitises to nothing...) becomes a
``SpecError`` that names the file and the JSON pointer of the offending node, so a
person can open the document at the right place. ``str(err)`` reads
``specs/bad.json#/paths/~1pets/get: duplicate operationId 'listPets' (also at ...)``.
"""

from __future__ import annotations

from collections.abc import Iterable

from compoworld.errors import CompoWorldError

__all__ = ["SpecError", "escape_token", "join_pointer"]


class SpecError(CompoWorldError, ValueError):
    """A problem with an input document, located by file and JSON pointer."""

    def __init__(self, file: str, pointer: str, message: str) -> None:
        super().__init__(file, pointer, message)
        self.file = file
        self.pointer = pointer
        self.message = message

    def __str__(self) -> str:
        return f"{self.file}#{self.pointer}: {self.message}"


def escape_token(token: object) -> str:
    """Escape one reference token as RFC 6901 wants (``~`` then ``/``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def join_pointer(tokens: Iterable[object]) -> str:
    """Build a JSON pointer (``/paths/~1pets/get``) from raw tokens; ``""`` is the root."""
    return "".join("/" + escape_token(t) for t in tokens)
