"""Competent shortcut references: readers that answer an intervened item as its original.

The degenerate references (:mod:`~faithprobe.reference_models.degenerate`) ignore their input,
so most of them fail competence and the card calls them *not assessable*, which leaves its
*unfaithful* verdict untested wherever no degenerate model is competent. The models here
are competent by construction (on every original item they are ``ref:reader``) and ignore
exactly one kind of information: shown an intervened example, they answer it as they
answered the example it was made from (its :class:`~faithprobe.records.Origin`), as a model
that has learnt the item and not the reading would.

* ``ref:memoriser`` ignores every intervention: the card must call it unfaithful on every
  step.
* One shortcut per step ignores only the interventions that step is about
  (:data:`SHORTCUTS`): a reader blind to negation, one that keeps answering once the support
  is deleted, an NLI model that reads only the word pair (blind to context swaps) or only
  the context (blind to pair swaps), a multiple-choice picker that ignores the question,
  a reader blind to the comparative, one that does not read the critical fact.
* ``ref:mix:P`` (:class:`Mix`) is the reader on a share ``P`` of the base items and the
  memoriser on the rest, chosen per base item by its ``seed`` setting: the planted model of
  the card's operating curve (:mod:`faithprobe.audit.operating_curve`).

An answer recalled from the original is placed in the intervened request: the same
candidate or label, the same choice position, the same answer text where the new context
holds it (else the null answer: an extractive model can only point into its context).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from faithprobe.records import ChoiceExample, ClozeExample, Example, Origin
from faithprobe.reference_models.policy import flat, span_at
from faithprobe.reference_models.reader import Reader
from faithprobe.reference_models.words import mentions
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    SpanAnswer,
    SpanAnswerRequest,
)
from faithprobe.seeding import rng_for


@dataclass(frozen=True)
class Blindness:
    """What a shortcut ignores: the audit ``step`` it is about, in words (``what``), and
    which of the step's interventions (a pair's intervention name) it answers as the
    original (``ignores``)."""

    step: str
    what: str
    ignores: Callable[[str], bool]


# the suites' names for their interventions: a renamed one breaks tests/test_validity.py
_DELETIONS = {"truncate_story", "truncate_remove_rationale", "remove_support"}
SHORTCUTS: dict[str, Blindness] = {
    "negation-blind": Blindness(
        "faithfulness-negation",
        "reads the story but not its negation: a negated story is answered as the original",
        lambda name: "negat" in name,
    ),
    "support-blind": Blindness(
        "faithfulness-deletion",
        "keeps answering once the sentences the answer rests on are deleted",
        lambda name: name in _DELETIONS,
    ),
    "comparative-blind": Blindness(
        "right-reasons",
        "answers a comparison as before when its comparative becomes the antonym",
        lambda name: name.startswith("comparative_antonym"),
    ),
    "pair-only": Blindness(
        "natural-logic",
        "reads only the inserted word pair: a swapped context is answered as the original",
        lambda name: name in ("I0", "I2"),
    ),
    "context-only": Blindness(
        "natural-logic",
        "reads only the context: a swapped word pair is answered as the original",
        lambda name: name in ("I1", "I3"),
    ),
    "fact-blind": Blindness(
        "distractors",
        "answers from the story's entity, not its critical fact: a swapped fact is answered "
        "as the original",
        lambda name: name.startswith("fact_swap"),
    ),
    "question-blind": Blindness(
        "confidence-shift",
        "picks the answer it knows from the choices alone, whatever the question",
        lambda name: name in ("no_question", "wrong_question", "wrong_question_disjoint"),
    ),
}


class Memoriser(Reader):
    """``ref:memoriser``: the reader on originals; every intervened example answered as its
    original (:meth:`recall`)."""

    name = "memoriser"

    def ignores(self, origin: Origin) -> bool:
        """Whether the intervention that made an example is one this model does not read."""
        del origin
        return True

    def recall(self, example: Example, origin: Origin | None) -> Example:
        return origin.original if origin is not None and self.ignores(origin) else example

    def candidate_scores(
        self, request: CandidateScoreRequest, example: Example | None
    ) -> CandidateScores:
        """The original's candidate where the request still offers it, its choice position
        where the request has as many; flat otherwise."""
        n = len(request.candidates)
        if isinstance(example, ClozeExample) and example.target not in request.candidates:
            return flat(n)
        if isinstance(example, ChoiceExample) and (example.label or 0) >= n:
            return flat(n)
        return super().candidate_scores(request, example)

    def span(self, request: SpanAnswerRequest, example: Example | None) -> SpanAnswer:
        """The reader's span of ``example``, placed in the request's context: as it is when
        the contexts agree, else at the answer text's first whole-word mention (the null
        answer where the context no longer holds it)."""
        answer = super().span(request, example)
        if answer.start < 0 or example.context == request.context:
            return answer
        found = mentions(request.context, [answer.text])
        return span_at(request.context, found[0] if found else None)


class Shortcut(Memoriser):
    """A memoriser of one step's interventions only (:data:`SHORTCUTS`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.blindness = SHORTCUTS[name]

    def ignores(self, origin: Origin) -> bool:
        return self.blindness.ignores(origin.intervention)


class Mix(Memoriser):
    """``ref:mix:P``: on each base item, the reader with probability ``share``, else the
    memoriser; the draw is seeded by ``seed`` and the base item's id, so it does not depend
    on which other items are asked, or in which order."""

    def __init__(self, share: float, seed: int = 0) -> None:
        self.name = f"mix:{share:g}"
        self.share, self.seed = share, seed

    def ignores(self, origin: Origin) -> bool:
        draw = rng_for(self.seed, "ref:mix", origin.original.id).random()
        return draw >= self.share
