"""The verifier's seed hash is recomputed whenever the seed database changed, and only then."""

from __future__ import annotations

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings, bundled_library
from compoworld.synth.verify import _Checker


def test_the_seed_hash_follows_every_change_of_the_seed() -> None:
    runtime = ServiceRuntime.from_folder(bundled_library() / "crm", Settings.defaults())
    checker = _Checker(runtime, twin=None)  # type: ignore[arg-type]  # the hash needs no calls
    first = checker.seed_hash()
    assert first == runtime.state_hash(None) == checker.seed_hash()
    conn = runtime.store.seed_view().conn
    table = next(iter(runtime.store.tables.values()))
    conn.execute(f'DELETE FROM "{table.name}" WHERE rowid = (SELECT MIN(rowid) FROM "{table.name}")')
    assert checker.seed_hash() == runtime.state_hash(None) != first
    conn.execute("CREATE TABLE extra (x)")  # a schema change writes no row
    conn.execute("DROP TABLE extra")
    assert checker.seed_hash() == runtime.state_hash(None)
