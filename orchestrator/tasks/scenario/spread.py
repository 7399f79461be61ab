"""Spreading scenarios over the library: a service is drawn first, then what in it a scenario uses.

Drawn over (person, table) pairs, a scenario lands where most people or tables are: on the whole
corpus, half the tasks touched one accounting service (``xero_accounting``: 48.8%) and 5.5% of the
service pairs in a task were of one line of business. Drawing the service first gives each service
the same chance however many candidates it holds, and the services of the scenario's vertical
(its accounting, payments and CRM systems for finance operations) a larger one, so the systems a
task joins are ones a business runs side by side.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

__all__ = ["FAVOUR", "by_service"]

T = TypeVar("T")

#: how much more often a service of the scenario's vertical is drawn than any other
FAVOUR = 4.0


def by_service(
    rng: random.Random,
    options: Sequence[T],
    service: Callable[[T], str],
    *,
    favoured: Collection[str] = (),
    weight: Callable[[T], float] | None = None,
) -> T:
    """One of ``options``: a service first (each alike, those in ``favoured`` ``FAVOUR`` times as likely),
    then one of its options (uniformly, or by ``weight``). Deterministic for a given ``rng`` state and
    option order."""
    if not options:
        raise ValueError("nothing to choose from")
    groups: dict[str, list[T]] = {}
    for option in options:
        groups.setdefault(service(option), []).append(option)
    names = sorted(groups)
    chosen = rng.choices(names, weights=[FAVOUR if n in favoured else 1.0 for n in names])[0]
    members = groups[chosen]
    if weight is None:
        return rng.choice(members)
    return rng.choices(members, weights=[weight(m) for m in members])[0]
