"""Comparison questions in any QA dataset ("Which film came out earlier, Red Harbor or Blue
Field?"), for the right-reasons suite (Ray Choudhury, Rogers & Augenstein, "Machine reading,
fast and slow").

Swapping a comparison question's comparative for its antonym has a known gold answer -- the
other entity -- only when the question really compares two entities that the text names.
So a question counts as a comparison question when it holds one comparative of
:data:`COMPARATIVES` (as a whole word), names two entities as "X or Y", both occur in the
context, and the gold answer is one of them (SQuAD-normalised). :func:`comparison` says so
for one example (or why not); :func:`select_comparisons` filters a dataset and counts the
rejections by reason.

Entities are found without a parser: around an " or " of the question, the left entity is
a run of words ending at it (after the last comma, colon or the comparative), the right one
a run of words starting after it (up to "?" or a comma); the side matching the gold answer
is the answer's, and on the other side the longest run that occurs in the context wins.

Features added (the ones :mod:`faithprobe.generators.comparisons` writes too, so generated
items read back from SQuAD JSON get them again): ``comparative`` (lower case),
``comparative_span`` (in the question), ``entities`` (two ``{"name", "question_span",
"context_span"}`` in question order; the answer's context span is its gold start, the
other's its first whole-word occurrence) and ``answer_entity`` (0 or 1).

**Conditions.** The method reads a comparison question two ways: with its full paragraphs
and with the supporting facts alone. :func:`supporting_facts_only` makes the second from an
example whose rationale is its supporting facts (HotpotQA and 2WikiMultiHopQA files: see
:mod:`faithprobe.datasets.hotpotqa`), or says why it cannot.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from faithprobe.qa.answers import normalize_answer
from faithprobe.records import Outcome, QAExample

# the right-reasons in-distribution map's keys, and the superlatives and near-synonyms
# comparison questions also use (the intervention drops those it has no antonym for)
COMPARATIVES = (
    "more recently",
    "more recent",
    "earlier",
    "earliest",
    "later",
    "latest",
    "first",
    "last",
    "older",
    "oldest",
    "younger",
    "youngest",
    "newer",
)

NOT_SPAN = "the gold answer is not a span"
NO_COMPARATIVE = "no comparative"
SEVERAL_COMPARATIVES = "more than one comparative"
NO_ALTERNATIVE = "no 'X or Y' in the question"
ANSWER_NOT_ENTITY = "the answer is not one of the compared entities"
OTHER_NOT_IN_CONTEXT = "the other entity does not occur in the context"
NO_SUPPORT = "no supporting facts"
ANSWER_NOT_IN_SUPPORT = "the answer is not in the supporting facts"
REASONS = (
    NOT_SPAN,
    NO_COMPARATIVE,
    SEVERAL_COMPARATIVES,
    NO_ALTERNATIVE,
    ANSWER_NOT_ENTITY,
    OTHER_NOT_IN_CONTEXT,
)

_COMPARATIVE = re.compile(
    r"(?<!\w)(" + "|".join(re.escape(c) for c in COMPARATIVES) + r")(?!\w)", re.IGNORECASE
)
_OR = re.compile(r"\s+or\s+")
_WORD = re.compile(r"\S+")
_TRIM = ".,;:!?\"'()"

Span = tuple[int, int]


def find_phrase(phrase: str, text: str) -> int:
    """The start of the first whole-word, case-insensitive occurrence of ``phrase`` in
    ``text``, or -1."""
    m = re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, flags=re.IGNORECASE)
    return m.start() if m else -1


def _runs(question: str, start: int, end: int, *, ending: bool) -> list[Span]:
    """Runs of whole words in ``question[start:end]``, outer punctuation trimmed: those
    ending at ``end`` (``ending``) or starting at ``start``, longest first."""
    words = [(m.start() + start, m.end() + start) for m in _WORD.finditer(question[start:end])]
    spans = []
    for k in range(len(words)):
        s, e = (words[k][0], words[-1][1]) if ending else (words[0][0], words[-k - 1][1])
        text = question[s:e]
        s += len(text) - len(text.lstrip(_TRIM))
        e -= len(text) - len(text.rstrip(_TRIM))
        if s < e:
            spans.append((s, e))
    return spans


def _sides(question: str, comparative: Span) -> Iterable[tuple[list[Span], list[Span]]]:
    """For every " or " of the question: the candidate left and right entity spans (the
    comparative belongs to neither)."""
    for m in _OR.finditer(question):
        left_start = max(question.rfind(c, 0, m.start()) + 1 for c in ",:;?")
        if comparative[1] <= m.start():
            left_start = max(left_start, comparative[1])
        ends = [question.find(c, m.end()) for c in "?,;"]
        if comparative[0] >= m.end():
            ends.append(comparative[0])
        right_end = min((i for i in ends if i >= 0), default=len(question))
        yield (
            _runs(question, left_start, m.start(), ending=True),
            _runs(question, m.end(), right_end, ending=False),
        )


def _answer_match(
    example: QAExample, candidates: list[Span]
) -> tuple[Span, tuple[int, int]] | None:
    """The candidate naming a gold answer, and that answer's context span."""
    q = example.question
    for i, answer in enumerate(example.answers):
        hits = [
            c for c in candidates if normalize_answer(q[c[0] : c[1]]) == normalize_answer(answer)
        ]
        if not hits or not normalize_answer(answer):
            continue
        exact = [c for c in hits if q[c[0] : c[1]].casefold() == answer.casefold()]
        start = example.answer_starts[i] if i < len(example.answer_starts) else -1
        if start < 0:
            start = find_phrase(answer, example.context)
        if start >= 0:
            return (exact or hits)[0], (start, start + len(answer))
    return None


def comparison(example: QAExample) -> Outcome:
    """``example`` with the comparison features (see the module docstring), or the reason
    it is not a comparison question (one of ``REASONS``)."""
    if example.answer_type != "span":
        return Outcome.dropped(NOT_SPAN)
    found = list(_COMPARATIVE.finditer(example.question))
    if not found:
        return Outcome.dropped(NO_COMPARATIVE)
    if len({m.group(1).lower() for m in found}) > 1:
        return Outcome.dropped(SEVERAL_COMPARATIVES)
    cmp = found[0]
    reason = NO_ALTERNATIVE
    for left, right in _sides(example.question, cmp.span(1)):
        if not left or not right:
            continue
        reason = ANSWER_NOT_ENTITY
        for answer_side, (mine, other) in enumerate(((left, right), (right, left))):
            match = _answer_match(example, mine)
            if match is None:
                continue
            reason = OTHER_NOT_IN_CONTEXT
            for span in other:
                start = find_phrase(example.question[span[0] : span[1]], example.context)
                if start < 0:
                    continue
                other_entity = _entity(example, span, (start, start + span[1] - span[0]))
                entities = [_entity(example, *match), other_entity]
                if answer_side:
                    entities.reverse()
                if normalize_answer(entities[0]["name"]) == normalize_answer(entities[1]["name"]):
                    break
                features = {
                    **example.features,
                    "comparative": cmp.group(1).lower(),
                    "comparative_span": cmp.span(1),
                    "entities": entities,
                    "answer_entity": answer_side,
                }
                return Outcome.kept(replace(example, features=features))
    return Outcome.dropped(reason)


def _entity(example: QAExample, question_span: Span, context_span: Span) -> dict:
    s, e = context_span
    return {"name": example.context[s:e], "question_span": question_span, "context_span": (s, e)}


def select_comparisons(examples: Iterable[QAExample]) -> tuple[list[QAExample], Counter[str]]:
    """The comparison questions among ``examples`` (with their features) and how many of
    the others were rejected for each reason."""
    selected, rejected = [], Counter()
    for example in examples:
        outcome = comparison(example)
        if outcome.example is None:
            rejected[outcome.reason] += 1
        else:
            selected.append(outcome.example)
    return selected, rejected


def supporting_facts_only(example: QAExample) -> Outcome:
    """A comparison ``example`` with its context cut to its rationale (the supporting-fact
    sentences, in order, one space between them) and the comparison features found again
    there -- id ``<id>/supporting`` -- or why it cannot be (:data:`NO_SUPPORT`,
    :data:`ANSWER_NOT_IN_SUPPORT`, or a reason of :func:`comparison`, e.g. the other entity
    is named only outside the facts)."""
    if not example.rationale:
        return Outcome.dropped(NO_SUPPORT)
    pieces = [example.context[s:e].strip() for s, e in example.rationale]
    context = " ".join(p for p in pieces if p)
    start = find_phrase(example.answers[0], context)
    if start < 0:
        return Outcome.dropped(ANSWER_NOT_IN_SUPPORT)
    spans, at = [], 0
    for piece in (p for p in pieces if p):
        spans.append((at, at + len(piece)))
        at += len(piece) + 1
    features = {k: v for k, v in example.features.items() if k not in ("entities", "titles")}
    features["sentences"] = tuple(spans)
    cut = replace(
        example,
        id=f"{example.id}/supporting",
        context=context,
        answer_starts=(start,),
        rationale=tuple(spans),
        features=features,
    )
    return comparison(cut)
