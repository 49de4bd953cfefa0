"""What a reference model does, one method per request kind (a :class:`Policy`), and the
answers it gives, built the same way by every policy.

Answers are as certain as the policy is: a choice gets probability :data:`CONFIDENCE` and the
other options share the rest equally; no choice (an abstention) is a flat distribution. Every
candidate counts as one token (``n_tokens`` 1), as a classifier's whole-choice scores do. A
span answer scores 1 against a null score of 0; the null answer the reverse. Asked by
letter, a policy replies with the letter of its choice, or with :data:`NO_CHOICE` (naming no
option) where it chooses none (:func:`letter_reply`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

from faithprobe.records import Example, Origin
from faithprobe.reference_models.words import Span, word_spans
from faithprobe.requests import (
    ANSWER_KINDS,
    CONTEXT,
    IG_SUMMARIES,
    QUESTION,
    AnswerKindRequest,
    CandidateScoreRequest,
    CandidateScores,
    LetterChoice,
    LetterChoiceRequest,
    SaliencyRequest,
    SpanAnswer,
    SpanAnswerRequest,
    TextPairRequest,
    TokenSaliency,
)

CONFIDENCE = 0.95  # the probability a policy puts on its choice
NO_CHOICE = "None of them, I cannot tell."  # a reply naming no option


class Policy(ABC):
    """The behaviour planted in one reference model. ``reads_examples``: whether it is shown
    the example behind each request (only the reader); the others get ``example=None``, so
    they cannot read the gold. :meth:`saliency` puts the mass on the words of the span
    :meth:`span` answers (flat for the null answer), unless a policy says otherwise."""

    name: str
    reads_examples: bool = False

    @abstractmethod
    def candidate_scores(
        self, request: CandidateScoreRequest, example: Example | None
    ) -> CandidateScores: ...

    @abstractmethod
    def pair_classes(
        self, request: TextPairRequest, example: Example | None
    ) -> CandidateScores: ...

    @abstractmethod
    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer: ...

    @abstractmethod
    def answer_kind(
        self, request: AnswerKindRequest, example: Example | None
    ) -> CandidateScores: ...

    def recall(self, example: Example, origin: Origin | None) -> Example:
        """The example this policy answers a request made from ``example`` as: itself, or,
        for a policy that does not read an intervention, the original ``origin`` names
        (:mod:`~faithprobe.reference_models.memory`)."""
        del origin
        return example

    def saliency(self, request: SaliencyRequest, example: Example | None) -> TokenSaliency:
        answer = self.span(SpanAnswerRequest(request.question, request.context), example)
        where = [] if answer.start < 0 else [(CONTEXT, (answer.start, answer.end))]
        return word_saliency(request, where, answer.start, self.name)


def chosen(n: int, index: int) -> CandidateScores:
    """Log-probabilities of ``n`` options with option ``index`` chosen (module docstring)."""
    if n == 1:
        return CandidateScores((0.0,), (1,))
    rest = math.log((1 - CONFIDENCE) / (n - 1))
    logprobs = tuple(math.log(CONFIDENCE) if i == index else rest for i in range(n))
    return CandidateScores(logprobs, (1,) * n)


def letter_reply(scores: CandidateScores, request: LetterChoiceRequest) -> LetterChoice:
    """A letter choice answered from a policy's ``scores`` of the options: the letter of
    the highest (:data:`NO_CHOICE` where all are equal, n > 1) and, when the request asks
    for ``top_logprobs``, the scores as the letters' log-probabilities."""
    values = scores.logprobs
    flat_scores = len(values) > 1 and max(values) - min(values) < 1e-12
    reply = NO_CHOICE if flat_scores else request.letters[values.index(max(values))]
    logprobs = tuple(values) if request.top_logprobs else None
    return LetterChoice(reply, 1, logprobs)


def flat(n: int) -> CandidateScores:
    """Log-probabilities of ``n`` options, none chosen."""
    return CandidateScores((-math.log(n),) * n, (1,) * n)


def kind_scores(kind: str) -> CandidateScores:
    """An answer-kind answer choosing ``kind`` (one of :data:`ANSWER_KINDS`)."""
    return chosen(len(ANSWER_KINDS), ANSWER_KINDS.index(kind))


def label_scores(labels: Sequence[str], label: str) -> CandidateScores:
    """A text-pair answer choosing ``label`` among ``labels`` (flat if it is not one)."""
    return chosen(len(labels), labels.index(label)) if label in labels else flat(len(labels))


def span_at(context: str, span: Span | None) -> SpanAnswer:
    """The span answer ``context[start:end]``; the null answer for ``None``."""
    if span is None:
        return SpanAnswer("", -1, -1, 0.0, 1.0)
    start, end = span
    return SpanAnswer(context[start:end], start, end, 1.0, 0.0)


def word_saliency(
    request: SaliencyRequest,
    salient: Sequence[tuple[int, Span]],
    answer_start: int,
    name: str,
    values: Sequence[float] | None = None,
) -> TokenSaliency:
    """Saliency over the word tokens of the question, then the context
    (:func:`~faithprobe.reference_models.words.word_spans`): 1 on the tokens overlapping
    a ``(sequence, span)`` of ``salient`` and 0 elsewhere, flat (all 1) when ``salient`` is
    empty, or the given ``values``. The target is the context token where the answer
    starts (the first context token for the null answer); Integrated Gradients' summaries
    all hold the same values."""
    tokens, offsets = [], []
    for sequence, text in enumerate((request.question, request.context)):
        for start, end in word_spans(text):
            tokens.append(text[start:end])
            offsets.append((sequence, start, end))
    if values is None:
        values = [
            float(not salient or any(s == q and a < e and b < end for q, (b, e) in salient))
            for s, a, end in offsets
        ]
    context_tokens = [i for i, o in enumerate(offsets) if o[0] != QUESTION]
    target = next(
        (i for i in context_tokens if offsets[i][1] <= answer_start < offsets[i][2]),
        context_tokens[0] if context_tokens else 0,
    )
    saliency = tuple(float(v) for v in values)
    summaries = {s: saliency for s in IG_SUMMARIES} if request.method == "ig" else {}
    return TokenSaliency(
        request=request,
        tokens=tuple(tokens),
        offsets=tuple(offsets),
        saliency=saliency,
        target=target,
        target_logit=0.0,
        method=request.method,
        settings={"reference": name},
        truncated=False,
        summaries=summaries,
    )
