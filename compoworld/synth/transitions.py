"""The verbs of state-changing actions and the states they move a row to.

An action's path literal or operation name (``/documents/{id}/cancel``, ``pauseCampaign``,
``/message/send``) carries a verb. This table says what the verb does to typed state when the
spec makes the effect evident: *transition* verbs move the addressed row's status (to one of
``states``, spelled as the column's own vocabulary spells it) or flip a boolean flag column;
*insert* verbs add the row the read side lists; *copy* verbs insert a copy of the addressed row;
*clear* verbs delete the addressed row's children; *set* verbs write the columns their arguments
name. ``requires`` lists the states a reversal starts from (``resume`` needs a paused row).
Matching is by word, blind to case and separators, so ``CANCELED``, ``canceled`` and
``Cancelled`` all read as the cancel family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from compoworld.manifest import ColumnDef
from compoworld.specs.words import split_words
from compoworld.synth.naming import match_key

__all__ = [
    "NOMINAL",
    "OUTGOING",
    "TERMINAL",
    "VERBS",
    "Verb",
    "action_verb",
    "flag_column",
    "state_value",
    "status_columns",
    "vocabulary",
]

VerbKind = Literal["transition", "insert", "copy", "clear", "set"]


@dataclass(frozen=True)
class Verb:
    """What one action verb does to typed state."""

    kind: VerbKind
    states: tuple[str, ...] = ()
    flag: tuple[str, ...] = ()
    unflag: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    upsert: bool = False  # ``add_or_update``: an insert that updates the row the arguments' key names


def _t(states: str, flag: str = "", unflag: str = "", requires: str = "") -> Verb:
    return Verb(
        "transition",
        tuple(states.split()),
        tuple(flag.split()),
        tuple(unflag.split()),
        tuple(requires.split()),
    )


def _i(states: str = "") -> Verb:
    return Verb("insert", tuple(states.split()))


_CANCEL = _t("cancelled canceled cancel aborted", "cancelled canceled is_cancelled is_canceled")
_STOP = _t("stopped ended terminated finished completed", "stopped ended", "running active")
_UNLOCK = _t("unlocked active open", "", "locked is_locked", "locked")
VERBS: dict[str, Verb] = {
    "cancel": _CANCEL,
    "abort": _CANCEL,
    "void": _t("voided void cancelled canceled", "voided void"),
    "close": _t("closed close resolved", "closed is_closed", "open is_open"),
    "reopen": _t(
        "reopened open opened active", "open is_open", "closed is_closed", "closed resolved completed done"
    ),
    "archive": _t("archived", "archived is_archived", "active is_active"),
    "unarchive": _t("active unarchived restored open", "active", "archived is_archived", "archived"),
    "restore": _t("active restored", "", "archived is_archived deleted trashed", "archived deleted trashed"),
    "pause": _t("paused suspended on_hold inactive", "paused is_paused", "active is_active enabled running"),
    "resume": _t(
        "active running resumed enabled live started",
        "active is_active",
        "paused is_paused",
        "paused suspended on_hold",
    ),
    "activate": _t(
        "active activated enabled live", "active is_active activated enabled", "inactive disabled"
    ),
    "enable": _t("enabled active", "enabled is_enabled active is_active", "disabled is_disabled"),
    "deactivate": _t("inactive deactivated disabled", "inactive disabled", "active is_active activated"),
    "disable": _t(
        "disabled inactive deactivated", "disabled is_disabled", "enabled is_enabled active is_active"
    ),
    "approve": _t("approved accepted", "approved is_approved"),
    "accept": _t("accepted approved", "accepted is_accepted"),
    "reject": _t("rejected declined denied", "rejected is_rejected"),
    "decline": _t("declined rejected", "declined is_declined"),
    "deny": _t("denied rejected declined", "denied"),
    "complete": _t("completed complete done finished", "completed is_completed complete done is_done"),
    "finish": _t("finished completed complete done", "finished completed done"),
    "end": _t("ended completed finished terminated", "ended", "active running"),
    "stop": _STOP,
    "terminate": _t("terminated ended stopped", "terminated", "active running"),
    "start": _t("started running active in_progress inprogress live ongoing", "started running active"),
    "launch": _t("launched live active running started", "launched live active"),
    "publish": _t("published live public active", "published is_published live public", "draft is_draft"),
    "unpublish": _t(
        "unpublished draft private", "draft is_draft", "published is_published live public", "published live"
    ),
    "submit": _t("submitted pending in_review", "submitted is_submitted"),
    "confirm": _t("confirmed", "confirmed is_confirmed"),
    "verify": _t("verified", "verified is_verified"),
    "lock": _t("locked", "locked is_locked", "unlocked"),
    "unlock": _UNLOCK,
    "block": _t("blocked", "blocked is_blocked"),
    "unblock": _t("unblocked active", "", "blocked is_blocked", "blocked"),
    "suspend": _t("suspended", "suspended is_suspended", "active is_active"),
    "unsuspend": _t("active unsuspended", "active", "suspended is_suspended", "suspended"),
    "reinstate": _t("active reinstated", "active", "suspended is_suspended", "suspended"),
    "capture": _t("captured success succeeded completed paid", "captured is_captured"),
    "authorize": _t("authorized approved", "authorized is_authorized"),
    "release": _t("released", "released is_released", "on_hold held"),
    "revoke": _t("revoked", "revoked is_revoked", "active is_active"),
    "hold": _t("hold on_hold held", "on_hold is_on_hold held"),
    "unhold": _t("active open", "", "on_hold is_on_hold held", "hold on_hold held"),
    "undelete": _t("active restored", "", "deleted is_deleted trashed", "deleted trashed"),
    "settle": _t("settled finished completed paid", "settled is_settled"),
    "refund": _t("refunded", "refunded is_refunded"),
    "expire": _t("expired", "expired is_expired"),
    "fulfill": _t("fulfilled shipped", "fulfilled"),
    "ship": _t("shipped sent fulfilled", "shipped"),
    "pay": _t("paid", "paid is_paid"),
    "resolve": _t("resolved closed", "resolved is_resolved"),
    "dismiss": _t("dismissed", "dismissed is_dismissed"),
    "acknowledge": _t("acknowledged", "acknowledged is_acknowledged"),
    "hide": _t("hidden", "hidden is_hidden", "visible is_visible"),
    "unhide": _t("visible", "visible is_visible", "hidden is_hidden", "hidden"),
    "star": _t("starred", "starred is_starred"),
    "unstar": _t("", "", "starred is_starred"),
    "pin": _t("pinned", "pinned is_pinned"),
    "unpin": _t("", "", "pinned is_pinned"),
    "mute": _t("muted", "muted is_muted"),
    "retry": _t("queued pending retrying processing", "", "failed is_failed", "failed error errored"),
    "subscribe": _t("subscribed active", "subscribed is_subscribed", "unsubscribed"),
    "unsubscribe": _t("unsubscribed inactive", "unsubscribed", "subscribed is_subscribed"),
    "unmute": _t("", "", "muted is_muted"),
    # inserts: the row the read side lists, in the state the verb leaves it
    "send": _i("sent queued accepted submitted delivered pending"),
    "resend": _i("sent queued accepted submitted delivered pending"),
    "schedule": _i("scheduled pending queued"),
    "queue": _i("queued pending"),
    "enqueue": _i("queued pending"),
    "dispatch": _i("dispatched sent queued"),
    "broadcast": _i("sent queued"),
    "notify": _i("sent queued"),
    "post": _i("posted published sent"),
    "book": _i("booked confirmed reserved"),
    "reserve": _i("reserved booked confirmed"),
    "order": _i("placed pending created new"),
    "place": _i("placed pending created new"),
    "register": _i("registered active"),
    "invite": _i("invited pending"),
    "request": _i("requested pending"),
    "upload": _i("uploaded ready available"),
    "import": _i("imported"),
    "create": _i(),
    "save": Verb("insert", upsert=True),  # insert, or update the row the arguments' key names
    "upsert": Verb("insert", upsert=True),
    "put": Verb("insert", upsert=True),  # AWS's ``PutScalingPolicy``: create, or replace by its key
    "add": _i(),
    "new": _i(),
    "record": _i(),
    "log": _i(),
    "compose": _i(),
    "reply": _i("sent queued"),
    "forward": _i("sent queued"),
    # copies, clears, field writes
    "clone": Verb("copy"),
    "copy": Verb("copy"),
    "duplicate": Verb("copy"),
    "clear": Verb("clear"),
    "empty": Verb("clear"),
    "purge": Verb("clear"),
    "update": Verb("set"),
    "set": Verb("set"),
    "write": Verb("set"),  # a device's point or variable: ``POST /analogOutputs/{ioName}/eu {value}``
    "change": Verb("set"),
    "edit": Verb("set"),
    "modify": Verb("set"),
    "rename": Verb("set"),
    "move": Verb("set"),
    "reschedule": Verb("set"),
    "assign": Verb("set"),
    "reassign": Verb("set"),
}
#: Nouns that name a verb's act (``/transactions/{id}/cancellation-request``, ``.../settlement``):
#: the act is the verb's, so the row moves as the verb moves it.
NOMINAL: dict[str, str] = {
    "cancellation": "cancel",
    "cancelation": "cancel",
    "refunding": "refund",
    "settlement": "settle",
    "authorization": "authorize",
    "authorisation": "authorize",
    "activation": "activate",
    "deactivation": "deactivate",
    "approval": "approve",
    "rejection": "reject",
    "confirmation": "confirm",
    "suspension": "suspend",
    "termination": "terminate",
    "completion": "complete",
    "submission": "submit",
    "publication": "publish",
    "archival": "archive",
}
#: Verbs that publish a row into the world: on an item they move it (``/documents/{id}/send``),
#: on a collection they insert one (``/messages/send``).
_ITEM_TRANSITIONS: dict[str, Verb] = {
    "send": _t("sent delivered queued submitted", "sent is_sent"),
    "resend": _t("sent delivered queued submitted", "sent is_sent"),
    "schedule": _t("scheduled", "scheduled is_scheduled"),
    "post": _t("posted published", "posted is_posted"),
    "book": _t("booked confirmed reserved", "booked"),
    "reserve": _t("reserved booked", "reserved"),
}
#: States a row does not leave by a plain transition (only a reversal that names them).
_TERMINAL_STATES = (
    "cancelled canceled cancel aborted voided void deleted ended terminated expired refunded revoked"
)
TERMINAL: frozenset[str] = frozenset(
    match_key(s) for s in f"{_TERMINAL_STATES} rejected declined denied".split()
)
#: Qualifiers of the collection a sending verb adds to, where a service keeps both directions.
OUTGOING: frozenset[str] = frozenset({"outbound", "outgoing", "sent", "outbox"})
_STATUS_WORDS = {"status", "state", "stage", "lifecycle", "phase"}
#: Codes a description lists: ``RUNNING``, ``ENDING_SOON``, ``'paused'``, `` `draft` ``.
_CODE = re.compile(r"\b[A-Z][A-Z_]{2,40}\b|['\"`]([a-z][a-z_]{2,40})['\"`]")


def action_verb(words: list[str], *, on_item: bool) -> tuple[str, Verb, list[str]] | None:
    """The first verb of an action's words, what it does, and the words after it
    (``mark_as_paid`` moves to ``paid``); None when no verb is known."""
    words = [NOMINAL.get(w, w) for w in words]
    for i, word in enumerate(words):
        if word in ("un", "re") and i + 1 < len(words) and word + words[i + 1] in VERBS:
            word = word + words[i + 1]  # ``unSuspendAccountHolder``: unsuspend, never suspend
            words = [*words[:i], word, *words[i + 2 :]]
        if word == "mark" and i + 1 < len(words):
            state = next((w for w in words[i + 1 :] if w not in {"as", "is", "the"}), None)
            if state:
                return f"mark_{state}", _t(state, state + " is_" + state), words[i + 2 :]
        if word in VERBS:
            verb = VERBS[word]
            if on_item and word in _ITEM_TRANSITIONS:
                verb = _ITEM_TRANSITIONS[word]
            rest = words[i + 1 :]
            if rest[:1] == ["or"] and rest[1:2] and rest[1] in VERBS:  # ``add_or_update_X``: X follows both
                other = VERBS[rest[1]]
                if {verb.kind, other.kind} == {"insert", "set"}:  # an upsert
                    verb = Verb("insert", (verb if verb.kind == "insert" else other).states, upsert=True)
                return f"{word}_or_{rest[1]}", verb, rest[2:]
            return word, verb, rest
    return None


def status_columns(columns: list[ColumnDef]) -> list[ColumnDef]:
    """Columns holding a row's lifecycle state (``status``, ``campaignStatus``, ``state``), most telling first."""
    found = []
    for c in columns:
        words = split_words(c.source_name or c.name)
        if words and words[-1] in _STATUS_WORDS and not c.primary_key and c.ref is None:
            found.append(c)
    return sorted(found, key=lambda c: (split_words(c.source_name or c.name)[-1] != "status", len(c.name)))


def vocabulary(column: ColumnDef, schema: dict[str, Any] | None = None) -> list[str]:
    """The state values a column can hold: its enum, else the codes its description names."""
    schema = schema if schema is not None else column.json_schema
    enum = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(enum, list) and enum:
        return [v for v in enum if isinstance(v, str)]
    if column.enum:
        return [v for v in column.enum if isinstance(v, str)]
    text = str((schema or {}).get("description") or column.description or "")
    codes = {m.group(1) or m.group(0) for m in _CODE.finditer(text)}
    example = (schema or {}).get("example")
    if isinstance(example, str) and example.strip():
        codes.add(example.strip())
    return sorted(codes)


def state_value(verb_states: tuple[str, ...], vocab: list[str], *, open_vocabulary: bool) -> str | None:
    """The vocabulary's spelling of the first state the verb moves to (``CANCELED`` for cancel).

    With an open vocabulary (a free string column) the verb's own first state is used when the
    column's description names none of them.
    """
    by_key = {match_key(v): v for v in vocab}
    for state in verb_states:
        if match_key(state) in by_key:
            return by_key[match_key(state)]
    if open_vocabulary and verb_states:
        upper = sum(1 for v in vocab if v.isupper()) > len(vocab) / 2 if vocab else False
        return verb_states[0].upper() if upper else verb_states[0]
    return None


def flag_column(columns: list[ColumnDef], names: tuple[str, ...]) -> ColumnDef | None:
    """The boolean column named by one of ``names`` (``cancelled``, ``isArchived``), if any."""
    keys = [match_key(n) for n in names]
    for key in keys:
        for c in columns:
            if c.type == "boolean" and match_key(c.source_name or c.name) == key:
                return c
    return None
