"""A state hash is taken again whenever the state changed, and only then; it is always the dump's.

``StateStore.state_hash`` keeps the hash with the connection's change mark and lets an unwritten
fork of the seed answer the seed's hash; every answer must equal ``dump(...)["hash"]``.
"""

from __future__ import annotations

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings, bundled_library
from compoworld.synth.verify import _Checker


def _runtime() -> ServiceRuntime:
    return ServiceRuntime.from_folder(bundled_library() / "crm", Settings.defaults())


def _dumped(runtime: ServiceRuntime, episode: str | None) -> str:
    return str(runtime.dump(episode)["hash"])


def test_the_seed_hash_follows_every_change_of_the_seed() -> None:
    runtime = _runtime()
    checker = _Checker(runtime, twin=None)  # type: ignore[arg-type]  # the hash needs no calls
    first = checker.seed_hash()
    assert first == runtime.state_hash(None) == checker.seed_hash() == _dumped(runtime, None)
    conn = runtime.store.seed_view().conn
    table = next(iter(runtime.store.tables.values()))
    conn.execute(f'DELETE FROM "{table.name}" WHERE rowid = (SELECT MIN(rowid) FROM "{table.name}")')
    assert checker.seed_hash() == runtime.state_hash(None) == _dumped(runtime, None) != first
    conn.execute("CREATE TABLE extra (x)")  # a schema change writes no row
    conn.execute("DROP TABLE extra")
    assert checker.seed_hash() == runtime.state_hash(None) == _dumped(runtime, None)


def test_an_unwritten_fork_hashes_as_the_seed_and_a_written_one_is_dumped_again() -> None:
    runtime = _runtime()
    seed = runtime.state_hash(None)
    runtime.fork("a")
    assert runtime.state_hash("a") == seed == _dumped(runtime, "a")
    table = next(iter(runtime.store.tables.values()))
    row = runtime.select(None, table.name)[0]
    conn = runtime.store.get("a").conn
    conn.execute(f'DELETE FROM "{table.name}" WHERE "{table.pk}" = ?', (row[table.pk],))
    changed = runtime.state_hash("a")
    assert changed != seed
    assert changed == _dumped(runtime, "a") == runtime.state_hash("a")
    assert runtime.state_hash(None) == seed  # the seed is not the fork
    runtime.fork("b", source="a")  # a fork of an episode is hashed from its own rows
    assert runtime.state_hash("b") == changed == _dumped(runtime, "b")
    runtime.fork("a")  # replaced by a fresh copy of the seed
    assert runtime.state_hash("a") == seed


def test_a_fork_made_before_the_seed_changed_is_not_taken_for_the_seed() -> None:
    runtime = _runtime()
    runtime.fork("early")
    before = runtime.state_hash(None)
    conn = runtime.store.seed_view().conn
    table = next(iter(runtime.store.tables.values()))
    conn.execute(f'DELETE FROM "{table.name}" WHERE rowid = (SELECT MIN(rowid) FROM "{table.name}")')
    assert runtime.state_hash(None) != before
    assert runtime.state_hash("early") == before == _dumped(runtime, "early")
