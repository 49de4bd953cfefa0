"""Degenerate reference models: shortcuts a model that ignores what matters could take.

Each reads only the request's input text, never the example behind it (so never the gold):

=============  ==============================================================================
``constant``   the same answer whatever the input: the same candidate string wherever it is
               offered (the first in a fixed hash order of the strings), entailment, the
               context's first word as the span, *yes*
``random``     a draw seeded by the request's content (reproducible, independent of order)
``unknown``    always abstains: flat candidate scores, non-entailment, the null span,
               *unknown*
``first``      the first candidate / label / choice, the context's first named entity, *yes*
``nearest``    the attractor shortcut: the candidate mentioned nearest the blank (the end of
               the context); the entity nearest the question's words in the context; for
               yes/no and NLI, whether the question's / hypothesis' last content word (the
               one nearest the blank) occurs in the text
``overlap``    the most word overlap: the candidate sharing most of its content words with
               the context; the heuristic ``overlap+entity`` for spans
               (:class:`~faithprobe.heuristics.subject.HeuristicSubject`); *yes* / entailment iff
               every content word of the question / hypothesis occurs in the text
=============  ==============================================================================

A candidate is mentioned by its content words and, for the distractor items, by the words it
is known to go with (:data:`ASSOCIATIONS`: a country for its capital, a profession for what it
sells), as a language model knows that Jakarta is Indonesia's capital. That knowledge is what
makes ``nearest`` and ``overlap`` right on a story without attractors and wrong once a
related attractor stands nearer the blank or ties with the critical fact. Named entities are
spaCy's (:func:`faithprobe.parsing.parser`); content words are the lexical
heuristics' (:func:`~faithprobe.content_words.content_tokens`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache, lru_cache

import numpy as np

from faithprobe.content_words import content_tokens, is_novel
from faithprobe.datasets.stories import ITEM_SETS
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT, UNKNOWN, Example
from faithprobe.reference_models.policy import (
    Policy,
    chosen,
    flat,
    kind_scores,
    label_scores,
    span_at,
    word_saliency,
)
from faithprobe.reference_models.words import Span, first_word, mentions, word_spans
from faithprobe.requests import (
    ANSWER_KINDS,
    AnswerKindRequest,
    CandidateScoreRequest,
    CandidateScores,
    SaliencyRequest,
    SpanAnswer,
    SpanAnswerRequest,
    TextPairRequest,
    TokenSaliency,
)
from faithprobe.seeding import rng_for

# candidate -> the words it goes with in the distractor item sets (its backgrounds)
ASSOCIATIONS: dict[str, tuple[str, ...]] = {}
for _set in ITEM_SETS.values():
    for _background, _target in _set.pairs:
        ASSOCIATIONS[_target] = (*ASSOCIATIONS.get(_target, ()), _background)


def cue_words(candidate: str) -> list[str]:
    """The content words that mention ``candidate``: its own and its associations'."""
    words = content_tokens(" ".join((candidate, *ASSOCIATIONS.get(candidate, ()))))
    return list(dict.fromkeys(words))


def _highest(values: Sequence[float], none: float) -> CandidateScores:
    """The candidate with the highest of ``values`` (the first of a tie); flat when none
    scores above ``none``, the value of a candidate the context does not mention."""
    if max(values) <= none:
        return flat(len(values))
    return chosen(len(values), values.index(max(values)))


def _yes_no(answer: bool) -> str:
    return "yes" if answer else "no"


def _last_word_occurs(asked: str, text: str) -> bool:
    """Whether the last content word of ``asked`` occurs in ``text``."""
    words = content_tokens(asked)
    return bool(words) and words[-1] in set(content_tokens(text))


def _all_words_occur(asked: str, text: str) -> bool:
    """Whether every content word of ``asked`` occurs in ``text``."""
    return set(content_tokens(asked)) <= set(content_tokens(text))


@lru_cache(maxsize=512)
def _entities(text: str) -> tuple[Span, ...]:
    """The character spans of spaCy's named entities in ``text``."""
    from faithprobe.parsing import parser

    return tuple((e.start_char, e.end_char) for e in parser()(text).ents)


class Constant(Policy):
    name = "constant"

    def candidate_scores(self, request: CandidateScoreRequest, example: Example | None):
        def rank(candidate: str) -> str:
            return hashlib.sha256(candidate.encode()).hexdigest()

        best = min(range(len(request.candidates)), key=lambda i: rank(request.candidates[i]))
        return chosen(len(request.candidates), best)

    def pair_classes(self, request: TextPairRequest, example: Example | None):
        return label_scores(request.labels, ENTAILMENT)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        return span_at(request.context, first_word(request.context))

    def answer_kind(self, request: AnswerKindRequest, example: Example | None):
        return kind_scores("yes")


class Random(Policy):
    name = "random"

    def _rng(self, request) -> np.random.Generator:
        return rng_for(0, self.name, request.key(self.name))

    def _scores(self, request, n: int) -> CandidateScores:
        logits = 2.0 * self._rng(request).standard_normal(n)
        logprobs = logits - np.logaddexp.reduce(logits)
        return CandidateScores(tuple(float(x) for x in logprobs), (1,) * n)

    def candidate_scores(self, request: CandidateScoreRequest, example: Example | None):
        return self._scores(request, len(request.candidates))

    def pair_classes(self, request: TextPairRequest, example: Example | None):
        return self._scores(request, len(request.labels))

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        words = [s for s in word_spans(request.context) if request.context[s[0]].isalnum()]
        if not words:
            return span_at(request.context, None)
        return span_at(request.context, words[int(self._rng(request).integers(len(words)))])

    def answer_kind(self, request: AnswerKindRequest, example: Example | None):
        return self._scores(request, len(ANSWER_KINDS))

    def saliency(self, request: SaliencyRequest, example: Example | None) -> TokenSaliency:
        n = len(word_spans(request.question)) + len(word_spans(request.context))
        values = self._rng(request).random(n)
        return word_saliency(request, [], -1, self.name, values=values)


class Unknown(Policy):
    name = "unknown"

    def candidate_scores(self, request: CandidateScoreRequest, example: Example | None):
        return flat(len(request.candidates))

    def pair_classes(self, request: TextPairRequest, example: Example | None):
        return label_scores(request.labels, NON_ENTAILMENT)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        return span_at(request.context, None)

    def answer_kind(self, request: AnswerKindRequest, example: Example | None):
        return kind_scores(UNKNOWN)


class First(Policy):
    name = "first"

    def candidate_scores(self, request: CandidateScoreRequest, example: Example | None):
        return chosen(len(request.candidates), 0)

    def pair_classes(self, request: TextPairRequest, example: Example | None):
        return chosen(len(request.labels), 0)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        entities = _entities(request.context)
        return span_at(request.context, entities[0] if entities else first_word(request.context))

    def answer_kind(self, request: AnswerKindRequest, example: Example | None):
        return kind_scores("yes")


class Nearest(Policy):
    name = "nearest"

    def candidate_scores(self, request: CandidateScoreRequest, example: Example | None):
        """The candidate whose last mention ends latest in the context; flat if none is
        mentioned."""
        last = [
            max((end for _, end in mentions(request.context, cue_words(c))), default=-1)
            for c in request.candidates
        ]
        return _highest(last, none=-1)

    def pair_classes(self, request: TextPairRequest, example: Example | None):
        entailed = _last_word_occurs(request.second, request.first)
        return label_scores(request.labels, ENTAILMENT if entailed else NON_ENTAILMENT)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        """Of the entities the question does not name (all of them if it names every one),
        the one nearest (in characters) to a mention of a question word outside it; the
        first entity when the context mentions no question word."""
        context, asked = request.context, set(content_tokens(request.question))
        entities = _entities(context)
        novel = [e for e in entities if is_novel(context[e[0] : e[1]], asked)] or list(entities)
        if not novel:
            return span_at(context, None)
        anchors = mentions(context, asked)

        def distance(entity: Span) -> float:
            start, end = entity
            gaps = [max(s - end, start - e) for s, e in anchors if e <= start or s >= end]
            return min(gaps, default=float("inf"))

        return span_at(context, min(novel, key=distance))

    def answer_kind(self, request: AnswerKindRequest, example: Example | None):
        return kind_scores(_yes_no(_last_word_occurs(request.question, request.context)))


class Overlap(Policy):
    name = "overlap"

    def candidate_scores(self, request: CandidateScoreRequest, example: Example | None):
        """The candidate with the largest share of its cue words in the context; flat if no
        candidate shares any."""
        present = set(content_tokens(request.context))
        shares = [
            len(set(cues) & present) / len(cues) if (cues := cue_words(c)) else 0.0
            for c in request.candidates
        ]
        return _highest(shares, none=0.0)

    def pair_classes(self, request: TextPairRequest, example: Example | None):
        entailed = _all_words_occur(request.second, request.first)
        return label_scores(request.labels, ENTAILMENT if entailed else NON_ENTAILMENT)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        (answer,) = _overlap_heuristic().answer([request])
        return answer

    def answer_kind(self, request: AnswerKindRequest, example: Example | None):
        return kind_scores(_yes_no(_all_words_occur(request.question, request.context)))


@cache
def _overlap_heuristic():
    from faithprobe.heuristics.subject import HeuristicSubject

    return HeuristicSubject("overlap+entity")
