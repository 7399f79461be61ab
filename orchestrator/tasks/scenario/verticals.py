"""Business verticals as data: who the agent works for, and the house rules whose thresholds mean something.

A scenario takes the vertical its services suggest (the domains of the services it touches) and
draws its frame and rules from it: the amount at which work goes to a senior person, how many days
a follow-up may wait. Adding a vertical is adding an entry to ``VERTICALS``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SHARED_DOMAINS", "VERTICALS", "VERTICAL_DOMAINS", "Vertical", "vertical_for"]


@dataclass(frozen=True)
class Vertical:
    """A line of business: the team's frame, its escalation thresholds and its follow-up rule."""

    name: str
    #: the domains of its systems: CompoWorld's own labels (``compoworld.synth.domain``) and the corpus
    #: categories a service falls back to when its name and title name none (``financial``, ``payment``)
    domains: tuple[str, ...]
    team: str
    frames: tuple[str, ...]
    thresholds: tuple[int, ...]
    escalation_rule: str
    follow_up_days: tuple[int, ...]
    follow_up_rule: str


VERTICALS: tuple[Vertical, ...] = (
    Vertical(
        name="finance ops",
        domains=("accounting", "payments", "finance", "financial", "payment"),
        team="finance operations",
        frames=(
            "You are helping the finance operations team close out this week's customer accounts.",
            "I run accounts receivable and I'm working through customer files before the month-end close.",
        ),
        thresholds=(100, 250, 500, 1000, 2500, 5000, 10000),
        escalation_rule="anything that adds up to {threshold} or more goes to the credit controller",
        follow_up_days=(3, 5, 7, 14),
        follow_up_rule="payment chasers are due {days} days after the most recent transaction",
    ),
    Vertical(
        name="support",
        domains=("tickets", "messaging", "email", "calendar", "support", "telecom"),
        team="customer support",
        frames=(
            "You are covering the customer support queue today.",
            "I lead the support desk and need a hand with one of our customers.",
        ),
        thresholds=(100, 250, 500, 1000, 5000),
        escalation_rule="customers whose open value is {threshold} or more are handled as priority accounts",
        follow_up_days=(1, 2, 3, 5),
        follow_up_rule="every follow-up is due {days} days after the customer's latest activity",
    ),
    Vertical(
        name="sales ops",
        domains=("crm", "general", "customer_relation", "marketing"),
        team="sales operations",
        frames=(
            "You support the sales operations team, keeping customer records and next steps in order.",
            "I'm in sales ops and we're tidying up our accounts before the pipeline review.",
        ),
        thresholds=(500, 1000, 2500, 5000, 10000, 25000),
        escalation_rule="accounts worth {threshold} or more are reviewed by the account director",
        follow_up_days=(2, 3, 7, 10),
        follow_up_rule="next-step calls are booked {days} days after the last touchpoint",
    ),
    Vertical(
        name="HR ops",
        domains=("hr", "recruiting"),
        team="people operations",
        frames=(
            "You help the people operations team keep staff and candidate records straight.",
            "I work in HR operations and need help with one person's records.",
        ),
        thresholds=(100, 500, 1000, 2500),
        escalation_rule="anything of {threshold} or more needs sign-off from the HR director",
        follow_up_days=(2, 5, 7),
        follow_up_rule="HR follow-ups are due {days} days after the latest record",
    ),
    Vertical(
        name="legal ops",
        domains=("legal", "storage", "documents", "forms"),
        team="legal operations",
        frames=(
            "You assist the legal operations team with client matters.",
            "I'm in legal ops; we are reviewing one client's file.",
        ),
        thresholds=(1000, 5000, 10000, 50000),
        escalation_rule="any disbursement of {threshold} or more must be reviewed by the supervising partner",
        follow_up_days=(3, 7, 14),
        follow_up_rule="matter follow-ups are due {days} days after the latest filing",
    ),
    Vertical(
        name="commerce ops",
        domains=("commerce", "travel", "hotels", "ecommerce", "transport"),
        team="commerce operations",
        frames=(
            "You work with the commerce operations team on customer orders and bookings.",
            "I handle order operations and need help with one customer's history.",
        ),
        thresholds=(50, 100, 250, 500, 1000, 2500),
        escalation_rule="orders adding up to {threshold} or more are checked by the fraud desk",
        follow_up_days=(1, 2, 3, 7),
        follow_up_rule="customer follow-ups are due {days} days after their latest order",
    ),
    # the corpus's own categories no vertical above names (issue 12: 73% of the whole corpus's services,
    # most of them developer platforms, clouds and hosting, team tools, media): the lines of business
    # that run such systems side by side
    Vertical(
        name="IT ops",
        domains=("developer_tools", "cloud", "hosting", "monitoring", "security", "backend", "iot", "tools"),
        team="IT operations",
        frames=(
            "You help the IT operations team keep one user's accounts and resources in order across our systems.",
            "I'm on the IT service desk and I'm reviewing what one of our users has set up with us.",
        ),
        thresholds=(50, 100, 250, 500, 1000, 5000),
        escalation_rule="anything that adds up to {threshold} or more needs sign-off from the IT manager",
        follow_up_days=(1, 2, 5, 7),
        follow_up_rule="access reviews are due {days} days after the user's latest change",
    ),
    Vertical(
        name="project ops",
        domains=("collaboration", "time_management", "project_management", "enterprise", "education"),
        team="project operations",
        frames=(
            "You support the project office, keeping one client's work, hours and files straight.",
            "I coordinate our client projects and need a hand with one client's records.",
        ),
        thresholds=(100, 500, 1000, 2500, 10000),
        escalation_rule="work adding up to {threshold} or more goes to the project director for review",
        follow_up_days=(2, 3, 5, 10),
        follow_up_rule="project check-ins are due {days} days after the latest entry",
    ),
    Vertical(
        name="media ops",
        domains=("media", "entertainment", "social", "text", "analytics"),
        team="audience and content operations",
        frames=(
            "You work with the content and audience team on one member's account.",
            "I run audience operations and need help sorting out one subscriber's records.",
        ),
        thresholds=(10, 50, 100, 250, 1000),
        escalation_rule="accounts with {threshold} or more in open charges are reviewed by the audience lead",
        follow_up_days=(1, 3, 7, 14),
        follow_up_rule="member follow-ups are due {days} days after their latest activity",
    ),
)


#: every domain some vertical names (a service of one of them is a system of some line of business)
VERTICAL_DOMAINS: frozenset[str] = frozenset(d for v in VERTICALS for d in v.domains)
#: systems every line of business runs beside its own (mail, messaging, calendars, task lists, a CRM,
#: team collaboration): a scenario's draws take them after its own vertical's and before the rest
SHARED_DOMAINS: frozenset[str] = frozenset(
    ("email", "messaging", "calendar", "tasks", "crm", "customer_relation", "collaboration")
)


def vertical_for(domains: Sequence[str], rng: random.Random, *, lead: str | None = None) -> Vertical:
    """The vertical most of these service domains point to (ties and strangers: one at random); with
    ``lead`` (the domain of the system a scenario opens in) only the verticals that name it, when any
    does: a task opened in an accounting system is finance work."""
    named = [i for i, v in enumerate(VERTICALS) if lead is not None and lead in v.domains]
    scores = [(sum(d in VERTICALS[i].domains for d in domains), i) for i in named or range(len(VERTICALS))]
    best = max(s for s, _ in scores)
    if best == 0:
        return rng.choice(VERTICALS)
    return VERTICALS[rng.choice([i for s, i in scores if s == best])]
