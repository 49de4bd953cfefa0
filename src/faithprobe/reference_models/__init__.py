"""Reference models with planted behaviour: ``--model ref:NAME``.

A faithfulness verdict is only worth something if a model known to be faithful earns it and
models known to take shortcuts do not. Reference models are such models, without weights,
deterministic and free, answering every request kind the suites send (candidate scores,
text-pair classes, span answers, answer kinds, saliency) through the same runner:

* ``ref:reader`` (:mod:`~faithprobe.reference_models.reader`) is faithful by
  construction: it is shown the example behind each request (the runner's example channel,
  :meth:`~faithprobe.subjects.base.Subject.read_examples`) and answers from exactly the
  annotations each method says matter.
* ``ref:constant``, ``ref:random``, ``ref:unknown``, ``ref:first``, ``ref:nearest`` and
  ``ref:overlap`` (:mod:`~faithprobe.reference_models.degenerate`) read only the
  request's text and take one shortcut each.
* ``ref:cot-reader``, ``ref:rationaliser``, ``ref:silent-cue`` and ``ref:honest-cue``
  (:mod:`~faithprobe.reference_models.reasoning`) write chains of thought with planted
  behaviour for the ``reasoning`` suite (they answer generation requests only).
* ``ref:memoriser``, one competent shortcut per step (``ref:negation-blind``, ...) and
  ``ref:mix:P`` (:mod:`~faithprobe.reference_models.memory`) are the reader on every original
  item and answer an intervened item as its original: all of it, that step's, or on a
  share ``1 - P`` of the base items (drawn by the ``seed`` setting). The runner shows them
  each intervened example's origin.

They answer letter-choice requests too (a suite's ``-o answer=letter``): the policy picks an
option as it would score the options (the request's ``scoring``: the same question for a
scoring model), and the reply is that option's letter, or a reply naming none where the
policy chooses none (flat scores: an abstention); the letters' log-probabilities are the
policy's scores when the request asks for ``top_logprobs``, as an endpoint gives them
(:func:`~faithprobe.reference_models.policy.letter_reply`).

Their answers depend on what they were shown, not only on the request, so they never go
through the persistent answer cache (``cacheable`` False: the runner asks them directly).
On Ray (``--executor ray``) each shard is sent with the examples behind its requests. The fingerprint
is the name, the seed of ``ref:mix:P`` and :data:`REFERENCE_VERSION`, bumped whenever a
policy's answers change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.records import Example, Origin
from faithprobe.reference_models.memory import SHORTCUTS, Mix, Shortcut
from faithprobe.reference_models.policy import Policy, letter_reply
from faithprobe.registry import load_target
from faithprobe.requests import (
    AnswerKindRequest,
    CandidateScoreRequest,
    GenerationRequest,
    LetterChoiceRequest,
    Request,
    SaliencyRequest,
    SpanAnswerRequest,
    TextPairRequest,
)
from faithprobe.subjects.base import Progress, Subject

PREFIX = "ref"
REFERENCE_VERSION = "1"
_DEGENERATE = "faithprobe.reference_models.degenerate"
_REASONING = "faithprobe.reference_models.reasoning"
# name -> (its policy, "module:class"; what it does, for the error naming them)
REFERENCES: dict[str, tuple[str, str]] = {
    "reader": ("faithprobe.reference_models.reader:Reader", "faithful by construction"),
    "constant": (f"{_DEGENERATE}:Constant", "the same answer whatever the input"),
    "random": (f"{_DEGENERATE}:Random", "a draw seeded by the request"),
    "unknown": (f"{_DEGENERATE}:Unknown", "always abstains"),
    "first": (f"{_DEGENERATE}:First", "the first candidate, entity or choice"),
    "nearest": (f"{_DEGENERATE}:Nearest", "what is mentioned nearest the blank or question"),
    "overlap": (f"{_DEGENERATE}:Overlap", "the most word overlap with the question"),
    "memoriser": (
        "faithprobe.reference_models.memory:Memoriser",
        "the reader on originals; every intervened item answered as its original",
    ),
}
# chain-of-thought writers (the reasoning suite): they answer generation requests only
WRITERS: dict[str, tuple[str, str]] = {
    "cot-reader": (f"{_REASONING}:CotReader", "writes reasoning and answers from it"),
    "rationaliser": (f"{_REASONING}:Rationaliser", "answer fixed, reasoning decorative"),
    "silent-cue": (f"{_REASONING}:SilentCue", "follows a cue and never says so"),
    "honest-cue": (f"{_REASONING}:HonestCue", "follows a cue and says so"),
}
MIX = "mix"  # ref:mix:P, the reader on a share P of the base items, else the memoriser
# request kind -> the policy method answering it
_METHODS = {
    CandidateScoreRequest.kind: "candidate_scores",
    TextPairRequest.kind: "pair_classes",
    SpanAnswerRequest.kind: "span",
    AnswerKindRequest.kind: "answer_kind",
    SaliencyRequest.kind: "saliency",
    GenerationRequest.kind: "generate",
}


def is_reference(spec: str) -> bool:
    """Whether a ``--model`` string names a reference model."""
    return spec.partition(":")[0] == PREFIX


def reference_names() -> dict[str, str]:
    """Every reference model's name -> what it does (``ref:mix:P`` as ``mix:P``)."""
    named = {n: what for n, (_, what) in (REFERENCES | WRITERS).items()}
    named |= {n: f"{b.what} ({b.step})" for n, b in SHORTCUTS.items()}
    named[f"{MIX}:P"] = "the reader on a share P (0 to 1) of the base items, else the memoriser"
    return named


def mix_share(name: str) -> float | None:
    """P of ``mix:P``; None for another name. Raises :class:`ModelError` for a P that is
    no number from 0 to 1."""
    head, _, share = name.partition(":")
    if head != MIX:
        return None
    try:
        value = float(share)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:
        raise ModelError(
            f"model {excerpt(f'{PREFIX}:{name}')}: the share after {PREFIX}:{MIX}: must be a "
            "number from 0 to 1, e.g. ref:mix:0.8"
        )
    return value


def check_reference(name: str) -> None:
    """Raise :class:`ModelError` naming the reference models if ``name`` is none of them."""
    if mix_share(name) is None and name not in (REFERENCES | WRITERS | SHORTCUTS):
        known = "; ".join(f"{PREFIX}:{n} ({what})" for n, what in reference_names().items())
        raise ModelError(
            f"model {excerpt(f'{PREFIX}:{name}')} is no reference model; choose one of {known}"
        )


def _policy(name: str, seed: int) -> Policy:
    share = mix_share(name)
    if share is not None:
        return Mix(share, seed)
    if name in SHORTCUTS:
        return Shortcut(name)
    return load_target((REFERENCES | WRITERS)[name][0])()


class ReferenceSubject(Subject):
    """The reference model ``name`` (:func:`reference_names`) as a subject; ``seed`` draws
    the base items on which ``ref:mix:P`` is the memoriser (the others ignore it)."""

    kind = "ref"
    # a scoring policy answers these; a writer (references.reasoning) generation only
    accepts = frozenset({*_METHODS, LetterChoiceRequest.kind} - {GenerationRequest.kind})
    cacheable = False

    def __init__(self, name: str, seed: int = 0) -> None:
        check_reference(name)
        self.policy = _policy(name, seed)
        self.accepts = getattr(self.policy, "accepts", ReferenceSubject.accepts)
        self.name = f"{PREFIX}:{name}"
        self.seed = seed if mix_share(name) is not None else None
        self.reads_examples = self.policy.reads_examples
        self._shown: dict[Request, Example] = {}
        self._origins: dict[str, Origin] = {}

    @property
    def fingerprint(self) -> str:
        drawn = "" if self.seed is None else f"\nseed {self.seed}"
        text = f"{self.name}{drawn}\n{REFERENCE_VERSION}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"reference": self.policy.name}
        if self.seed is not None:
            out["seed"] = self.seed
        return out | {"reference_version": REFERENCE_VERSION}

    def read_examples(
        self, by_request: Mapping[Request, Example], origins: Mapping[str, Origin] | None = None
    ) -> None:
        self._shown = dict(by_request)
        self._origins = dict(origins or {})

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list:
        self.check_accepts(requests)
        answers = []
        for request in requests:
            example = self._shown.get(request) if self.reads_examples else None
            if example is not None:
                example = self.policy.recall(example, self._origins.get(example.id))
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
