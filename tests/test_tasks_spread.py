"""Scenarios spread over the library: a service is drawn first, under the share cap, its vertical's
services first, the least used so far."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from orchestrator.models import Task
from orchestrator.tasks.scenario.spread import CAP, SpreadExhausted, Usage, by_service, group_by_service
from orchestrator.tasks.scenario.verticals import VERTICALS, vertical_for
from orchestrator.tasks.stats import spread

# one service holds 60 candidates, two others one each: drawn per candidate, "big" would win 97%
OPTIONS = [("big", i) for i in range(60)] + [("small", 0), ("tiny", 0)]


def _service(option: tuple[str, int]) -> str:
    return option[0]


def _draws(n: int = 3000, **kw: object) -> Counter[str]:
    rng = random.Random(5)
    return Counter(by_service(rng, OPTIONS, _service, **kw)[0] for _ in range(n))  # type: ignore[arg-type]


def test_without_a_tally_each_service_is_drawn_alike_however_many_candidates_it_holds() -> None:
    counts = _draws()
    assert all(900 <= counts[s] <= 1100 for s in ("big", "small", "tiny")), counts


def test_a_pool_grouped_once_draws_what_the_options_draw() -> None:
    """The opening groups its pool once (``groups``): the same draws, the same tally, in the same order."""
    mixed = sorted(OPTIONS, key=lambda o: (o[1] % 7, o[0]))  # services interleaved, not in name order
    groups = group_by_service(mixed, _service)
    assert list(groups) == ["big", "small", "tiny"]
    picks = []
    for grouped in (False, True):
        rng, usage = random.Random(11), Usage(cap=0.2)
        drawn = []
        for _ in range(120):
            kw = {"groups": groups} if grouped else {}
            pick = by_service(rng, mixed, _service, favoured={"big"}, usage=usage, **kw)  # type: ignore[arg-type]
            usage.add([pick[0]])
            drawn.append(pick)
        picks.append(drawn)
    assert picks[0] == picks[1]
    assert len(set(picks[0])) > 3


def test_the_verticals_services_come_first() -> None:
    assert _draws(favoured={"small"}) == Counter({"small": 3000})
    counts = _draws(favoured={"small", "tiny"})
    assert counts["big"] == 0 and abs(counts["small"] - counts["tiny"]) < 0.06 * 3000, counts


def test_a_run_takes_turns_the_least_used_service_first() -> None:
    """Each draw counted as a task of its own: the three services are used in turn, never two apart."""
    rng, usage = random.Random(2), Usage()
    for _ in range(300):
        usage.add([by_service(rng, OPTIONS, _service, usage=usage)[0]])
        assert max(usage.uses.values()) - min(usage.uses[s] for s in ("big", "small", "tiny")) <= 1


def test_a_service_past_the_cap_gives_way_even_to_another_vertical() -> None:
    usage = Usage()
    for i in range(200):  # 200 tasks so far, "small" in 10 of them (5%): past the 2.5% cap
        usage.add(["small"] if i < 10 else [f"other{i}"])
    assert usage.over("small") and not usage.over("tiny")
    rng = random.Random(0)
    picks = {by_service(rng, OPTIONS, _service, favoured={"small"}, usage=usage)[0] for _ in range(50)}
    assert "small" not in picks
    # where every candidate is past the cap, the least used comes first (here the only one) ...
    only = [("small", 0)]
    assert by_service(rng, only, _service, favoured={"small"}, usage=usage) == ("small", 0)
    # ... unless the draw is strict (a chained step, or a try that is not the index's last): it gives up
    usage.strict = True
    with pytest.raises(SpreadExhausted):
        by_service(rng, only, _service, favoured={"small"}, usage=usage)
    assert by_service(rng, OPTIONS, _service, favoured={"small"}, usage=usage)[0] != "small"


def test_the_systems_every_vertical_runs_come_after_the_verticals_own_and_before_the_rest() -> None:
    rng = random.Random(3)
    assert {by_service(rng, OPTIONS, _service, shared={"tiny"})[0] for _ in range(20)} == {"tiny"}
    picks = {by_service(rng, OPTIONS, _service, favoured={"small"}, shared={"tiny"})[0] for _ in range(20)}
    assert picks == {"small"}


def test_a_small_library_gets_a_looser_cap_and_the_starter_none() -> None:
    assert Usage.for_library(4282).cap == CAP and Usage.for_library(4282).hard
    assert Usage.for_library(200).cap == pytest.approx(0.1)
    assert Usage.for_library(19).cap > 1
    # below the size the cap itself fits, a strict draw past the cap takes the least used instead
    small = Usage.for_library(200)
    small.strict = True
    for _ in range(40):
        small.add(["small"])
    assert not small.hard and small.over("small")
    assert by_service(random.Random(0), [("small", 0)], _service, usage=small) == ("small", 0)


def test_a_service_whose_drafts_keep_failing_gives_way_even_in_the_vertical() -> None:
    """A draft rejected right after drawing a service counts as a use of it: the vertical's only candidate
    that always fails is tried a few times, then the others are drawn."""
    rng, usage = random.Random(4), Usage()
    options = [("small", 0), *((f"s{i:02d}", 0) for i in range(60))]
    picks: Counter[str] = Counter()
    for _ in range(200):
        pick = by_service(rng, options, _service, favoured={"small"}, usage=usage)[0]
        picks[pick] += 1
        if pick == "small":
            usage.rejected()  # every draft that draws it fails
        else:
            usage.add([pick])
    assert 2 <= picks["small"] <= 2 + CAP * 200 + 1, picks
    others = [picks[f"s{i:02d}"] for i in range(60)]
    assert max(others) - min(others) <= 1, picks  # the rest take turns


def test_the_cap_allows_a_few_tasks_on_a_short_run_and_its_share_on_a_long_one() -> None:
    usage = Usage()
    usage.add(["a"])
    assert not usage.over("a")  # the floor: a service may be in two tasks of a short run
    usage.add(["a"])
    assert usage.over("a")
    for _ in range(398):
        usage.add(["b"])
    assert usage.tasks == 400 and usage.uses["a"] == 2 and not usage.over("a")
    usage.uses["a"] = int(CAP * 401)
    assert usage.over("a")


def test_within_a_service_the_weight_decides_and_the_draw_is_deterministic() -> None:
    rng = random.Random(1)
    only_big = [o for o in OPTIONS if o[0] == "big"]
    picks = Counter(
        by_service(rng, only_big, _service, weight=lambda o: 1.0 if o[1] == 7 else 0.0)[1] for _ in range(50)
    )
    assert picks == Counter({7: 50})
    first = [by_service(random.Random(3), OPTIONS, _service) for _ in range(2)]
    assert first[0] == first[1]
    with pytest.raises(ValueError):
        by_service(rng, [], _service)


def test_a_task_opened_in_a_system_of_one_vertical_is_that_verticals_work() -> None:
    finance = next(v for v in VERTICALS if "accounting" in v.domains)
    rng = random.Random(0)
    # most of the person's other systems are support systems, but the opening is an accounting system
    assert vertical_for(["accounting", "email", "tickets", "email"], rng, lead="accounting") is finance
    support = vertical_for(["weather", "email", "tickets", "email"], rng, lead="weather")
    assert "email" in support.domains


def _task(*services: str) -> Task:
    return Task.model_construct(services=list(services))


def test_spread_reads_the_busiest_service_and_the_same_vertical_pairs() -> None:
    domains = {"books": "accounting", "pay": "payments", "desk": "tickets", "mail": "email", "x": "weather"}
    tasks = [_task("books", "pay"), _task("books", "desk"), _task("desk", "mail", "x"), _task("books")]
    figures = spread(tasks, domains)
    assert figures["busiest service's share of tasks"] == pytest.approx(3 / 4)  # books in 3 of 4
    # pairs: books-pay (finance), books-desk (no), desk-mail (support), desk-x, mail-x (no): 2 of 5
    assert figures["same-vertical service pairs"] == pytest.approx(2 / 5)
    # mail is a system every vertical runs, but desk-mail was a pair already and x is no system of any
    assert figures["same-vertical pairs, shared systems in every vertical"] == pytest.approx(2 / 5)
    with_crm = spread([_task("books", "crm")], {**domains, "crm": "crm"})
    assert with_crm["same-vertical service pairs"] == 0.0  # a CRM is sales ops' own system
    assert with_crm["same-vertical pairs, shared systems in every vertical"] == 1.0
    assert spread([], domains) == {
        "busiest service's share of tasks": 0.0,
        "same-vertical service pairs": 0.0,
        "same-vertical pairs, shared systems in every vertical": 0.0,
    }


def test_a_service_whose_options_all_weigh_nothing_is_no_candidate() -> None:
    """The opening under a strict spread weighs a person 0 when the first workflow could use none of their
    records without a system past the cap: a party system holding only such people is passed over (the
    next best service is drawn), and where every option weighs 0 the draw gives up for the spread."""
    rng = random.Random(6)
    usage = Usage()
    weight = {"big": 0.0, "small": 1.0, "tiny": 1.0}
    picks = {
        by_service(rng, OPTIONS, _service, favoured={"big"}, weight=lambda o: weight[o[0]], usage=usage)[0]
        for _ in range(40)
    }
    assert picks == {"small", "tiny"}  # "big" is the vertical's, but none of its people can be drawn
    with pytest.raises(SpreadExhausted):
        by_service(rng, OPTIONS, _service, weight=lambda o: 0.0, usage=usage)
    # positive weights draw exactly as before: the same services, the same rng use
    a = [by_service(random.Random(9), OPTIONS, _service, weight=lambda o: 1.0 + o[1]) for _ in range(3)]
    b = [by_service(random.Random(9), OPTIONS, _service, weight=lambda o: 1.0 + o[1]) for _ in range(3)]
    assert a == b
