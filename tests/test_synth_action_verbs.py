"""The verb of an action's words: a prefix split off by the name's casing stays on its verb.

``unSuspendAccountHolder`` splits into ``un suspend account holder``; read word by word, its verb
was ``suspend``, and Adyen's un-suspend was bound as a second suspend (it set ``Suspended``). A
``un``/``re`` that makes a known verb with the word after it is that verb (``unsuspend``,
``reopen``), whose transition is the reversal; a word that makes none is left alone.
"""

from __future__ import annotations

import pytest

from compoworld.synth.transitions import VERBS, action_verb


@pytest.mark.parametrize(
    ("words", "verb", "rest"),
    [
        (["un", "suspend", "account", "holder"], "unsuspend", ["account", "holder"]),
        (["re", "open", "ticket"], "reopen", ["ticket"]),
        (["un", "publish", "article"], "unpublish", ["article"]),
        (["suspend", "account", "holder"], "suspend", ["account", "holder"]),
        (["re", "cancel", "order"], "cancel", ["order"]),  # no ``recancel``: the verb after it
    ],
)
def test_a_split_prefix_stays_on_its_verb(words: list[str], verb: str, rest: list[str]) -> None:
    found = action_verb(words, on_item=True)
    assert found is not None and (found[0], found[2]) == (verb, rest)
    assert found[1] == VERBS[verb]


def test_unsuspend_is_the_reversal_of_suspend() -> None:
    found = action_verb(["un", "suspend"], on_item=True)
    assert found is not None and "suspended" in found[1].requires and "active" in found[1].states
