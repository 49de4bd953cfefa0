"""Reading a generated reply to a QA question: what kind of reply it is (generate-then-parse).

A model that can only write (a chat endpoint; any language model with ``yes_no=generate``)
answers a yes/no question in words, and may answer neither: it may say the text does not
tell, hedge, or refuse. :func:`read_reply` sorts a reply into one *kind*:

============== ============================================================================
kind           the reply ...
============== ============================================================================
``yes``        (yes/no questions) commits to yes: its first word is one of ``YES_WORDS``
``no``         (yes/no questions) commits to no: its first word(s) one of ``NO_WORDS``
``answer``     (other questions) gives an answer
``abstention`` says the answer is not known or not in the text (``UNKNOWN_PHRASES`` at its
               start, as :func:`~faithprobe.qa.answers.is_unknown` reads them, or one of
               ``ABSTENTION_PATTERNS`` anywhere)
``hedge``      neither commits nor abstains: ``HEDGE_PATTERNS`` anywhere, or it starts with
               one of ``HEDGE_OPENINGS`` (also right after a yes/no word; on a yes/no
               question also ``YES_NO_HEDGE_OPENINGS``: "It might", "Sometimes")
``refusal``    declines to answer without saying the text lacks it: ``REFUSAL_PATTERNS``
``other``      (yes/no questions) none of these ("The car was red.")
``empty``      nothing once the format label and quotes are taken off and it is normalised
               ("", "A:", "The"): not an abstention
============== ============================================================================

The rules are tried in this order, the first that matches wins: empty; an unknown phrasing
at the start (abstention); on a yes/no question, a hedge pattern at the start ("Yes and
no", "Not necessarily": hedge), then a leading yes/no word: yes or no, except when an
unknown phrasing follows it ("No, I don't know": abstention) or a hedge does ("No, not
necessarily", "Yes, probably": hedge) -- a reply that commits first ("No, the text does not
say Tom has a dog") is read by its commitment; then an abstention pattern anywhere; a
refusal pattern anywhere; a hedge pattern anywhere or a hedge opening; else ``answer``
(other questions) or ``other`` (yes/no questions). Phrasings are matched on the
normalised reply (:func:`~faithprobe.qa.answers.normalize_answer`: lowercase, no
punctuation or articles, so "doesn't" is ``doesnt``, "I'm" is ``im`` and "As an AI" is
``as ai``) as whole words.
The abstention patterns are sentences about the text ("the passage does not mention ...");
a span answer that happens to contain one ("He was not mentioned in the will") is read as
an abstention: they were chosen to be rare in answers.

**Scoring** (:mod:`faithprobe.metrics.qa_scores`): an abstention is scored as the answer
*unknown* (unk%; EM/F1 against the gold as the string "unknown"); on a yes/no question only
a ``yes`` or ``no`` reply has a yes/no label, so an abstention, hedge, refusal, other or
empty reply is neither yes nor no: wrong, and never counted in the share of "no". On other
questions a hedge or refusal is scored on its text like any answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from faithprobe.qa.answers import UNKNOWN_PHRASES, extract_answer, normalize_answer

YES, NO, ANSWER = "yes", "no", "answer"
ABSTENTION, HEDGE, REFUSAL, OTHER, EMPTY = "abstention", "hedge", "refusal", "other", "empty"
# the kinds a reply can be, by question kind, in reading order for tables
YES_NO_KINDS = (YES, NO, ABSTENTION, HEDGE, REFUSAL, OTHER, EMPTY)
SPAN_KINDS = (ANSWER, ABSTENTION, HEDGE, REFUSAL, EMPTY)
KINDS = (YES, NO, ANSWER, ABSTENTION, HEDGE, REFUSAL, OTHER, EMPTY)

# normalised first words (see the module docstring)
YES_WORDS: tuple[str, ...] = ("yes", "yeah", "yep", "correct", "true")
NO_WORDS: tuple[str, ...] = ("no", "nope", "incorrect", "false", "not at all")

# anywhere in the normalised reply: the text does not give the answer
ABSTENTION_PATTERNS: tuple[str, ...] = (
    r"(?:does not|doesnt|did not|didnt) (?:say|state|mention|specify|tell|indicate|"
    r"provide|give|reveal|clarify)",
    r"(?:does not|doesnt) (?:contain|have|include) (?:any )?information",
    r"(?:is|was|are|were) not (?:mentioned|stated|specified|given|provided|known)",
    r"(?:isnt|wasnt|arent|werent) (?:mentioned|stated|specified|given|provided|known)",
    r"not mentioned",
    r"not stated",
    r"not specified",
    r"no information",
    r"(?:not enough|insufficient|no) (?:information|details|context)",
    r"(?:cannot|cant|can not) be (?:determined|answered|known|inferred|said|told)",
    r"(?:cannot|cant|can not|unable to) (?:determine|infer|tell from|know from)",
    r"impossible to (?:say|tell|determine|know)",
    r"no way (?:to know|of knowing|to tell)",
    r"i (?:dont|do not) know",
)
# anywhere: declining to answer
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"(?:im|i am) sorry",
    r"sorry but",
    r"i (?:cannot|cant|can not|will not|wont|must decline to) "
    r"(?:help|assist|answer|provide|comply|respond)",
    r"i (?:am|m) (?:not able|unable) to (?:help|assist|answer|provide|comply|respond)",
    r"im (?:not able|unable) to (?:help|assist|answer|provide|comply|respond)",
    r"as ai",  # "As an AI": articles are gone once normalised
    r"as (?:ai )?(?:language model|assistant)",
    r"i (?:must )?(?:decline|refuse)",
)
# anywhere: an explicit non-commitment
HEDGE_PATTERNS: tuple[str, ...] = (
    r"not necessarily",
    r"(?:it|that|this) (?:all )?depends",
    r"yes and no",
    r"yes or no",
    r"(?:hard|difficult) to (?:say|tell)",
    r"(?:may|might) or (?:may|might) not",
)
# at the start (after a yes/no word too): an uncommitted opening
HEDGE_OPENINGS: tuple[str, ...] = (
    r"maybe",
    r"perhaps",
    r"possibly",
    r"probably",
    r"presumably",
    r"likely",
    r"unlikely",
    r"(?:im|i am) not sure",
    r"not sure",
    r"unsure",
    r"uncertain",
    r"(?:it|that) is possible",
    r"(?:not|no) necessarily",
    r"(?:it|that|this) depends",
    r"depends",
)
# at the start of a reply to a yes/no question only (an answer to another question may well
# begin so: "He could be executed.", "Partly cloudy")
YES_NO_HEDGE_OPENINGS: tuple[str, ...] = (
    r"(?:it|he|she|they|this|that|there) (?:might|may|could)",
    r"sometimes",
    r"partly",
    r"partially",
)
# unknown phrasings at the start, after the leads is_unknown allows
_UNKNOWN_LEAD = r"(?:(?:sorry|answer|it|this|that|which)(?: is)? )?"


def _any(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{'|'.join(patterns)})(?!\w)")


def _start(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"^(?:{'|'.join(patterns)})(?!\w)")


_UNKNOWN_START = re.compile(
    rf"^{_UNKNOWN_LEAD}(?:{'|'.join(map(re.escape, UNKNOWN_PHRASES))})(?!\w)"
)
_ABSTENTION = _any(ABSTENTION_PATTERNS)
_REFUSAL = _any(REFUSAL_PATTERNS)
_HEDGE = _any(HEDGE_PATTERNS)
_HEDGE_OPENING = _start(HEDGE_OPENINGS)
_YES_NO_HEDGE_OPENING = _start(HEDGE_OPENINGS + YES_NO_HEDGE_OPENINGS)
_YES = _start(tuple(map(re.escape, YES_WORDS)))
_NO = _start(tuple(map(re.escape, NO_WORDS)))


@dataclass(frozen=True)
class Reply:
    """A generated reply as read: its ``kind`` (module docstring) and the ``answer`` to
    score: ``"yes"``/``"no"`` for a committed yes/no reply, else the reply's answer text
    (:func:`~faithprobe.qa.answers.extract_answer`)."""

    kind: str
    answer: str

    @property
    def abstained(self) -> bool:
        return self.kind == ABSTENTION


def read_reply(text: str, *, yes_no: bool) -> Reply:
    """The kind of the generated reply ``text`` to a yes/no question (``yes_no``) or another
    question, by the rules of the module docstring."""
    answer = extract_answer(text)
    norm = normalize_answer(answer)
    if not norm:
        return Reply(EMPTY, answer)
    if _UNKNOWN_START.match(norm):
        return Reply(ABSTENTION, answer)
    opening = _YES_NO_HEDGE_OPENING if yes_no else _HEDGE_OPENING
    if yes_no:
        if _HEDGE.match(norm):  # "yes and no", "not necessarily"
            return Reply(HEDGE, answer)
        for label, pattern in ((YES, _YES), (NO, _NO)):
            if found := pattern.match(norm):
                rest = norm[found.end() :].strip()
                if _UNKNOWN_START.match(rest):  # "No, I don't know."
                    return Reply(ABSTENTION, answer)
                if opening.match(rest) or _HEDGE.match(rest):  # "No, not necessarily."
                    return Reply(HEDGE, answer)
                return Reply(label, label)
    for kind, pattern in ((ABSTENTION, _ABSTENTION), (REFUSAL, _REFUSAL), (HEDGE, _HEDGE)):
        if pattern.search(norm):
            return Reply(kind, answer)
    if opening.match(norm):
        return Reply(HEDGE, answer)
    return Reply(OTHER if yes_no else ANSWER, answer)
