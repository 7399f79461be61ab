"""Scenarios spread over the library: a service is drawn first, its vertical's services more often."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from orchestrator.models import Task
from orchestrator.tasks.scenario.spread import FAVOUR, by_service
from orchestrator.tasks.stats import spread

# one service holds 60 candidates, two others one each: drawn per candidate, "big" would win 97%
OPTIONS = [("big", i) for i in range(60)] + [("small", 0), ("tiny", 0)]


def _draws(n: int = 3000, **kw: object) -> Counter[str]:
    rng = random.Random(5)
    return Counter(by_service(rng, OPTIONS, lambda o: o[0], **kw)[0] for _ in range(n))  # type: ignore[arg-type]


def test_each_service_is_drawn_alike_however_many_candidates_it_holds() -> None:
    counts = _draws()
    assert all(900 <= counts[s] <= 1100 for s in ("big", "small", "tiny")), counts


def test_the_verticals_services_are_drawn_favour_times_as_often() -> None:
    counts = _draws(favoured={"small"})
    expected = 3000 * FAVOUR / (FAVOUR + 2)
    assert abs(counts["small"] - expected) < 0.06 * 3000, counts
    assert abs(counts["big"] - counts["tiny"]) < 0.05 * 3000, counts


def test_within_a_service_the_weight_decides_and_the_draw_is_deterministic() -> None:
    rng = random.Random(1)
    only_big = [o for o in OPTIONS if o[0] == "big"]
    picks = Counter(
        by_service(rng, only_big, lambda o: o[0], weight=lambda o: 1.0 if o[1] == 7 else 0.0)[1]
        for _ in range(50)
    )
    assert picks == Counter({7: 50})
    first = [by_service(random.Random(3), OPTIONS, lambda o: o[0]) for _ in range(2)]
    assert first[0] == first[1]
    with pytest.raises(ValueError):
        by_service(rng, [], lambda o: o)


def _task(*services: str) -> Task:
    return Task.model_construct(services=list(services))


def test_spread_reads_the_busiest_service_and_the_same_vertical_pairs() -> None:
    domains = {"books": "accounting", "pay": "payments", "desk": "tickets", "mail": "email", "x": "weather"}
    tasks = [_task("books", "pay"), _task("books", "desk"), _task("desk", "mail", "x"), _task("books")]
    figures = spread(tasks, domains)
    assert figures["busiest service's share of tasks"] == pytest.approx(3 / 4)  # books in 3 of 4
    # pairs: books-pay (finance), books-desk (no), desk-mail (support), desk-x, mail-x (no): 2 of 5
    assert figures["same-vertical service pairs"] == pytest.approx(2 / 5)
    assert spread([], domains) == {
        "busiest service's share of tasks": 0.0,
        "same-vertical service pairs": 0.0,
    }
