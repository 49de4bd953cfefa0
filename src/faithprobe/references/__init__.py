"""Reference models with planted behaviour: ``--model ref:NAME``.

A faithfulness verdict is only worth something if a model known to be faithful earns it and
models known to take shortcuts do not. Reference models are such models, without weights,
deterministic and free, answering every request kind the suites send (candidate scores,
text-pair classes, span answers, answer kinds, saliency) through the same runner:

* ``ref:reader`` (:mod:`~faithprobe.references.reader`) is faithful by
  construction: it is shown the example behind each request (the runner's example channel,
  :meth:`~faithprobe.subjects.base.Subject.read_examples`) and answers from exactly the
  annotations each method says matter.
* ``ref:constant``, ``ref:random``, ``ref:unknown``, ``ref:first``, ``ref:nearest`` and
  ``ref:overlap`` (:mod:`~faithprobe.references.degenerate`) read only the
  request's text and take one shortcut each.

They answer letter-choice requests too (a suite's ``-o answer=letter``): the policy picks an
option as it would score the options (the request's ``scoring``: the same question for a
scoring model), and the reply is that option's letter, or a reply naming none where the
policy chooses none (flat scores: an abstention); the letters' log-probabilities are the
policy's scores when the request asks for ``top_logprobs``, as an endpoint gives them
(:func:`~faithprobe.references.policy.letter_reply`).

Their answers depend on what they were shown, not only on the request, so they never go
through the persistent answer cache (``cacheable`` False: the runner asks them directly).
They answer in the runner's process only (``--executor ray`` refuses them). The fingerprint
is the name and :data:`REFERENCE_VERSION`, bumped whenever a policy's answers change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.examples import Example
from faithprobe.references.policy import letter_reply
from faithprobe.registry import load_target
from faithprobe.requests import (
    AnswerKindRequest,
    CandidateScoreRequest,
    LetterChoiceRequest,
    Request,
    SaliencyRequest,
    SpanAnswerRequest,
    TextPairRequest,
)
from faithprobe.subjects.base import Progress, Subject

PREFIX = "ref"
REFERENCE_VERSION = "1"
_DEGENERATE = "faithprobe.references.degenerate"
# name -> (its policy, "module:class"; what it does, for the error naming them)
REFERENCES: dict[str, tuple[str, str]] = {
    "reader": ("faithprobe.references.reader:Reader", "faithful by construction"),
    "constant": (f"{_DEGENERATE}:Constant", "the same answer whatever the input"),
    "random": (f"{_DEGENERATE}:Random", "a draw seeded by the request"),
    "unknown": (f"{_DEGENERATE}:Unknown", "always abstains"),
    "first": (f"{_DEGENERATE}:First", "the first candidate, entity or choice"),
    "nearest": (f"{_DEGENERATE}:Nearest", "what is mentioned nearest the blank or question"),
    "overlap": (f"{_DEGENERATE}:Overlap", "the most word overlap with the question"),
}
# request kind -> the policy method answering it
_METHODS = {
    CandidateScoreRequest.kind: "candidate_scores",
    TextPairRequest.kind: "pair_classes",
    SpanAnswerRequest.kind: "span",
    AnswerKindRequest.kind: "answer_kind",
    SaliencyRequest.kind: "saliency",
}


def is_reference(spec: str) -> bool:
    """Whether a ``--model`` string names a reference model."""
    return spec.partition(":")[0] == PREFIX


def check_reference(name: str) -> None:
    """Raise :class:`ModelError` naming the reference models if ``name`` is none of them."""
    if name not in REFERENCES:
        known = "; ".join(f"{PREFIX}:{n} ({what})" for n, (_, what) in REFERENCES.items())
        raise ModelError(
            f"model {excerpt(f'{PREFIX}:{name}')} is no reference model; choose one of {known}"
        )


class ReferenceSubject(Subject):
    """The reference model ``name`` (one of :data:`REFERENCES`) as a subject."""

    kind = "ref"
    accepts = frozenset({*_METHODS, LetterChoiceRequest.kind})
    cacheable = False

    def __init__(self, name: str) -> None:
        check_reference(name)
        self.policy = load_target(REFERENCES[name][0])()
        self.name = f"{PREFIX}:{name}"
        self.reads_examples = self.policy.reads_examples
        self._shown: dict[Request, Example] = {}

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(f"{self.name}\n{REFERENCE_VERSION}".encode()).hexdigest()[:16]

    def describe(self) -> dict[str, object]:
        return {"reference": self.policy.name, "reference_version": REFERENCE_VERSION}

    def read_examples(self, by_request: Mapping[Request, Example]) -> None:
        self._shown = dict(by_request)

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list:
        self.check_accepts(requests)
        answers = []
        for request in requests:
            example = self._shown.get(request) if self.reads_examples else None
            answers.append(self._answer(request, example))
        if progress:
            progress(len(requests))
        return answers

    def _answer(self, request: Request, example: Example | None):
        """The policy's answer; a letter choice is answered by scoring its options."""
        if not isinstance(request, LetterChoiceRequest):
            return getattr(self.policy, _METHODS[request.kind])(request, example)
        if request.scoring is None:
            raise UsageError(
                f"{self.name} answers a letter choice by scoring its options: the request "
                "must carry them (its scoring request)"
            )
        scores = getattr(self.policy, _METHODS[request.scoring.kind])(request.scoring, example)
        return letter_reply(scores, request)
