"""One population of people and organisations shared by every service of the library.

Services are built one document at a time, yet a customer in the CRM must be the same
customer in the payment service and the mailbox. So the people and organisations come from
one library-wide, deterministic population (``population()``, fixed by ``POPULATION_SEED``),
and each service's seed rows are *cast* from it: a CRM ``contact`` row, an accounting
``customer`` row and a Mailsquad ``contact`` row may all be person ``per_0007``, with the same
name, email, phone, address and bank account.

Roles say who may play a part (``PERSON_ROLES``, ``ORG_ROLES``):

- ``customer`` people (contacts, leads, recipients, guests, cardholders...), many employed
  by ``client`` organisations (B2B contacts), the rest private customers;
- ``staff`` people (employees, users, agents, assignees, owners), employed by the
  ``employer`` organisations, the company the library's services belong to;
- ``candidate`` people (applicants);
- ``client``, ``supplier`` and ``employer`` organisations.

Each pool holds a few **near-duplicate** pairs: two people with the same first and last name
(different email, phone, city and employer), and two organisations with the same name in
different countries, so tasks can ask an agent to tell them apart (``near_duplicates()``).

How other code uses it:

- ``population().get("per_0007")``, ``.by_email(email)``, ``.identify(value)`` (an email,
  E.164 phone, IBAN or exact name -> the member), ``.named(name)`` (every member with that
  name: more than one for a near-duplicate), ``.pool(role)``;
- a service folder's ``population.json`` (rendered with the seed) says which member each
  seed row was cast from: ``{"roles": {table: role}, "rows": {table: {key: member_id}}}``;
  ``load_cast(folder)`` reads it. Rows of tables that are not people or organisations
  (invoices, messages, tickets) name the member they are *about* (the invoice's customer);
- ``cast(role, key, n)`` is how seeding picks members: deterministic per key, biased towards
  the first members of a pool (so the same core customers recur across services) and keeping
  near-duplicate pairs together.

Member ids (``per_0001``, ``org_0001``) are stable for a given seed and pinned Faker version.
"""

from __future__ import annotations

import functools
import json
import math
import random
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from compoworld.seeding import seeded_rng

__all__ = [
    "ANCHOR_DATE",
    "ORG_ROLES",
    "PERSON_ROLES",
    "POPULATION_SEED",
    "Address",
    "Member",
    "Organisation",
    "Person",
    "Population",
    "load_cast",
    "population",
]

#: The population every library shares unless a caller asks for another.
POPULATION_SEED = "compoworld-population-1"
#: Seed dates fall in a window around this day (episodes default to it as "today").
ANCHOR_DATE = date(2026, 1, 15)
PERSON_ROLES = ("customer", "staff", "candidate")
ORG_ROLES = ("client", "supplier", "employer")
Role = Literal["customer", "staff", "candidate", "client", "supplier", "employer"]

# role -> (members, near-duplicate pairs among them)
_SIZES: dict[str, tuple[int, int]] = {
    "employer": (4, 0),
    "client": (80, 4),
    "supplier": (40, 2),
    "staff": (60, 3),
    "customer": (150, 10),
    "candidate": (80, 4),
}
#: When a pool runs out, the next one casts (a 34-row HR ``company`` table: 4 employers, then clients).
_FALLBACK: dict[str, tuple[str, ...]] = {
    "employer": ("client", "supplier"),
    "client": ("supplier",),
    "supplier": ("client",),
    "staff": ("candidate", "customer"),
    "customer": ("candidate",),
    "candidate": ("customer",),
}
#: How fast a member's chance to be cast falls with its place in the pool (weight exp(-place / spread)):
#: two 30-row tables share about half their members, and 40 tables use ~90 of 150 customers.
_SPREAD = 15.0
_B2B_SHARE = 0.6


class Address(BaseModel):
    """A postal address; its parts agree with each other and with ``country``."""

    model_config = ConfigDict(frozen=True)

    street: str = Field(description="Street and number, as the country writes it.")
    city: str = Field(description="City or town.")
    region: str = Field(default="", description="State, province or county, where the country has them.")
    postal_code: str = Field(description="Postcode in the country's format.")
    country: str = Field(description="ISO 3166-1 alpha-2 code.")


class Member(BaseModel):
    """What people and organisations share: identity, contact details, location, money."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Stable id in the population: per_0001, org_0001.")
    role: Role = Field(description="The part the member plays in the world.")
    name: str = Field(description="Full name (a person) or trading name (an organisation).")
    email: str = Field(description="Email address, unique in the population.")
    phone: str = Field(description="E.164 phone number of the member's country.")
    address: Address = Field(description="Postal address.")
    country: str = Field(description="ISO 3166-1 alpha-2 code (the address's).")
    currency: str = Field(description="ISO 4217 code of the country's currency.")
    language: str = Field(description="ISO 639-1 code.")
    locale: str = Field(description="BCP 47 tag (de-CH).")
    timezone: str = Field(description="IANA time zone of the country.")
    iban: str | None = Field(
        default=None, description="IBAN of the member's bank account (None where unused)."
    )
    bic: str | None = Field(default=None, description="BIC of the IBAN's bank.")
    domain: str = Field(description="Web domain (the employer's for a person at work).")
    twin: str | None = Field(default=None, description="Id of the near-duplicate member, if any.")


class Person(Member):
    """A person: a customer, a member of staff or a job candidate."""

    first_name: str = Field(description="Given name.")
    last_name: str = Field(description="Family name.")
    birthday: str = Field(description="ISO date of birth.")
    gender: Literal["female", "male"] = Field(description="The gender the first name was drawn for.")
    job_title: str = Field(description="Job title (at the employer, if any).")
    employer: str | None = Field(default=None, description="Id of the organisation the person works for.")
    username: str = Field(description="A login name derived from the name.")


class Organisation(Member):
    """A company: a client, a supplier, or one of the employers the services belong to."""

    website: str = Field(description="https URL of the organisation's site.")
    industry: str = Field(description="What the organisation does, in a few words.")


class Population:
    """The people and organisations of one seed, with lookups and deterministic casting."""

    def __init__(self, seed: str, members: Iterable[Member]) -> None:
        self.seed = seed
        self.members: dict[str, Member] = {m.id: m for m in members}
        self._pools: dict[str, list[Member]] = {}
        for m in self.members.values():
            self._pools.setdefault(m.role, []).append(m)
        self._by_value: dict[str, Member] = {}
        self._by_name: dict[str, list[Member]] = {}
        for m in self.members.values():
            for value in (m.email, m.phone, m.iban):
                if value:
                    self._by_value[value.lower()] = m
            self._by_name.setdefault(m.name.lower(), []).append(m)
        self._contacts: dict[str, Person] = {}
        for m in self.people:
            if m.employer is not None:
                self._contacts.setdefault(m.employer, m)

    @property
    def people(self) -> list[Person]:
        return [m for m in self.members.values() if isinstance(m, Person)]

    @property
    def organisations(self) -> list[Organisation]:
        return [m for m in self.members.values() if isinstance(m, Organisation)]

    def get(self, member_id: str) -> Member:
        """The member with this id (KeyError for an unknown one)."""
        return self.members[member_id]

    def pool(self, role: str) -> list[Member]:
        """Members of a role, in pool order (the first ones are cast most often)."""
        return list(self._pools.get(role, []))

    def by_email(self, email: str) -> Member | None:
        found = self._by_value.get(email.strip().lower())
        return found if found is not None and found.email.lower() == email.strip().lower() else None

    def identify(self, value: str) -> Member | None:
        """The member an email, E.164 phone, IBAN or exact (unique) name belongs to."""
        text = value.strip().lower()
        found = self._by_value.get(text) or self._by_value.get(text.replace(" ", ""))
        if found is not None:
            return found
        named = self._by_name.get(text, [])
        return named[0] if len(named) == 1 else None

    def named(self, name: str) -> list[Member]:
        """Every member with exactly this name (two for a near-duplicate pair)."""
        return list(self._by_name.get(name.strip().lower(), []))

    def near_duplicates(self, role: str | None = None) -> list[tuple[Member, Member]]:
        """Pairs of members with the same name, told apart only by their other attributes."""
        pairs = [
            (m, self.members[m.twin])
            for m in self.members.values()
            if m.twin is not None and m.id < m.twin and (role is None or m.role == role)
        ]
        return sorted(pairs, key=lambda p: p[0].id)

    def contact_at(self, org: Member) -> Person | None:
        """The person who speaks for an organisation: the first one it employs, if any."""
        return self._contacts.get(org.id)

    def pitch(self, member: Member) -> str:
        """What the member's organisation does, in a few words (for free text about it)."""
        org = member if isinstance(member, Organisation) else self.employer_of(member)
        return org.industry if org is not None else "sort out their paperwork"

    def employer_of(self, person: Member) -> Organisation | None:
        employer = getattr(person, "employer", None)
        found = self.members.get(employer) if employer else None
        return found if isinstance(found, Organisation) else None

    def cast(self, role: str, key: Sequence[object], n: int, prefer: Sequence[str] = ()) -> list[Member]:
        """``n`` distinct members for the rows of one table, deterministic in ``key``.

        ``prefer`` members come first (an org table referenced by a people table casts their
        employers); the rest are drawn by weight, the first of a pool most likely, a
        near-duplicate pair together; a pool that runs out continues with its fallbacks.
        """
        rng = seeded_rng(self.seed, "cast", *key)
        chosen: list[Member] = []
        seen: set[str] = set()
        allowed = {role, *_FALLBACK.get(role, ())}
        for member_id in prefer:
            member = self.members.get(member_id)
            if member is not None and member.role in allowed and member.id not in seen and len(chosen) < n:
                chosen.append(member)
                seen.add(member.id)
        for pool_role in (role, *_FALLBACK.get(role, ())):
            if len(chosen) >= n:
                break
            for unit in self._draw(self._pools.get(pool_role, []), rng):
                for member in unit:
                    if member.id not in seen and len(chosen) < n:
                        chosen.append(member)
                        seen.add(member.id)
        return chosen

    def _draw(self, pool: list[Member], rng: random.Random) -> list[list[Member]]:
        """The pool's units (a member, or a near-duplicate pair) in a weighted random order."""
        units: list[list[Member]] = []
        placed: set[str] = set()
        for m in pool:
            if m.id in placed:
                continue
            unit = [m] + ([self.members[m.twin]] if m.twin and m.twin in self.members else [])
            placed.update(u.id for u in unit)
            units.append(unit)
        keyed = []
        for rank, unit in enumerate(units):
            weight = math.exp(-rank / _SPREAD)
            keyed.append((math.log(max(rng.random(), 1e-300)) / weight, rank, unit))  # Efraimidis-Spirakis
        keyed.sort(key=lambda k: (-k[0], k[1]))
        return [unit for _, _, unit in keyed]


def load_cast(folder: Path) -> dict[str, dict[str, dict[str, str]]]:
    """A service folder's ``population.json``: ``{"roles": {table: role}, "rows": {table: {key: id}}}``."""
    path = Path(folder) / "population.json"
    if not path.exists():
        return {"roles": {}, "rows": {}}
    data: dict[str, dict[str, dict[str, str]]] = json.loads(path.read_text(encoding="utf-8"))
    return data


@functools.lru_cache(maxsize=4)
def population(seed: str = POPULATION_SEED) -> Population:
    """The population of a seed (built once per process; the default is the library's)."""
    from compoworld.population_build import build_members

    return Population(seed, build_members(seed, _SIZES))
