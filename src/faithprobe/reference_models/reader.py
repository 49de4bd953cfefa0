"""``ref:reader``: a reference model faithful by construction.

It answers from the annotations of the example each request was made from (the runner's
example channel, :meth:`faithprobe.subjects.base.Subject.read_examples`), using exactly the
information each method says matters and nothing else:

* **cloze** (distractors): the target, the word the critical fact gives; attractors change
  nothing (the target gets :data:`~faithprobe.reference_models.policy.CONFIDENCE`, the
  other candidates equal shares of the rest).
* **multiple choice** (confidence-shift): the right choice; flat scores where no choice is
  right (``label`` None: the question or the right answer was taken away).
* **NLI** (natural-logic): the natural-logic label of the example's features, entailment
  iff the context's monotonicity and the inserted pair's relation agree ((leq, up) or
  (geq, down), :func:`faithprobe.datasets.nli_xy.gold_label`); the gold label where the
  features are absent (challenge sets); flat without either.
* **span answer** (faithfulness deletion, right-reasons): the gold answer's span while what
  it rests on is in the context (:func:`support_present`), else the null answer; on a
  counterfactual, the counterfactual's own gold.
* **answer kind** (the yes/no probe): the example's own answer kind (yes or no, negation
  edits included), *unknown* once the support is gone.
* **saliency** (right-reasons): all of the mass on the words the answer depends on by the
  method's partition (:mod:`faithprobe.saliency.partitions`): the comparative in the
  question of a comparison (``features["comparative_span"]``), the mentions of the
  resolving cluster in the context of a coreference question (``features["cluster"]``);
  none elsewhere, so every instance it answers right is aligned.
"""

from __future__ import annotations

from faithprobe.datasets.nli_xy import gold_label
from faithprobe.errors import UsageError
from faithprobe.qa.answers import occurs
from faithprobe.records import UNKNOWN, ChoiceExample, ClozeExample, Example, NLIExample, QAExample
from faithprobe.reference_models.policy import (
    Policy,
    chosen,
    flat,
    kind_scores,
    label_scores,
    span_at,
    word_saliency,
)
from faithprobe.reference_models.words import Span, mentions
from faithprobe.requests import (
    CONTEXT,
    QUESTION,
    AnswerKindRequest,
    CandidateScoreRequest,
    CandidateScores,
    SaliencyRequest,
    SpanAnswer,
    SpanAnswerRequest,
    TextPairRequest,
    TokenSaliency,
)


def support_present(example: QAExample) -> bool:
    """Whether what the answer rests on is still in the context: its rationale where the
    example has one; nothing where a deletion took the rationale away (the example lists the
    sentences it ``removed`` and keeps no rationale), even when the bare answer was
    re-inserted; else, for an example never given a rationale, the answer itself (a yes/no
    answer counts as present). An answer of kind *unknown* rests on nothing."""
    if example.answer_type == UNKNOWN:
        return False
    if example.rationale:
        return True
    if example.features.get("removed"):
        return False
    if example.answer_type in ("yes", "no"):
        return True
    return any(occurs(a, example.context) for a in example.answers)


def answer_span(example: QAExample) -> Span | None:
    """Where a gold answer is in the context: at its recorded start, else its first
    whole-word occurrence (ignoring case); None if no gold answer is a span of it."""
    for answer, start in zip(example.answers, example.answer_starts, strict=False):
        if start >= 0 and example.context[start : start + len(answer)] == answer:
            return start, start + len(answer)
    for answer in example.answers:
        if found := mentions(example.context, [answer]):
            return found[0]
    return None


def _shown(example: Example | None, kinds: tuple[type, ...], request) -> Example:
    """``example`` if it is one of ``kinds``; else the error of a request asked without the
    example the reader needs (the runner shows it; a direct caller must too)."""
    if not isinstance(example, kinds):
        got = "no example" if example is None else f"a {type(example).__name__}"
        wanted = " or ".join(k.__name__ for k in kinds)
        raise UsageError(
            f"ref:reader answers from the example behind each request: for a {request.kind} "
            f"request it was shown {got}, not a {wanted}"
        )
    return example


class Reader(Policy):
    name = "reader"
    reads_examples = True

    def candidate_scores(
        self, request: CandidateScoreRequest, example: Example | None
    ) -> CandidateScores:
        n = len(request.candidates)
        shown = _shown(example, (ClozeExample, ChoiceExample), request)
        if isinstance(shown, ClozeExample):
            return chosen(n, request.candidates.index(shown.target))
        return flat(n) if shown.label is None else chosen(n, shown.label)

    def pair_classes(self, request: TextPairRequest, example: Example | None) -> CandidateScores:
        nli = _shown(example, (NLIExample,), request)
        features = nli.features
        if "monotonicity" in features and "relation" in features:
            return label_scores(
                request.labels, gold_label(features["relation"], features["monotonicity"])
            )
        if nli.label is None:
            return flat(len(request.labels))
        return label_scores(request.labels, nli.label)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        qa = _shown(example, (QAExample,), request)
        return span_at(qa.context, answer_span(qa) if support_present(qa) else None)

    def answer_kind(self, request: AnswerKindRequest, example: Example | None) -> CandidateScores:
        qa = _shown(example, (QAExample,), request)
        if not support_present(qa):
            return kind_scores(UNKNOWN)
        return kind_scores(qa.answer_type if qa.answer_type in ("yes", "no") else "span")

    def saliency(self, request: SaliencyRequest, example: Example | None) -> TokenSaliency:
        qa = _shown(example, (QAExample,), request)
        features = qa.features
        if "cluster" in features:
            salient = [(CONTEXT, (s, e)) for s, e in features["cluster"]]
        elif "comparative_span" in features:
            salient = [(QUESTION, tuple(features["comparative_span"]))]
        else:
            salient = []
        span = answer_span(qa)
        return word_saliency(request, salient, -1 if span is None else span[0], self.name)
