"""Type-aware reading of a free-text answer: does it state this value, and does it state too much?

A grade is right or it is an error, so an answer is read the way a person would read it:

- numbers by value ("$1,234.50" states 1234.5; "three" states 3), at the precision the
  expected value needs (1234.5 is not stated by "1235");
- dates and times by what they denote ("2025-05-01T00:00:00Z" and "1 May 2025" state the
  day 2025-05-01; a time must name the same instant);
- codes and their labels as the same thing ("German" states ``de``, "Germany" ``DE``,
  "Euro" ``EUR``), through pycountry and babel rather than hand lists;
- words on word boundaries ("Customer added." does not state ``de``);
- an answer that lists every value it saw (a JSON dump of the records) states nothing: it
  fails ``is_dump``, and one that also states a rival of the expected value is hedging.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import itertools
import math
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import pycountry
import regex
from babel import Locale, UnknownLocaleError
from babel.dates import get_month_names
from babel.numbers import get_currency_name

__all__ = [
    "AnswerKind",
    "CodeType",
    "code_labels",
    "decimals_needed",
    "is_dump",
    "kind_of",
    "normalize",
    "numbers_in",
    "phrase_in",
    "states",
    "value_tokens",
]

AnswerKind = Literal["number", "date", "datetime", "code", "text", "bool"]
CodeType = Literal["language", "country", "currency"]

_SPACES = regex.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
# a number not glued to a word, a code ("INV-1116"), a date ("2025-05-01") or a time ("17:45")
_NUMBER = regex.compile(
    r"(?<![\p{L}\p{N}_./:\-])(?:(?<=^|[\s(\[$€£¥:=])[-+])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    r"(?![\p{L}\p{N}_]|[.:/\-]\d|,\d{3})"
)
_SMALL = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_NUMBER = regex.compile(
    r"(?<![\p{L}-])(" + "|".join(_TENS) + r")(?:-(" + "|".join(_SMALL[1:10]) + r"))?(?![\p{L}-])"
    r"|(?<![\p{L}-])(" + "|".join(_SMALL) + r")(?![\p{L}-])"
)
_ISO = regex.compile(
    r"(?<!\d)(\d{4})[-/](\d{2})[-/](\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})?)?(?!\d)"
)
_TIME_AFTER = regex.compile(
    r"^\s*(?:,|at|@)?\s*(\d{1,2})(?::(\d{2}))?(?::\d{2})?\s*(am|pm|a\.m\.|p\.m\.)?\s*(z|utc|gmt|[+-]\d{2}:?\d{2})?",
)
_EMAIL = regex.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_JSON_KEY = regex.compile(r"[\"']?[A-Za-z_][\w.-]*[\"']?\s*[:=]\s*(?=[\"'\[{\d\w-])")


#: texts up to this long are read once per run (graders read the same values and answers over and over);
#: longer ones (a dump of whole tables) each time
_MEMO_LEN = 2048


def normalize(text: str) -> str:
    """NFKC, case-folded, typographic quotes straightened, whitespace collapsed."""
    return _normalize_short(text) if len(text) <= _MEMO_LEN else _normalize(text)


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return _SPACES.sub(" ", text).strip()


_normalize_short = functools.lru_cache(maxsize=32768)(_normalize)


def phrase_in(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words (both normalised)."""
    needle = normalize(phrase)
    if not needle:
        return False
    pattern = rf"(?<![\p{{L}}\p{{N}}]){regex.escape(needle)}(?![\p{{L}}\p{{N}}])"
    return regex.search(pattern, normalize(text)) is not None


# -- numbers -----------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def numbers_in(text: str) -> list[tuple[float, int]]:
    """(value, decimals shown) of every number written in ``text``, in digits or as a small word."""
    return list(_numbers_short(text)) if len(text) <= _MEMO_LEN else list(_numbers(text))


@functools.lru_cache(maxsize=16384)
def _numbers_short(text: str) -> tuple[tuple[float, int], ...]:
    return tuple(_numbers(text))


def _numbers(text: str) -> Iterator[tuple[float, int]]:
    for match in _NUMBER.finditer(text):
        raw = match.group(0).replace(",", "")
        try:
            yield float(raw), len(raw.split(".", 1)[1]) if "." in raw else 0
        except ValueError:
            continue
    for match in _WORD_NUMBER.finditer(normalize(text)):
        tens, unit, small = match.group(1), match.group(2), match.group(3)
        if small:
            yield float(_SMALL.index(small)), 0
        else:
            yield float((_TENS.index(tens) + 2) * 10 + (_SMALL.index(unit) if unit else 0)), 0


def decimals_needed(value: float) -> int:
    """Decimals an answer must show for ``value`` (its own, at most two: 1234.5 -> 1, 3 -> 0)."""
    for places in range(3):
        if math.isclose(value, round(value, places), abs_tol=1e-9):
            return places
    return 2


def _number_stated(text: str, expected: float) -> bool:
    need = decimals_needed(expected)
    for value, shown in _numbers(text):
        if shown >= need and abs(value - expected) <= 0.5 * 10**-shown + 1e-9:
            return True
    return False


# -- dates -------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _months() -> dict[str, int]:
    names: dict[str, int] = {}
    for width in ("wide", "abbreviated"):
        for number, name in get_month_names(width, locale="en").items():
            names[normalize(str(name)).rstrip(".")] = int(number)
    names["sept"] = 9
    return names


@functools.lru_cache(maxsize=1)
def _month_patterns() -> tuple[regex.Pattern[str], regex.Pattern[str]]:
    month = "(" + "|".join(sorted(_months(), key=len, reverse=True)) + r")\.?"
    day = r"(\d{1,2})(?:st|nd|rd|th)?"
    day_first = regex.compile(rf"(?<!\d){day}\s+(?:of\s+)?{month},?\s+(\d{{4}})(?!\d)")
    month_first = regex.compile(rf"(?<![\p{{L}}]){month}\s+{day},?\s+(\d{{4}})(?!\d)")
    return day_first, month_first


def _offset(zone: str | None) -> dt.tzinfo:
    if not zone or zone.lower() in ("z", "utc", "gmt"):
        return dt.UTC
    sign = 1 if zone[0] == "+" else -1
    digits = zone[1:].replace(":", "")
    return dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


def _clock(hour: int, minute: int, meridiem: str | None) -> tuple[int, int] | None:
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem.startswith("p") else 0)
    return (hour, minute) if hour < 24 and minute < 60 else None


def _stamps(text: str) -> Sequence[tuple[dt.date, dt.datetime | None]]:
    """Every (day, instant-or-None) written in ``text``: ISO forms and "1 May 2025 at 9:30 am"."""
    return _stamps_short(text) if len(text) <= _MEMO_LEN else _read_stamps(text)


def _read_stamps(text: str) -> tuple[tuple[dt.date, dt.datetime | None], ...]:
    out: list[tuple[dt.date, dt.datetime | None]] = []
    for m in _ISO.finditer(text):
        try:
            day = dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            continue
        instant = None
        if m[4] is not None:
            instant = dt.datetime(day.year, day.month, day.day, int(m[4]), int(m[5]), int(m[6] or 0))
            instant = instant.replace(tzinfo=_offset(m[7]))
        out.append((day, instant))
    norm = normalize(text)
    day_first, month_first = _month_patterns()
    for pattern, order in ((day_first, (1, 2, 3)), (month_first, (2, 1, 3))):
        for m in pattern.finditer(norm):
            try:
                day = dt.date(int(m[order[2]]), _months()[m[order[1]]], int(m[order[0]]))
            except (ValueError, KeyError):
                continue
            instant = None
            clock = _TIME_AFTER.match(norm[m.end() :])
            if clock and (clock[2] is not None or clock[3] is not None):
                hm = _clock(int(clock[1]), int(clock[2] or 0), clock[3])
                if hm is not None:
                    instant = dt.datetime(day.year, day.month, day.day, *hm, tzinfo=_offset(clock[4]))
            out.append((day, instant))
    return tuple(out)


_stamps_short = functools.lru_cache(maxsize=16384)(_read_stamps)


@functools.lru_cache(maxsize=32768)
def parse_stamp(value: str) -> tuple[dt.date, dt.datetime | None] | None:
    """An ISO date or date-time value as (day, instant-or-None); None if it is neither."""
    found = _ISO.fullmatch(value.strip())
    return _stamps(value)[0] if found else None


def _date_stated(text: str, day: dt.date) -> bool:
    return any(d == day for d, _ in _stamps(text))


def _instant_stated(text: str, instant: dt.datetime) -> bool:
    for day, stated in _stamps(text):
        if stated is not None and stated == instant:
            return True
        midnight = instant.astimezone(dt.UTC).time() == dt.time(0, 0)
        if stated is None and midnight and day == instant.astimezone(dt.UTC).date():
            return True
    return False


# -- codes -------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def code_labels(code: str, code_type: CodeType) -> tuple[str, ...]:
    """The English names a code goes by (``de`` -> German; ``DE`` -> Germany; ``EUR`` -> Euro)."""
    labels: list[str] = []
    clean = code.strip()
    if code_type == "language":
        base = clean.replace("-", "_").split("_", 1)[0].lower()
        record = pycountry.languages.get(alpha_2=base) if len(base) == 2 else None
        record = record or (pycountry.languages.get(alpha_3=base) if len(base) == 3 else None)
        if record is not None:
            labels.append(record.name)
        with contextlib.suppress(UnknownLocaleError, ValueError, TypeError):
            labels.append(str(Locale.parse(clean.replace("-", "_")).get_display_name("en")))
    elif code_type == "country":
        upper = clean.upper()
        record = pycountry.countries.get(alpha_2=upper) if len(upper) == 2 else None
        record = record or (pycountry.countries.get(alpha_3=upper) if len(upper) == 3 else None)
        if record is not None:
            labels += [
                getattr(record, a) for a in ("name", "common_name", "official_name") if hasattr(record, a)
            ]
            territory = Locale("en").territories.get(record.alpha_2)
            if territory:
                labels.append(str(territory))
    elif code_type == "currency":
        upper = clean.upper()
        record = pycountry.currencies.get(alpha_3=upper) if len(upper) == 3 else None
        if record is not None:
            labels.append(record.name)
            name = get_currency_name(upper, locale="en")
            if name and name != upper:
                labels.append(str(name))
    return tuple(dict.fromkeys(label for label in labels if label and label.lower() != clean.lower()))


# -- the entry points --------------------------------------------------------------------


def kind_of(value: Any, semantic: str | None = None, fmt: str | None = None) -> AnswerKind:
    """How a value is read in an answer, from the value and its column's semantic type or format."""
    if isinstance(value, bool):
        return "bool"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        stamp = parse_stamp(value)
        if stamp is not None:
            return "datetime" if stamp[1] is not None and (fmt or semantic) in ("date-time", None) else "date"
        if semantic in ("language", "country", "currency"):
            return "code"
    return "text"


def _text_variants(value: str) -> list[str]:
    out = [value]
    if regex.search(r"[_-]", value) and " " not in value:
        out.append(regex.sub(r"[_-]+", " ", value))
    return out


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def states(
    answer: str, value: Any, kind: AnswerKind | None = None, code_type: CodeType | None = None
) -> bool:
    """Whether a free-text answer states ``value`` (read as ``kind``)."""
    if value is None or answer is None:
        return False
    kind = kind or kind_of(value)
    if kind == "number":
        number = float(value) if _is_number(value) else _as_float(value)
        return number is not None and _number_stated(answer, number)
    if kind == "bool":
        truthy = value if isinstance(value, bool) else str(value).lower() in ("true", "yes", "1")
        words = ("yes", "true") if truthy else ("no", "false")
        others = ("no", "false") if truthy else ("yes", "true")
        return any(phrase_in(answer, w) for w in words) and not any(phrase_in(answer, w) for w in others)
    text = str(value)
    if kind in ("date", "datetime"):
        stamp = parse_stamp(text)
        if stamp is None:
            return phrase_in(answer, text)
        day, instant = stamp
        if kind == "datetime" and instant is not None:
            return _instant_stated(answer, instant)
        return _date_stated(answer, day)
    if kind == "code" and code_type is not None:
        return phrase_in(answer, text) or any(
            phrase_in(answer, label) for label in code_labels(text, code_type)
        )
    if _EMAIL.fullmatch(text.strip()):
        return phrase_in(answer, text.strip())
    if text.startswith("+") and len(_digits(text)) >= 7 and len(_digits(text)) >= len(text) - 6:
        phones = regex.findall(r"\+?[\d][\d\s().-]{6,}\d", answer)
        return any(_digits(p).endswith(_digits(text)[-9:]) for p in phones)
    return any(phrase_in(answer, v) for v in _text_variants(text))


def _as_float(value: Any) -> float | None:
    try:
        number = float(str(value).replace(",", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _tokens(answer: str) -> Iterator[None]:
    """One item per value the answer lists, cheapest scans first (a caller may stop early)."""
    for _ in _JSON_KEY.finditer(answer):
        yield None
    for _ in _EMAIL.finditer(answer):
        yield None
    for _ in _numbers(answer):
        yield None


def value_tokens(answer: str, limit: int | None = None) -> int:
    """How many values an answer lists: numbers, e-mail addresses and ``key: value`` pairs.

    With ``limit`` the count stops once it passes the limit: a dump of whole tables is known to
    be one after a few dozen matches, not after scanning all of it.
    """
    tokens = _tokens(answer)
    return sum(1 for _ in (tokens if limit is None else itertools.islice(tokens, limit + 1)))


def is_dump(answer: str, asked: int) -> bool:
    """An answer listing far more values than were asked for (a record or result dump)."""
    return _is_dump_short(answer, asked) if len(answer) <= _MEMO_LEN else _is_dump(answer, asked)


def _is_dump(answer: str, asked: int) -> bool:
    limit = max(10, 4 * max(1, asked))
    return value_tokens(answer, limit) > limit


#: every answer criterion of a run asks this of the same answer
_is_dump_short = functools.lru_cache(maxsize=8192)(_is_dump)


def any_stated(
    answer: str, values: Iterable[Any], kind: AnswerKind | None, code_type: CodeType | None
) -> Any:
    """The first of ``values`` the answer states, or None."""
    for value in values:
        if states(answer, value, kind, code_type):
            return value
    return None


def rivals_excluding(expected: Any, rivals: Sequence[Any], kind: AnswerKind | None) -> list[Any]:
    """Rivals that are not themselves a way of stating ``expected``."""
    out: list[Any] = []
    for rival in rivals:
        if rival is None or normalize(str(rival)) == normalize(str(expected)):
            continue
        tolerance = 10 ** -decimals_needed(float(expected)) / 2 if _is_number(expected) else 0.0
        numbers = kind == "number" and _is_number(rival) and _is_number(expected)
        if numbers and math.isclose(float(rival), float(expected), abs_tol=tolerance):
            continue
        out.append(rival)
    return out
