"""Making the members of a population: each one from its own sha256-seeded generators.

A member's values depend only on (seed, role, place in the pool) and the pinned Faker,
so adding a member to one pool never changes another member. Organisations are made first
(people's emails are at their employer's domain), then staff, customers and candidates.
"""

from __future__ import annotations

import random
from datetime import timedelta

from faker import Faker

from compoworld import people as P
from compoworld.population import ANCHOR_DATE, Address, Member, Organisation, Person
from compoworld.seeding import derive_seed, seeded_rng

__all__ = ["build_members"]

_ORG_ROLES = ("employer", "client", "supplier")
_PERSON_ROLES = ("staff", "customer", "candidate")
_WEIGHTS = [c.weight for c in P.COUNTRIES]
_ORG_MAILBOXES = ("info", "hello", "contact", "office", "accounts", "sales")


def _country(rng: random.Random) -> P.Country:
    return rng.choices(P.COUNTRIES, weights=_WEIGHTS)[0]


def _address(fake: Faker, country: P.Country) -> Address:
    """Street, city, region and postcode from the country's own Faker locale (a US ZIP in its state)."""
    if country.code == "US":
        region = fake.state_abbr(include_territories=False)
        postcode = fake.postcode_in_state(region)
    else:
        try:
            region = fake.administrative_unit()
        except AttributeError:  # a locale without regions (Norway)
            region = ""
        postcode = fake.postcode()
    street = " ".join(fake.street_address().split())
    city = fake.city()
    by_postcode = getattr(fake.provider("faker.providers.address"), "cap_city_province", None)
    if isinstance(
        by_postcode, dict
    ):  # it_IT: a real postcode and its own town (its city list is set-ordered)
        postcode = fake.random_element(sorted(by_postcode))
        city = fake.random_element(sorted(c[0] for c in by_postcode[postcode]))
    return Address(street=street, city=city, region=region, postal_code=postcode, country=country.code)


def _twin_slots(size: int, pairs: int) -> set[int]:
    """Pool places whose next member is their near-duplicate: early in the pool, where casting looks."""
    return {1 + 3 * j for j in range(pairs) if 2 + 3 * j < size}


def _unique(value: str, taken: set[str], rng: random.Random) -> str:
    local, _, host = value.partition("@")
    candidate = value
    while candidate in taken:
        suffix = str(rng.randint(2, 99))
        candidate = f"{local}{suffix}@{host}" if host else f"{value}-{suffix}"
    taken.add(candidate)
    return candidate


def _org(
    seed: str, role: str, place: int, oid: str, twin: Organisation | None, taken: set[str]
) -> Organisation:
    rng = seeded_rng(seed, role, place)
    country = _country(rng)
    if twin is not None:  # the same name in another country
        country = rng.choice([c for c in P.COUNTRIES if c.code != twin.country])
    fake = P.faker_for(country.locale, derive_seed(seed, role, place, "faker"))
    prose = P.faker_for("en_US", derive_seed(seed, role, place, "prose"))
    name = twin.name if twin is not None else " ".join(fake.company().split())
    domain = _unique(P.org_domain(name, country.tld), taken, rng)
    iban, bic = P.bank_account(country.code, rng)
    return Organisation(
        id=oid,
        role=role,  # type: ignore[arg-type]
        name=name,
        email=f"{rng.choice(_ORG_MAILBOXES)}@{domain}",
        phone=P.phone_number(country.code, rng, "fixed"),
        address=_address(fake, country),
        country=country.code,
        currency=country.currency,
        language=country.language,
        locale=country.language_tag,
        timezone=P.time_zone(country.code, rng),
        iban=iban,
        bic=bic,
        domain=domain,
        twin=twin.id if twin is not None else None,
        website=f"https://www.{domain}",
        industry=prose.bs(),
    )


def _email(first: str, last: str, host: str, taken: set[str], rng: random.Random) -> str:
    local = ".".join(p for p in (P.ascii_slug(first), P.ascii_slug(last)) if p) or "someone"
    return _unique(f"{local}@{host}", taken, rng)


def _person(
    seed: str,
    role: str,
    place: int,
    pid: str,
    employer: Organisation | None,
    twin: Person | None,
    taken: set[str],
) -> Person:
    rng = seeded_rng(seed, role, place)
    country = _country(rng)
    if employer is not None and role == "staff" and rng.random() < 0.75:
        country = P.country(employer.country)
    fake = P.faker_for(country.locale, derive_seed(seed, role, place, "faker"))
    gender = twin.gender if twin is not None else rng.choice(("female", "male"))
    if twin is not None:
        first, last = twin.first_name, twin.last_name
    else:
        first = fake.first_name_female() if gender == "female" else fake.first_name_male()
        last = fake.last_name()
    address = _address(fake, country)
    host = employer.domain if employer is not None else fake.free_email_domain()
    email = _email(first, last, host, taken, rng)
    iban, bic = P.bank_account(country.code, rng)
    born = ANCHOR_DATE - timedelta(days=rng.randint(21 * 365, 68 * 365))
    return Person(
        id=pid,
        role=role,  # type: ignore[arg-type]
        name=f"{first} {last}",
        email=email,
        phone=P.phone_number(country.code, rng),
        address=address,
        country=country.code,
        currency=country.currency,
        language=country.language,
        locale=country.language_tag,
        timezone=P.time_zone(country.code, rng),
        iban=iban,
        bic=bic,
        domain=email.partition("@")[2],
        twin=twin.id if twin is not None else None,
        first_name=first,
        last_name=last,
        birthday=born.isoformat(),
        gender=gender,  # type: ignore[arg-type]
        job_title=P.faker_for("en_US", derive_seed(seed, role, place, "job")).job(),
        employer=employer.id if employer is not None else None,
        username=_unique(email.partition("@")[0].replace(".", "_")[:24], taken, rng),
    )


def _employer(role: str, place: int, seed: str, orgs: dict[str, list[Organisation]]) -> Organisation | None:
    rng = seeded_rng(seed, role, place, "employer")
    if role == "staff":
        return (
            orgs["employer"][0]
            if rng.random() < 0.7 or len(orgs["employer"]) < 2
            else rng.choice(orgs["employer"])
        )
    if role == "customer" and rng.random() < 0.6:
        return orgs["client"][min(int(rng.expovariate(1 / 20)), len(orgs["client"]) - 1)]
    if role == "candidate" and rng.random() < 0.5:
        return rng.choice(orgs["client"] + orgs["supplier"])
    return None


def build_members(seed: str, sizes: dict[str, tuple[int, int]]) -> list[Member]:
    """Every member of the population of ``seed``: organisations, then people, ids in that order."""
    taken: set[str] = set()
    orgs: dict[str, list[Organisation]] = {}
    count = 0
    for role in _ORG_ROLES:
        size, pairs = sizes[role]
        twins = _twin_slots(size, pairs)
        made: list[Organisation] = []
        for place in range(size):
            count += 1
            twin = made[-1] if place - 1 in twins else None
            made.append(_org(seed, role, place, f"org_{count:04d}", twin, taken))
            if twin is not None:
                made[-2] = twin.model_copy(update={"twin": made[-1].id})
        orgs[role] = made
    out: list[Member] = [o for role in _ORG_ROLES for o in orgs[role]]
    count = 0
    for role in _PERSON_ROLES:
        size, pairs = sizes[role]
        twins = _twin_slots(size, pairs)
        made_people: list[Person] = []
        for place in range(size):
            count += 1
            double = made_people[-1] if place - 1 in twins else None
            employer = _employer(role, place, seed, orgs)
            if double is not None and employer is not None and employer.id == double.employer:
                employer = None  # a near-duplicate never shares the other's workplace
            made_people.append(_person(seed, role, place, f"per_{count:04d}", employer, double, taken))
            if double is not None:
                made_people[-2] = double.model_copy(update={"twin": made_people[-1].id})
        out += made_people
    return out
