"""An episode's forks across its services: made together, kept alive, frozen, released.

Only the orchestrator creates state in a service (the admin fork call), so it also owns the
forks' lifetime: ``keep_alive`` refreshes every fork of every episode it still holds (a
service reaps only forks nobody keeps, the orphans of an orchestrator that died), ``freeze``
turns an ended episode's forks read-only, ``release`` deletes them.
"""

from __future__ import annotations

import asyncio
import logging

from compoworld.errors import CompoWorldError
from orchestrator.discovery import ServiceDirectory
from orchestrator.lifecycle import EpisodeRecord
from orchestrator.store import EpisodeStore

__all__ = ["fork_all", "freeze", "keep_alive", "release"]

log = logging.getLogger(__name__)


async def fork_all(directory: ServiceDirectory, rec: EpisodeRecord, services: list[str]) -> None:
    """Fork every service of the episode (at once when remote); on any failure release those made."""
    clients = [directory.get(svc) for svc in services]
    try:
        if all(c.local for c in clients):
            for client in clients:
                await client.fork(rec.id, rec.task.today)
                rec.forked.append(client.name)
        else:
            outcomes = await asyncio.gather(
                *(c.fork(rec.id, rec.task.today) for c in clients), return_exceptions=True
            )
            for client, outcome in zip(clients, outcomes, strict=True):
                if isinstance(outcome, str):
                    rec.forked.append(client.name)
                    rec.pins[client.name] = outcome
            failed = [o for o in outcomes if isinstance(o, BaseException)]
            if failed:
                raise failed[0]
    except BaseException:
        await release(directory, rec)
        raise


async def release(directory: ServiceDirectory, rec: EpisodeRecord) -> None:
    """Delete the episode's forks in every service (a failure is logged: the service's TTL frees it)."""
    forked, rec.forked = rec.forked, []
    rec.released = True
    clients = [directory.get(svc) for svc in forked]
    if all(c.local for c in clients):
        for client in clients:
            await client.delete(rec.id)
        return
    outcomes = await asyncio.gather(*(c.delete(rec.id) for c in clients), return_exceptions=True)
    for client, outcome in zip(clients, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            log.warning("episode %s: releasing %s failed: %s", rec.id[:8], client.name, outcome)


async def freeze(directory: ServiceDirectory, rec: EpisodeRecord) -> None:
    """An ended episode's forks turn read-only until it is deleted (best effort: a dead service
    has nothing left to write to)."""
    clients = [directory.get(svc) for svc in rec.forked]
    outcomes = await asyncio.gather(*(c.freeze(rec.id) for c in clients), return_exceptions=True)
    for client, outcome in zip(clients, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            log.warning("episode %s: freezing %s failed: %s", rec.id[:8], client.name, outcome)


async def keep_alive(directory: ServiceDirectory, store: EpisodeStore) -> int:
    """Refresh every fork of every episode this orchestrator still holds, in each service at once.

    A service reaps forks nobody touches (an orchestrator that died leaves orphans); an episode
    busy in one service must not lose its fork in another. Returns how many forks were kept.
    """
    by_service: dict[str, list[str]] = {}
    for eid in await store.ids():
        rec = await store.get(eid)
        if rec is not None and not rec.released:
            for svc in rec.forked:
                by_service.setdefault(svc, []).append(eid)
    kept = 0
    for svc, ids in by_service.items():
        try:
            missing = await directory.get(svc).touch(ids)
        except CompoWorldError as exc:  # a dead service: its calls will say so
            log.warning("keep-alive of %s failed: %s", svc, exc)
            continue
        kept += len(ids) - len(missing)
        if missing:
            log.warning("%s holds no state for %d live episodes (restarted?)", svc, len(missing))
    return kept
