"""The entity types an answer is expected to have, from the question.

An answer-type predictor is any callable ``question -> frozenset of spaCy entity labels``,
or ``None`` when any type will do (:data:`AnswerTypePredictor`; the empty set: the answer is
no entity). The extractor takes one as a parameter: the wh-word map below
(:func:`wh_answer_types`, the default) or the trained classifier of
:mod:`~faithprobe.heuristics.type_classifier` (``faithprobe train answer-types``).

The map (spaCy's OntoNotes labels), looked up at the question's *first* wh-word, as a
two-word phrase first ("how many", "what year"), then as one word:

==================================== =====================================
who, whom, whose                     PERSON, ORG, NORP
when                                 DATE, TIME
what year, which year                DATE
where                                GPE, LOC, FAC
how many, how much                   CARDINAL, QUANTITY, MONEY, PERCENT
what, which, why, how (others)       any type
==================================== =====================================

"Which" and "what" ask for anything ("what company", "which river"): the noun after them
would narrow it, the trained classifier's job. A question without a wh-word ("The
treaty was signed in which city?" has one; "Name the river ..." has none) accepts any type.
"""

from __future__ import annotations

import re
from collections.abc import Callable

AnswerTypePredictor = Callable[[str], frozenset[str] | None]

NUMERIC = frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT"})
WH_TYPES: dict[str, frozenset[str] | None] = {
    "how many": NUMERIC,
    "how much": NUMERIC,
    "what year": frozenset({"DATE"}),
    "which year": frozenset({"DATE"}),
    "who": frozenset({"PERSON", "ORG", "NORP"}),
    "whom": frozenset({"PERSON", "ORG", "NORP"}),
    "whose": frozenset({"PERSON", "ORG", "NORP"}),
    "when": frozenset({"DATE", "TIME"}),
    "where": frozenset({"GPE", "LOC", "FAC"}),
    "what": None,
    "which": None,
    "why": None,
    "how": None,
}
_WH_WORDS = {key.split()[0] for key in WH_TYPES}
_WORD = re.compile(r"[a-z]+")


def wh_answer_types(question: str) -> frozenset[str] | None:
    """Expected entity labels of the answer to ``question`` by its first wh-word (see the
    module docstring); ``None`` means any type."""
    words = _WORD.findall(question.lower())
    for i, word in enumerate(words):
        if word in _WH_WORDS:
            pair = " ".join(words[i : i + 2])
            return WH_TYPES.get(pair, WH_TYPES[word])
    return None
