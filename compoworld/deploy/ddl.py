"""``python -m compoworld.deploy.ddl FOLDER...``: print each service's table DDL as JSON.

Run as a child by ``compoworld.deploy.entrypoint`` so that the serving process never imports
the SQLModel classes of ``models.py`` (and SQLAlchemy with them): they are needed only to
compile ``CREATE TABLE`` statements once, at start-up. Prints ``{folder: [statement, ...] |
null}``; a folder whose models do not import exits 1 with the reason on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from compoworld.errors import LibraryError
from compoworld.runtime.service import sqlmodel_ddl

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    folders = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    out: dict[str, list[str] | None] = {}
    try:
        for folder in folders:
            out[str(folder)] = sqlmodel_ddl(folder, folder.name)
    except LibraryError as exc:
        print(exc, file=sys.stderr)
        return 1
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
