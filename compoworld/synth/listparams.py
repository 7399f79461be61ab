"""Bind every declared parameter of a list/search tool to what it does to the rows, or refuse it.

A real list endpoint's query parameters filter (``status=active``, ``ids=1,2``), bound a range
(``created_after``, ``min_price``, ``from_date``, ``q[total_gteq]``), search text (``q``,
``name_contains``), order (``sort=-created_at``, ``order=desc``) and page (``limit``, ``offset``,
``page``, ``cursor``, ``starting_after``). Synthesis reads each parameter's name (the spec's own
spelling, brackets and all) and type once, here, and records the binding in the tool's manifest:

- equality filters in ``ToolDef.arg_columns``, free text, page size and offset/page in
  ``search_arg``/``limit_arg``/``offset_arg``;
- everything else in ``ToolDef.listing`` (``ListBinding``): ranges, substring and set filters,
  sort field and order, cursors, declared defaults, and the parameters that cannot be bound,
  each with the reason. The runtime refuses a refused parameter by name whenever a caller gives it
  a value other than its declared default: nothing a caller sends is silently ignored.

The names recognised are the spellings the corpus uses (Rails' Ransack predicates ``_cont``,
``_gteq``, ``_true``; Stripe's ``starting_after``; JSON:API's ``page[size]``; OData-like ``$top``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pycountry

from compoworld.manifest import ColumnDef, EntityDef, ListBinding, ListFilter
from compoworld.runtime.listquery import OPERATORS, sort_terms
from compoworld.specs.model import FieldSpec
from compoworld.specs.shapes import json_type
from compoworld.specs.words import split_words
from compoworld.synth.filterexprs import expressions_of
from compoworld.synth.naming import match_key

__all__ = ["LIMIT_KEYS", "OFFSET_KEYS", "SEARCH_KEYS", "ListBinder", "json_choices", "language_choices"]

SEARCH_KEYS = frozenset(
    {"q", "query", "search", "term", "keyword", "keywords", "text", "searchterm", "searchtext", "searchquery"}
    | {"searchstring", "filter", "fulltext", "freetext", "querystring", "qs", "searchfor", "find"}
)
LIMIT_KEYS = frozenset(
    {"limit", "perpage", "pagesize", "maxresults", "max", "top", "size", "count", "pagelimit", "maxitems"}
    | {"numresults", "resultsperpage", "maxrecords", "take", "first", "rows", "maxcount", "displaysize"}
    | {"returncount", "pagelength", "resultlimit", "itemsperpage", "recordsperpage", "limitto", "number"}
)
OFFSET_KEYS = frozenset(
    {"offset", "skip", "start", "startindex", "page", "pagenumber", "pageno", "pageindex", "from"}
    | {"startat", "startrecord", "firstresult", "pagenum", "currentpage", "startposition"}
)
_CURSOR_KEYS = frozenset(
    {"cursor", "pagetoken", "nextpagetoken", "nexttoken", "continuationtoken", "startingafter", "marker"}
    | {"iterator", "pagecursor", "pageafter", "after", "nextcursor", "startafter", "continuation"}
    | {"afterid", "startkey", "exclusivestartkey", "nextmarker", "offsettoken", "token", "next"}
)
_BEFORE_KEYS = frozenset({"endingbefore", "before", "pagebefore", "beforeid", "prevcursor", "previouscursor"})
_SORT_KEYS = frozenset(
    {"sort", "sortby", "orderby", "sortfield", "ordering", "sortkey", "sortcolumn", "sorton", "sorting"}
    | {"order", "orderfield", "sortparam", "sorts"}
)
_ORDER_KEYS = frozenset(
    {"sortorder", "sortdirection", "sortdir", "direction", "dir", "orderdirection", "orderdir", "desc"}
    | {"order", "sortasc", "ascending", "descending", "sortingorder", "sortmode"}
)
#: Heads of a page-size name spelt out (``numberOfGames``, ``maxNumberOfResults``).
_COUNT_OF = ("numberof", "maxnumberof", "numof", "countof")
_DIRECTIONS = frozenset({"asc", "desc", "ascending", "descending", "1", "-1"})
#: Words that wrap a filter's name (``q[model_cont]``, ``filter[status]``, ``where[name]``).
_WRAPPERS = frozenset({"q", "filter", "filters", "where", "search", "query", "f"})
#: A range bound's word, where it sits, and the comparison (the rest of the name is the column).
_LOWER_WORDS = {"min": "gte", "from": "gte", "since": "gte", "gte": "gte", "gteq": "gte", "start": "gte"}
_LOWER_WORDS |= {"after": "gt", "gt": "gt", "greater": "gt", "newer": "gt", "above": "gt", "over": "gte"}
_UPPER_WORDS = {"max": "lte", "to": "lte", "until": "lte", "till": "lte", "lte": "lte", "lteq": "lte"}
_UPPER_WORDS |= {"end": "lte", "before": "lt", "lt": "lt", "less": "lt", "older": "lt", "below": "lt"}
_TEXT_WORDS = {"cont": "contains", "contains": "contains", "like": "contains", "matches": "contains"}
_TEXT_WORDS |= {"includes": "contains", "start": "prefix", "startswith": "prefix", "end": "suffix"}
_TEXT_WORDS |= {"endswith": "suffix", "prefix": "prefix", "suffix": "suffix"}
_FLAG_WORDS = {"true": "is_true", "false": "is_false"}
#: Paging names that mean nothing else: bound before the ambiguous ones (``start``, ``from``, ``count``).
_PLAIN_PAGING = frozenset(
    {"limit", "offset", "page", "pagesize", "perpage", "pagenumber", "displaysize", "pagelimit", "pageno"}
)
_BOUND_HEADS = ("from", "to", "min", "max", "since", "until", "start", "end", "before", "after")
_TIME_TAILS = frozenset({"date", "time", "datetime", "timestamp"})
_FILLER = frozenset({"than", "or", "equal", "eq", "equals", "is", "on", "date", "time", "at", "by"})
#: Column words that make a column the entity's "when" (for ``from_date``, ``since``, ``before``).
_WHEN = ("created", "date", "time", "timestamp", "updated", "modified", "when", "at", "on")


#: Names of response formats a parameter may choose between (``/{format}/Games``: ``XML`` or ``JSON``).
_FORMATS = frozenset(
    {"json", "xml", "csv", "yaml", "yml", "html", "txt", "text", "jsonp", "atom", "rss", "tsv"}
)


def json_choices(p: FieldSpec) -> list[Any] | None:
    """The values of a response-format selector that ask for JSON (None: ``p`` selects no format).

    A parameter whose enum is only format names, JSON among them (sportsdata's ``{format}``), chooses
    the wire format, not rows: the service answers JSON, so it takes the JSON values and refuses the rest.
    """
    values = p.json_schema.get("enum")
    if not isinstance(values, list) or not values or json_type(p.json_schema) not in ("string", None):
        return None
    names = [str(v).lower() for v in values]
    if not all(n in _FORMATS for n in names) or "json" not in names:
        return None
    return [v for v, n in zip(values, names, strict=True) if n == "json"]


#: Names of a parameter that chooses the language of the answer's text (``lang=cy``, ``language=fr``).
_LANGUAGE_KEYS = frozenset(
    {"lang", "language", "locale", "languagecode", "langcode", "hl", "uilang", "uilanguage"}
    | {"displaylanguage", "responselanguage", "outputlanguage", "contentlanguage", "acceptlanguage"}
)
#: The language every service's seed text is written in.
CONTENT_LANGUAGE = "en"


def _language_of(value: object) -> str | None:
    """The ISO 639 language of a language or locale code (``en``, ``en-GB``, ``pt_BR``, ``eng``)."""
    head = re.split(r"[-_]", str(value))[0].lower() if isinstance(value, str) else ""
    found = None
    if len(head) == 2:
        found = pycountry.languages.get(alpha_2=head)
    elif len(head) == 3:
        found = pycountry.languages.get(alpha_3=head)
    return str(getattr(found, "alpha_2", None) or found.alpha_3) if found is not None else None


def language_choices(p: FieldSpec) -> list[Any] | None:
    """The values of a content-language selector that ask for the language the service holds its
    text in (None: ``p`` selects no language).

    A parameter named for a language (``lang``, ``locale``) whose enum is only language codes
    (BBC iBL's ``lang: en|cy|ga|gd|pi``) chooses the language of the answer's strings, not rows. The
    state holds one language, so the tool takes that language's values and refuses the rest (as a
    format selector takes JSON) rather than answering Welsh with English text. A parameter that
    names a column of the entity is a filter, not a selector: callers bind columns first.
    """
    values = p.json_schema.get("enum")
    if not isinstance(values, list) or not values or json_type(p.json_schema) not in ("string", None):
        return None
    if match_key(p.original_name or p.name) not in _LANGUAGE_KEYS:
        return None
    languages = [_language_of(v) for v in values]
    if any(lang is None for lang in languages):
        return None
    served = [v for v, lang in zip(values, languages, strict=True) if lang == CONTENT_LANGUAGE]
    return served or None


def _words(p: FieldSpec) -> list[str]:
    words = split_words(p.original_name or p.name)
    if len(words) > 1 and words[0] in _WRAPPERS and p.original_name and "[" in p.original_name:
        words = words[1:]
    out: list[str] = []
    for word in words or split_words(p.name):  # ``fromdate``, ``todate``, ``mindate``: two words in one
        head = next((b for b in _BOUND_HEADS if word.startswith(b) and word[len(b) :] in _TIME_TAILS), None)
        out += [head, word[len(head) :]] if head else [word]
    return out


def _type(p: FieldSpec) -> str | None:
    return json_type(p.json_schema)


def _is_count(p: FieldSpec, key: str) -> bool:
    """An integer, or text that carries one where the name can mean nothing else (``page: "2"``)."""
    kind = _type(p)
    return kind in ("integer", "number") or (
        kind == "string"
        and (key in _PLAIN_PAGING or key.startswith(_COUNT_OF))
        and not p.json_schema.get("enum")
        and not p.json_schema.get("format")
    )


def _is_text(p: FieldSpec) -> bool:
    return _type(p) in ("string", None) and "enum" not in p.json_schema


def _is_dateish(p: FieldSpec) -> bool:
    fmt = str(p.json_schema.get("format") or "")
    return fmt in ("date", "date-time") or any(w in ("date", "time", "at") for w in split_words(p.name))


def _enum_text(p: FieldSpec) -> set[str]:
    values = p.json_schema.get("enum") or (p.json_schema.get("items") or {}).get("enum") or []
    return {str(v).lower().lstrip("+-") for v in values if v is not None}


def _column_date(column: ColumnDef) -> bool:
    return column.format in ("date", "date-time") or (
        column.type in ("string", "integer") and any(w in _WHEN for w in split_words(column.name)[-1:])
    )


def _comparable(column: ColumnDef) -> bool:
    return (
        column.type in ("integer", "number")
        or _column_date(column)
        or (column.type == "string" and column.format in ("date", "date-time"))
    )


def _singular_key(key: str) -> list[str]:
    out = [key]
    if key.endswith("ies"):
        out.append(key[:-3] + "y")
    if key.endswith("es"):
        out.append(key[:-2])
    if key.endswith("s"):
        out.append(key[:-1])
    return out


@dataclass
class ListBinder:
    """Binds the declared parameters of one list/search tool to its entity (``bind``)."""

    entity: EntityDef
    scoped: dict[str, str]
    arg_columns: dict[str, str] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    listing: ListBinding = field(default_factory=ListBinding)
    problem: str | None = None

    def __post_init__(self) -> None:
        self.arg_columns = dict(self.scoped)

    # -- columns ----------------------------------------------------------------------

    def column(self, key: str, *, when: bool = False) -> ColumnDef | None:
        """The column a match key names (``createdat`` also as ``created``); ``when``: a date column."""
        if not key and when:
            return self.when_column()
        own = match_key(self.entity.name)
        for candidate in [*_singular_key(key), *(own + k for k in _singular_key(key) if key)]:
            for c in self.entity.columns:
                if match_key(c.source_name or c.name) == candidate or match_key(c.name) == candidate:
                    return c
        if when or key:
            for suffix in ("at", "date", "time", "on", "timestamp", "datetime"):
                for c in self.entity.columns:
                    if match_key(c.source_name or c.name) == key + suffix:
                        return c
        if when and key in ("date", "time", "datetime", "timestamp"):
            return self.when_column()
        if key.endswith("id") and len(key) > 4:  # ``branchID`` filters on the row's scalar ``Branch``
            return next(
                (
                    c
                    for c in self.entity.columns
                    if match_key(c.source_name or c.name) == key[:-2] and c.type in ("string", "integer")
                ),
                None,
            )
        return None

    def when_column(self) -> ColumnDef | None:
        """The entity's own time: its creation stamp, else its first date column."""
        dates = [c for c in self.entity.columns if c.type != "json" and _column_date(c)]
        for word in ("created", "date", "timestamp", "time"):
            found = next((c for c in dates if word in split_words(c.name)), None)
            if found is not None:
                return found
        return dates[0] if dates else None

    # -- the parameters -----------------------------------------------------------------

    def bind(self, params: list[FieldSpec]) -> None:
        for p in sorted(params, key=lambda q: "".join(_words(q)) not in _PLAIN_PAGING):
            if p.name in self.scoped or (p.required and json_choices(p) is not None):
                continue  # a scope, or a required response format (its JSON values only, by schema)
            reason = self._bind_one(p)
            served = language_choices(p) if reason is not None else None
            if served is not None:  # the answer's language: the state's own only (by schema, default)
                self.listing.refused[p.name] = (
                    f"chooses the language of the answer's text, which this service holds in {served[0]!r} only"
                )
                continue
            if reason is None:
                if p.json_schema.get("default") is not None and self._applies_default(p):
                    self.listing.defaults[p.name] = p.json_schema["default"]
                continue
            if p.required and p.json_schema.get("default") is None and p.location == "header":
                self.listing.headers.append(p.name)  # ``App-Key``: a credential, not a filter
            elif p.required and p.json_schema.get("default") is None:
                self.problem = f"required argument '{p.name}' {reason}"
            else:  # optional, or required with a default: served at that value, any other refused
                self.listing.refused[p.name] = reason

    def _applies_default(self, p: FieldSpec) -> bool:
        listing = self.listing
        return p.name in (self.fields.get("limit_arg"), listing.sort_arg, listing.order_arg)

    def _bind_one(self, p: FieldSpec) -> str | None:
        """Bind one parameter; the reason it cannot be bound (None: bound)."""
        words = _words(p)
        key = "".join(words)
        kind = _type(p)
        expressions = expressions_of(p) if kind == "array" and self.listing.expressions is None else None
        if expressions is not None:  # ``filter: [{field, op, value}]``: compiled whole at run time
            self.listing.expressions = expressions
            return None
        if kind == "object":
            return self._operators(p, key)
        if self._paging(p, key):
            return None
        directions = bool(_enum_text(p)) and _enum_text(p) <= _DIRECTIONS  # ``sort: asc|desc``
        if key in _SORT_KEYS and not directions:
            return self._sort(p)
        ordering = key in _ORDER_KEYS or (key in _SORT_KEYS and directions)
        if ordering and (kind == "boolean" or not _enum_text(p) or _enum_text(p) & _DIRECTIONS):
            self.listing.order_arg = p.name
            return None
        column = self.column(key)
        if column is None and len(words) > 1 and words[-1] in ("eq", "equals", "is", "in"):
            column = self.column("".join(words[:-1]))  # Ransack's ``q[shape_eq]``, ``q[id_in]``
        if column is not None and column.type != "json":
            return self._equality(p, column)
        return self._predicate(p, words)

    def _operators(self, p: FieldSpec, key: str) -> str | None:
        """An object of operators on one column (``created[gte]=...``, deepObject style)."""
        props = p.json_schema.get("properties")
        ops_only = not isinstance(props, dict) or all(match_key(k) in OPERATORS for k in props)
        column = self.column(key, when=True) if ops_only and p.style == "deepObject" else None
        if column is None or column.type == "json":
            return "is an object of options this service does not interpret"
        self.listing.filters[p.name] = ListFilter(column=column.name, op="ops")
        return None

    def _paging(self, p: FieldSpec, key: str) -> bool:
        fields = self.fields
        if "search_arg" not in fields and key in SEARCH_KEYS and _is_text(p) and self.column(key) is None:
            fields["search_arg"] = p.name
            return True
        counted = key in LIMIT_KEYS or key.startswith(_COUNT_OF)  # ``numberofgames``: the last N games
        if "limit_arg" not in fields and counted and _is_count(p, key) and self.column(key) is None:
            fields["limit_arg"] = p.name
            return True
        is_from_date = key == "from" and _is_dateish(p)
        if (
            "offset_arg" not in fields
            and key in OFFSET_KEYS
            and _is_count(p, key)
            and not is_from_date
            and self.column(key) is None
        ):
            fields["offset_arg"] = p.name
            return True
        if key in _CURSOR_KEYS and self.listing.cursor_arg is None and not _is_dateish(p) and kind_ok(p):
            self.listing.cursor_arg = p.name
            pk = self.entity.column(self.entity.pk)
            by_key = _type(p) in ("string", None) or (pk is not None and pk.type == "integer")
            self.listing.cursor_by = "key" if by_key else "offset"
            return True
        if key in _BEFORE_KEYS and self.listing.before_arg is None and not _is_dateish(p) and kind_ok(p):
            pk = self.entity.column(self.entity.pk)
            if _type(p) in ("string", None) or (pk is not None and pk.type == "integer"):
                self.listing.before_arg = p.name
                return True
        return False

    def _sort(self, p: FieldSpec) -> str | None:
        values = p.json_schema.get("enum") or (p.json_schema.get("items") or {}).get("enum") or []
        if values and not any(sort_terms(self.entity, str(v)) is not None for v in values):
            return f"sorts by {', '.join(repr(v) for v in values[:5])}, which name no field of {self.entity.name}"
        if self.listing.sort_arg not in (None, p.name):  # one order per answer: the first one binds
            return f"sorts as '{self.listing.sort_arg}' does (a second sort parameter)"
        self.listing.sort_arg = p.name
        return None

    def _equality(self, p: FieldSpec, column: ColumnDef) -> str | None:
        kind = _type(p)
        own = {match_key(column.source_name or column.name), match_key(column.name)}
        own |= {k + "id" for k in own}  # ``branchID`` on ``Branch``: one value, not a set
        words = _words(p)
        plural = "".join(words) not in own and words[-1] not in ("eq", "equals", "is")  # ``ids``: a set
        if kind == "array" or (plural and kind == "string"):
            self.listing.filters[p.name] = ListFilter(column=column.name, op="in")
        else:
            self.arg_columns[p.name] = column.name
        return None

    def _predicate(self, p: FieldSpec, words: list[str]) -> str | None:
        """A range, text or flag predicate on a column (``min_price``, ``name_cont``, ``ptz_true``)."""
        tables = (
            (_FLAG_WORDS, "flag"),
            (_TEXT_WORDS, "text"),
            (_LOWER_WORDS, "range"),
            (_UPPER_WORDS, "range"),
        )
        for table, kinds in tables:
            # a flag or text predicate is a suffix (``ptz_true``, ``name_cont``); a bound either end
            for at in (len(words) - 1,) if kinds != "range" else (len(words) - 1, 0):
                if not words or words[at] not in table:
                    continue
                rest = words[:at] + words[at + 1 :] if at == 0 else words[:at]
                rest = [w for w in rest if w not in _FILLER] or [w for w in rest if w in ("date", "time")]
                if self._predicate_on(p, kinds, words[at], table[words[at]], "".join(rest)):
                    return None
        return f"filters on no field of {self.entity.name}"

    def _predicate_on(self, p: FieldSpec, kinds: str, word: str, op: str, stem: str) -> bool:
        """Record the predicate ``op`` on the column ``stem`` names, if it can hold it."""
        if kinds == "flag":
            column = self.column(stem)
            ok = column is not None and column.type == "boolean"
        elif kinds == "text":
            column = self.column(stem)
            ok = column is not None and column.type == "string" and not _column_date(column)
        else:
            timely = word in ("since", "until", "from", "to", "after", "before") and _type(p) == "string"
            dateish = _is_dateish(p) or timely or stem in ("date", "time", "created", "updated", "modified")
            column = self.column(stem, when=dateish)
            ok = column is not None and _comparable(column) and (bool(stem) or dateish)
        if ok and column is not None:
            self.listing.filters[p.name] = ListFilter(column=column.name, op=op)  # type: ignore[arg-type]
        return ok


def kind_ok(p: FieldSpec) -> bool:
    return _type(p) in ("string", "integer", None) and not p.json_schema.get("enum")
