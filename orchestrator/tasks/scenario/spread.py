"""Spreading scenarios over the library: a service is drawn first, then what in it a scenario uses.

Drawn over (person, table) pairs, a scenario lands where most people or tables are: on the whole
corpus, half the tasks touched one accounting service (``xero_accounting``: 48.8%). Drawing the
service first gives each service the same chance however many candidates it holds; but on a library
of thousands a 4-to-1 favour for the scenario's vertical is lost among the others, and a service that
is one of few candidates for a role (the nine services whose tools can send a person a message, the
one sink of some purpose a vertical has) came back in task after task (``avaza`` in 37% of the whole
corpus's tasks).

So a run keeps a tally (:class:`Usage`: how many of the tasks kept so far each service is in, and
how many drafts were rejected right after drawing it) and every draw of a service for a role (the
opening's party table, a record table, a sink, the message tool, the system a person is added to,
the table that tells namesakes apart) takes, among the candidates:

1. the services still under the share cap (:attr:`Usage.cap` of the tasks so far, never fewer than
   ``FLOOR`` tasks), when any is;
2. of those, the services of the scenario's vertical, when any is, else the systems every line of
   business runs (``verticals.SHARED_DOMAINS``: mail, messaging, calendars, task lists, CRM);
3. of those, the least used so far; ties at random (``weight`` decides within the service).

Past the cap (every candidate is) the least used comes first (the vertical only breaks ties); but on
a library large enough for ``CAP`` itself (800 services and more) a *strict* draw (``Usage.strict``)
gives up (:class:`SpreadExhausted`): the closing message (and, with
``GenerateOptions.strict_spread``, a chained workflow) is left out, and a draft's first workflow is
tried again with another archetype or person, except on the index's last try. The opening is never
strict: party tables are the scarcest role (67 of the whole corpus's 4,282 services), and a strict
opening gave up on nearly every try but the last, whose first workflow then took the busiest systems
again. The cap is
``CAP``, or on a small library ``SPAN`` service slots per task over its services (200 services: 10%;
the 19 of the starter: none): a share close to what an even spread gives anyway could only cut tasks
short.

The cap comes first, so no service is in more than about the cap of the tasks while another could
play its role; the vertical second, so the systems a task joins are ones a business runs side by side;
the tally last, so the vertical's services take turns, and a service whose drafts keep failing gives
way. The tally runs in index order, so a task depends only on the library, the options and its index
(and the tasks before it): the first five of a run of 80 are the tasks of a run of five.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from orchestrator.tasks.rejected import DraftRejected

__all__ = ["CAP", "FLOOR", "SPAN", "SpreadExhausted", "Usage", "by_service", "group_by_service"]

T = TypeVar("T")

#: the share of the tasks so far a service may be in before the draw prefers others (issue 12: <= 3%)
CAP = 0.025
#: ... but a service may always be in this many tasks (a short run is not spread over fresh services only)
FLOOR = 2
#: service slots per task the cap allows for on a small library: about four times the services a task
#: touches (an even spread of 5 per task over 19 services is 26% each already; a cap near it could only
#: cut tasks short), so below 800 services the cap is looser than ``CAP``, and off on the starter
SPAN = 20.0


class SpreadExhausted(DraftRejected):
    """Every service that could play a role in a strict draw is past the share cap already."""


@dataclass
class Usage:
    """How many of the tasks kept so far each service is in: the tally the draws balance against."""

    cap: float = CAP
    floor: int = FLOOR
    tasks: int = 0
    uses: Counter[str] = field(default_factory=Counter)
    #: drafts rejected right after drawing the service (the draw they failed on, most likely)
    tries: Counter[str] = field(default_factory=Counter)
    #: the services the draft now being made has drawn
    drawn: list[str] = field(default_factory=list)
    #: whether a draw past the cap gives up rather than take the least used (see the module docstring)
    strict: bool = False

    #: whether strict draws give up past the cap: only on a library large enough for ``CAP`` itself
    hard: bool = True

    @classmethod
    def for_library(cls, services: int) -> Usage:
        """The tally of a run over a library of this many services (its cap: ``CAP``, or ``SPAN / services``
        where that is more; strict draws give up past it only where it is ``CAP``)."""
        cap = max(CAP, SPAN / max(1, services))
        return cls(cap=cap, hard=cap <= CAP)

    def add(self, services: Iterable[str]) -> None:
        """Count one kept task's services (and start the next draft's draws)."""
        self.tasks += 1
        self.uses.update(set(services))
        self.drawn.clear()

    def rejected(self, *, blame: bool = True) -> None:
        """The draft now being made was rejected: the service it drew last counts as tried, as a use, so
        a service whose drafts keep failing gives way to others (least used would draw it again and
        again, and a vertical's only candidate would win every draw). ``blame=False``: the draft gave
        up for the spread (``SpreadExhausted``), not because of what it drew."""
        if blame and self.drawn:
            self.tries[self.drawn[-1]] += 1
        self.drawn.clear()

    def used(self, service: str) -> int:
        """Tasks kept with the service, and drafts rejected right after drawing it."""
        return self.uses[service] + self.tries[service]

    def over(self, service: str) -> bool:
        """Whether one more use of this service would take it past the cap."""
        return self.used(service) + 1 > max(self.floor, self.cap * (self.tasks + 1))

    def key(
        self, service: str, favoured: Collection[str], shared: Collection[str] = ()
    ) -> tuple[bool, int, int]:
        """How a draw ranks a service (lowest first): under the cap, then the vertical's (then the systems
        every vertical runs), then the least used; past the cap, the least used first (the vertical only
        breaks ties)."""
        used = self.used(service)
        tier = 0 if service in favoured else 1 if service in shared else 2
        return (True, used, tier) if self.over(service) else (False, tier, used)


def group_by_service(options: Iterable[T], service: Callable[[T], str]) -> dict[str, list[T]]:
    """``options`` by service, services in name order, each service's options in their order: what
    :func:`by_service` draws from. A pool drawn from again and again (the opening's subjects: thousands
    on the whole corpus) is grouped once and passed as ``groups``."""
    groups: dict[str, list[T]] = {}
    for option in options:
        groups.setdefault(service(option), []).append(option)
    return {name: groups[name] for name in sorted(groups)}


def by_service(
    rng: random.Random,
    options: Sequence[T],
    service: Callable[[T], str],
    *,
    favoured: Collection[str] = (),
    shared: Collection[str] = (),
    weight: Callable[[T], float] | None = None,
    usage: Usage | None = None,
    groups: Mapping[str, Sequence[T]] | None = None,
) -> T:
    """One of ``options``: a service first, as the module docstring says (under the cap of ``usage``,
    then in ``favoured``, then in ``shared``, then least used; ties at random; no tally: as before any
    task was kept), then
    one of its options (uniformly, or by ``weight``). Deterministic for a given ``rng`` state, option
    order and tally. ``SpreadExhausted`` for a strict draw whose candidates are all past the cap, and
    where every option's ``weight`` is 0 (services whose options all weigh 0 are no candidates).
    ``groups``: ``group_by_service(options, service)`` made once (the same draw, without regrouping)."""
    if groups is None:
        groups = group_by_service(options, service)
    if not groups:
        raise ValueError("nothing to choose from")
    tally = usage if usage is not None else Usage()
    keys = {n: tally.key(n, favoured, shared) for n in groups}
    tied: list[str] = []
    for best in sorted(set(keys.values())):
        tied = [n for n, key in keys.items() if key == best]
        if weight is not None:  # a service none of whose options weighs anything is no candidate
            tied = [n for n in tied if any(weight(m) > 0 for m in groups[n])]
        if tied:
            break
    if not tied:
        raise SpreadExhausted("no candidate can play this part without a system past its share of tasks")
    if best[0] and tally.strict and tally.hard:
        raise SpreadExhausted("every system that could do this is in its share of tasks already")
    chosen = rng.choice(tied)
    tally.drawn.append(chosen)
    members = groups[chosen]
    if weight is None:
        return rng.choice(members)
    return rng.choices(members, weights=[weight(m) for m in members])[0]
