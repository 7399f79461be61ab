"""Schema ``pattern`` strings in every dialect the corpus uses: matched with ``regex``, sampled with ``rstr``.

OpenAPI documents write ECMA-262 patterns, and in practice Java, .NET and PCRE ones too
(``\\p{L}``, ``\\p{IsLetter}``, ``\\p{Punct}``, ``\\x{60}``, ``\\z``). Python's ``re`` refuses about one
in thirty of the corpus's patterns, so matching goes through the PyPI ``regex`` package after a
small translation of the foreign spellings; a pattern that still does not compile is reported as
unusable (``None``), never raised. Sampling uses ``rstr`` on a Python-``re`` rendering of the
pattern (Unicode classes narrowed to ASCII) and keeps a sample only if the real pattern matches it.

Everything that checks or generates a pattern (the argument validator, the verifier, seed data,
the world model) goes through here, so they agree on what a pattern means.
"""

from __future__ import annotations

import functools
import random
import re
import string
from collections.abc import Iterator
from itertools import chain
from re import _parser as sre_parse  # the parser rstr samples from (private to ``re`` since 3.11)
from typing import Any

import regex
import rstr
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

__all__ = [
    "SchemaValidator",
    "compile_pattern",
    "first_error",
    "matches",
    "sample",
    "schema_validator",
    "to_regex",
]

# Java / .NET property names that ``regex`` spells differently (or not at all).
_PROPERTY_ALIASES = {
    "all": "Any",
    "ld": "Alnum",
    "javalowercase": "Ll",
    "javauppercase": "Lu",
    "javawhitespace": "White_Space",
    "javaletter": "L",
    "javadigit": "Nd",
    "javaletterordigit": "Alnum",
    "javaalphabetic": "Alphabetic",
}
_PROPERTY = re.compile(r"\\([pP])\{\^?([A-Za-z_&]+)\}")
_JS_LITERAL = re.compile(r"^/(.+)/([dgimsuy]*)$", re.DOTALL)
_HEX_BRACED = re.compile(r"\\x\{([0-9A-Fa-f]{1,6})\}")


def _property(match: re.Match[str]) -> str:
    kind, name = match.group(1), match.group(2)
    alias = _PROPERTY_ALIASES.get(name.lower())
    if alias is None and name.startswith(("Is", "In")) and len(name) > 2:
        alias = name[2:]  # Java/.NET: \p{IsLetter}, \p{InGreek}
    return f"\\{kind}{{{alias or name}}}"


def _hex(match: re.Match[str]) -> str:
    code = int(match.group(1), 16)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _literal(pattern: str) -> tuple[str, int]:
    """A JavaScript literal (``/^[0-9]{5}$/i``) as its body and flags; anything else unchanged."""
    found = _JS_LITERAL.match(pattern)
    if found is None:
        return pattern, 0
    flags = (regex.IGNORECASE if "i" in found.group(2) else 0) | (
        regex.MULTILINE if "m" in found.group(2) else 0
    )
    return found.group(1), flags | (regex.DOTALL if "s" in found.group(2) else 0)


def to_regex(pattern: str) -> str:
    """The pattern in ``regex`` syntax: braced hex escapes and Java/.NET property names rewritten."""
    return _PROPERTY.sub(_property, _HEX_BRACED.sub(_hex, _literal(pattern)[0]))


@functools.lru_cache(maxsize=8192)
def compile_pattern(pattern: str) -> regex.Pattern[str] | None:
    """The compiled pattern, or ``None`` when no dialect reading of it compiles."""
    body, flags = _literal(pattern)
    for candidate in (body, to_regex(pattern)):
        try:
            return regex.compile(candidate, flags | regex.VERSION0)
        except (regex.error, ValueError, TypeError, OverflowError):
            continue
    return None


def matches(pattern: str, value: str) -> bool | None:
    """JSON-schema semantics (a match anywhere); ``None`` when the pattern is unusable."""
    compiled = compile_pattern(pattern)
    if compiled is None:
        return None
    try:
        return compiled.search(value, timeout=0.5) is not None
    except TimeoutError:  # catastrophic backtracking on a hostile value: treat as no verdict
        return None


# -- sampling ----------------------------------------------------------------------------------

# ASCII stand-ins for Unicode properties, used only to *generate* candidates (checked afterwards).
_SAMPLE_CLASSES = {
    "l": "a-zA-Z",
    "lu": "A-Z",
    "ll": "a-z",
    "lt": "A-Z",
    "alpha": "a-zA-Z",
    "alphabetic": "a-zA-Z",
    "letter": "a-zA-Z",
    "n": "0-9",
    "nd": "0-9",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "ld": "a-zA-Z0-9",
    "p": r"!\"#%&'()*,\-./:;?@\[\\\]_{}",
    "punct": r"!\"#%&'()*,\-./:;?@\[\\\]_{}",
    "s": r"$+<=>^`|~",
    "z": " ",
    "zs": " ",
    "space": " ",
    "white_space": " ",
    "all": "a-zA-Z0-9 ",
    "any": "a-zA-Z0-9 ",
}
_REPEAT_LIMIT = 100
_CLASS = re.compile(r"\[(?:\\.|[^\]\\])*\]")
_SHORTHAND_RANGE = re.compile(r"(\\[wWdDsS])-")
_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")


def _sample_class(name: str, negated: bool) -> str:
    chars = _SAMPLE_CLASSES.get(name.lower().removeprefix("is"), "a-z")
    return "0-9 " if negated and chars.startswith("a") else chars


def _python_re(pattern: str) -> str:
    """A rendering Python's ``re`` parser accepts, for ``rstr`` to sample from."""
    body, flags = _literal(pattern)
    text = _HEX_BRACED.sub(_hex, body).replace("\\z", "\\Z")
    if flags & regex.IGNORECASE:
        text = "(?i)" + text
    text = _NAMED_GROUP.sub("(?P<", text)

    def fix_class(match: re.Match[str]) -> str:
        body = _SHORTHAND_RANGE.sub(r"\1\\-", match.group(0))
        return _PROPERTY.sub(lambda m: _sample_class(m.group(2), m.group(1) == "P"), body)

    text = _CLASS.sub(fix_class, text)
    return _PROPERTY.sub(lambda m: "[" + _sample_class(m.group(2), m.group(1) == "P") + "]", text)


@functools.lru_cache(maxsize=4096)
def _parsed(pattern: str) -> Any:
    try:
        return sre_parse.parse(_python_re(pattern))
    except (re.error, ValueError, TypeError, OverflowError, RecursionError):
        return None


#: rstr's ``\W`` alphabet in a fixed order (rstr joins a set: its order changed with PYTHONHASHSEED).
_NONWORD = "".join(sorted(set(string.printable).difference(string.ascii_letters + string.digits + "_")))


class _Sampler(rstr.Rstr):
    """``rstr``'s generator with each character class expanded once, not once per drawn character.

    Draws the same random choices from the same candidates as ``rstr.Rstr.xeger`` would, except
    that a negated class and ``\\W`` draw from their characters in sorted order: rstr drew them
    from a set, whose order depends on the process's string hash seed, so the same seed gave
    another value in another process (a resumed or parallel build another seed.json).
    """

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self._alphabets["nonword"] = _NONWORD
        self._classes: dict[str, list[Any]] = {}

    def _handle_in(self, value: Any) -> Any:
        key = repr(value)
        candidates = self._classes.get(key)
        if candidates is None:
            candidates = list(chain(*(self._handle_state(i) for i in value)))
            if candidates and candidates[0] is False:
                candidates = sorted(set(string.printable).difference(candidates[1:]))
            self._classes[key] = candidates
        return self._random.choice(candidates)

    def _handle_repeat(self, start_range: int, end_range: int, value: Any) -> str:
        # rstr caps every repeat at 100, so a pattern asking for more (``{128}``) could never match
        times = self._random.randint(start_range, min(end_range, max(start_range, _REPEAT_LIMIT)))
        return "".join("".join(self._handle_state(i) for i in value) for _ in range(times))

    def build(self, parsed: Any) -> str:
        try:
            return self._build_string(parsed)
        finally:
            self._cache.clear()


# -- the sampler compiled once per pattern ----------------------------------------------------------
#
# ``_Sampler`` walks the parsed pattern on every draw, dispatching on each state's opcode name; seed
# data draws thousands of strings from the same few patterns, and that walk was an eighth of a
# corpus build. ``_compile`` turns the parsed pattern into nested closures once, each making exactly
# the random draws ``_Sampler`` makes, in the same order (tests/test_patterns.py compares both on
# every pattern of a corpus sample, value and generator state after the draw). A state it does not
# compile is run by a ``_Sampler`` on the same generator and group store, so it fails where and as
# ``_Sampler`` fails.

_Node = Any  # Callable[[_Draw], str]
_ANY = [c for c in string.printable if c != "\n"]


class _Draw:
    """One draw's generator and captured groups (and, only if needed, a ``_Sampler`` sharing both)."""

    __slots__ = ("_sampler", "groups", "rng")

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.groups: dict[Any, str] = {}
        self._sampler: _Sampler | None = None

    def sampler(self) -> _Sampler:
        if self._sampler is None:
            self._sampler = _Sampler(self.rng)
            self._sampler._cache = self.groups
        return self._sampler


def _seq(nodes: list[_Node]) -> _Node:
    if len(nodes) == 1:
        return nodes[0]
    return lambda d: "".join([n(d) for n in nodes])


def _compile_state(state: Any) -> _Node:
    opcode, value = state
    name = opcode.name.lower()
    if name == "literal":
        char = chr(value)
        return lambda d: char
    if name == "in":
        try:
            probe = _Sampler(random.Random(0))
            candidates = list(chain(*(probe._handle_state(i) for i in value)))
            if candidates and candidates[0] is False:
                candidates = sorted(set(string.printable).difference(candidates[1:]))
        except Exception:  # left to the sampler, which fails at the same point
            return _delegate(state)
        return lambda d: d.rng.choice(candidates)
    if name in ("max_repeat", "min_repeat"):
        low, high, body = value
        top = min(high, max(low, _REPEAT_LIMIT))
        inner = _seq([_compile_state(i) for i in body]) if len(body) else (lambda d: "")
        return lambda d: "".join([inner(d) for _ in range(d.rng.randint(low, top))])
    if name == "subpattern":
        group = value[0]
        inner = _seq([_compile_state(i) for i in value[-1]]) if len(value[-1]) else (lambda d: "")
        if not group:
            return inner

        def capture(d: _Draw) -> str:
            result = inner(d)
            d.groups[group] = result
            return result

        return capture
    if name == "branch":
        alternatives = [_seq([_compile_state(i) for i in alt]) if alt else (lambda d: "") for alt in value[1]]
        return lambda d: d.rng.choice(alternatives)(d)
    if name == "any":  # rstr: ``printable(1, exclude="\n")``, one choice (shuffling one item draws nothing)
        return lambda d: d.rng.choice(_ANY)
    if name == "not_literal":
        others = string.printable.replace(chr(value), "")
        return lambda d: d.rng.choice(others)
    if name in ("at", "assert_not"):
        return lambda d: ""
    if name == "groupref":
        return lambda d: d.groups[value]
    return _delegate(state)


def _delegate(state: Any) -> _Node:
    return lambda d: d.sampler()._handle_state(state)


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> _Node | None:
    parsed = _parsed(pattern)
    if parsed is None:
        return None
    try:
        nodes = [_compile_state(s) for s in parsed]
    except RecursionError:
        return _delegate_all(parsed)
    return lambda d: "".join([n(d) for n in nodes])


def _delegate_all(parsed: Any) -> _Node:
    return lambda d: d.sampler()._build_string(parsed)


def sample(pattern: str, rng: random.Random) -> str | None:
    """A string the pattern matches, drawn with ``rng``; ``None`` when none could be produced."""
    draw = _compiled(pattern)
    if draw is None:
        return None
    try:
        value = draw(_Draw(rng))
    except (IndexError, KeyError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    return value if matches(pattern, value) else None


def sample_walked(pattern: str, rng: random.Random) -> str | None:
    """``sample`` as it was before compiling: ``_Sampler`` walking the parsed pattern (for the tests)."""
    parsed = _parsed(pattern)
    if parsed is None:
        return None
    try:
        value = _Sampler(rng).build(parsed)
    except (IndexError, KeyError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    return value if matches(pattern, value) else None


# -- JSON schema validation --------------------------------------------------------------------


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and matches(pattern, instance) is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


#: Draft 2020-12 with ``pattern`` / ``patternProperties`` read in every dialect.
SchemaValidator: type[Validator] = validators.extend(
    Draft202012Validator, {"pattern": _pattern, "patternProperties": _pattern_properties}
)


@functools.lru_cache(maxsize=4096)
def _cached_validator(key: str) -> Validator:
    import json

    return SchemaValidator(json.loads(key))


def schema_validator(schema: dict[str, Any]) -> Validator | None:
    """A (cached) validator for a schema; ``None`` when the schema cannot even be serialised.

    The schema is not checked against the metaschema up front (that cost a fifth of a corpus
    build): a schema that turns out to be invalid while validating gives no verdict, see
    ``first_error``.
    """
    import json

    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return None
    return _cached_validator(key)


def first_error(validator: Validator, instance: Any) -> ValidationError | None:
    """The first validation error, or ``None``; a schema quirk found on the way counts as no error."""
    try:
        return next(iter(validator.iter_errors(instance)), None)
    except Exception:  # SchemaError, UnknownType, an unresolvable $ref, a keyword of the wrong type
        return None
