"""Typed values of one country, each from the library that knows the format.

Names, streets, cities, postcodes, companies and job titles come from Faker in the country's
own locale (Faker is pinned, so the same seed gives the same values); E.164 phone numbers
are checked by ``phonenumbers`` for the country; IBANs and their BICs are drawn from
``schwifty``'s bank registry for the country; currencies and languages come from babel's CLDR
data, time zones from the tz database. Nothing here invents a format by hand, so a value is
valid for its type because the library that validates it also made it.

Every function takes a ``random.Random`` (or a seeded Faker) from the caller: no global state,
no clock.
"""

from __future__ import annotations

import functools
import importlib.resources
import random
import re
import unicodedata
from dataclasses import dataclass

import phonenumbers
from babel import Locale
from babel.numbers import get_territory_currencies
from faker import Faker
from schwifty import IBAN

__all__ = [
    "COUNTRIES",
    "Country",
    "ascii_slug",
    "bank_account",
    "country",
    "faker_for",
    "org_domain",
    "phone_number",
    "time_zone",
]


@dataclass(frozen=True)
class Country:
    """A country the population lives in, with what follows from it."""

    code: str  # ISO 3166-1 alpha-2
    locale: str  # the Faker / CLDR locale its people's names and addresses come from
    weight: int  # how many of the population live there, relatively
    tld: str  # the domain ending its organisations use

    @property
    def currency(self) -> str:
        """The country's legal tender (ISO 4217), from CLDR."""
        return get_territory_currencies(self.code)[0]

    @property
    def language(self) -> str:
        """The language of the country's locale (ISO 639-1)."""
        return Locale.parse(self.locale.replace("no_", "nb_")).language  # CLDR says Bokmål, Faker 'no'

    @property
    def language_tag(self) -> str:
        """BCP 47 tag of the locale (``de-CH``)."""
        return self.locale.replace("no_", "nb_").replace("_", "-")


#: Countries with a Faker locale, an IBAN registry (except US, CA, AU) and address rules.
COUNTRIES: tuple[Country, ...] = (
    Country("US", "en_US", 20, "com"),
    Country("GB", "en_GB", 12, "co.uk"),
    Country("DE", "de_DE", 10, "de"),
    Country("FR", "fr_FR", 8, "fr"),
    Country("ES", "es_ES", 6, "es"),
    Country("IT", "it_IT", 5, "it"),
    Country("NL", "nl_NL", 5, "nl"),
    Country("CA", "en_CA", 5, "ca"),
    Country("AU", "en_AU", 4, "com.au"),
    Country("IE", "en_IE", 3, "ie"),
    Country("PT", "pt_PT", 3, "pt"),
    Country("SE", "sv_SE", 3, "se"),
    Country("AT", "de_AT", 3, "at"),
    Country("BE", "nl_BE", 3, "be"),
    Country("PL", "pl_PL", 3, "pl"),
    Country("DK", "da_DK", 2, "dk"),
    Country("FI", "fi_FI", 2, "fi"),
    Country("NO", "no_NO", 2, "no"),
    Country("CH", "de_CH", 2, "ch"),
)
_BY_CODE = {c.code: c for c in COUNTRIES}
_TRANSLIT = str.maketrans({"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ł": "l", "Ł": "L", "đ": "d"})
_LEGAL_FORMS = frozenset(
    {"gmbh", "mbh", "ag", "kg", "ohg", "gbr", "ug", "ltd", "plc", "llc", "inc", "corp", "co", "sa", "sas"}
    | {"sarl", "sl", "slne", "spa", "srl", "snc", "bv", "nv", "ab", "hb", "kb", "aps", "as", "asa", "oy"}
    | {"oyj", "ky", "sp", "oo", "sc", "vos", "lda", "gesbr", "og", "and", "und", "et", "en", "sons", "son"}
)


def country(code: str) -> Country:
    """The population country with this ISO code."""
    return _BY_CODE[code]


@functools.lru_cache(maxsize=64)
def _faker(locale: str) -> Faker:
    return Faker(locale)


def faker_for(locale: str, seed: int) -> Faker:
    """The locale's Faker, seeded: what it says next depends only on ``seed`` (and the pinned version)."""
    fake = _faker(locale)
    fake.seed_instance(seed)
    return fake


def ascii_slug(text: str, sep: str = "") -> str:
    """Lower-case ASCII letters and digits of ``text`` (``Müller-Lüdenscheidt`` -> ``mullerludenscheidt``)."""
    plain = unicodedata.normalize("NFKD", text.translate(_TRANSLIT)).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", plain.lower())
    return sep.join(words)


def org_domain(name: str, tld: str) -> str:
    """The web domain an organisation of this name would own: its name less the legal form."""
    words = ascii_slug(name, " ").split()
    core = [w for w in words if len(w) > 1 and w not in _LEGAL_FORMS] or words or ["company"]
    return f"{'-'.join(core)[:40].strip('-')}.{tld}"


def phone_number(code: str, rng: random.Random, kind: str = "mobile") -> str:
    """An E.164 number that ``phonenumbers`` holds valid for the country (the example number, re-digited)."""
    kinds = {
        "mobile": phonenumbers.PhoneNumberType.MOBILE,
        "fixed": phonenumbers.PhoneNumberType.FIXED_LINE,
    }
    example = phonenumbers.example_number_for_type(code, kinds.get(kind, kinds["mobile"]))
    if example is None:
        example = phonenumbers.example_number(code)
    if example is None:
        raise ValueError(f"phonenumbers knows no numbers of {code!r}")
    national = str(example.national_number)
    keep = max(len(national) - 6, 1)
    for _ in range(40):
        digits = national[:keep] + "".join(rng.choice("0123456789") for _ in national[keep:])
        number = phonenumbers.parse(f"+{example.country_code}{digits}")
        if phonenumbers.is_valid_number(number) and phonenumbers.region_code_for_number(number) == code:
            return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164)


def bank_account(code: str, rng: random.Random) -> tuple[str | None, str | None]:
    """(IBAN, BIC) of an account at a real bank of the country, or (None, None) where IBANs are not used."""
    for _ in range(20):
        try:
            iban = IBAN.random(country_code=code, random=rng)
        except Exception:  # schwifty has no IBAN registry for the country (US, CA, AU)
            return None, None
        bic = iban.bic
        if bic is not None and bic.country_code == code:
            return str(iban), str(bic)
    return str(iban), None


@functools.lru_cache(maxsize=1)
def _zones() -> dict[str, tuple[str, ...]]:
    """Country -> its tz database zones, from the tzdata package's ``zone.tab``."""
    text = importlib.resources.files("tzdata").joinpath("zoneinfo/zone.tab").read_text(encoding="utf-8")
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            parts = line.split("\t")
            out.setdefault(parts[0], []).append(parts[2])
    return {k: tuple(v) for k, v in out.items()}


def time_zone(code: str, rng: random.Random) -> str:
    """An IANA time zone of the country (one of its main zones for a country that spans several)."""
    zones = _zones().get(code) or ("UTC",)
    main = [z for z in zones if z.count("/") == 1] or list(zones)
    return main[0] if len(main) == 1 else rng.choice(main)
