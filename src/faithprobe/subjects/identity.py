"""What a local backend's answers are keyed by, declared apart from its code.

A cached answer is found by a key built from the model's fingerprint and the backend's
identity: its kind, its scoring version, and a version per request kind whose code can
change on its own. The backends' modules import torch and transformers; this one imports
neither, so a run whose answers are all cached builds its keys -- and finishes -- without
importing them or loading any weights (:class:`~faithprobe.subjects.deferred.DeferredSubject`).
Each backend class takes its identity from here (:class:`~faithprobe.subjects.hf_base.HFSubject`),
so there is one place to bump a version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from faithprobe.requests import (
    AnswerKindRequest,
    CandidateScoreRequest,
    GenerationRequest,
    PromptSaliencyRequest,
    SaliencyRequest,
    SpanAnswerRequest,
    TextPairRequest,
)
from faithprobe.subjects.fingerprint import fingerprint_path


@dataclass(frozen=True)
class Identity:
    """``scoring_version``: bump when the scoring code changes what it returns;
    ``request_versions``: a version per request kind answered by code of its own (bumping
    it invalidates that kind's cached answers only)."""

    kind: str
    scoring_version: str
    accepts: frozenset[str] = frozenset({CandidateScoreRequest.kind})
    request_versions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def fingerprint(self, path: str | Path) -> str:
        """The fingerprint of the model in folder ``path`` under this backend: its files
        (:func:`~faithprobe.subjects.fingerprint.fingerprint_path`), kind and scoring
        version -- what the loaded model reports too."""
        return fingerprint_path(path, self.kind, self.scoring_version)


HF_CAUSAL = Identity(
    "hf-causal",
    "causal-v3",  # v2: packed scoring; v3: requests share packed rows (rounding moves, <1e-4)
    frozenset({CandidateScoreRequest.kind, GenerationRequest.kind, PromptSaliencyRequest.kind}),
    MappingProxyType(
        {
            GenerationRequest.kind: "generation-v2",  # bump when generation changes
            # bump when faithprobe.attribution (causal.py) changes what it returns
            PromptSaliencyRequest.kind: "prompt-saliency-v1",
        }
    ),
)
HF_MASKED = Identity("hf-masked", "masked-v1")
HF_MULTIPLE_CHOICE = Identity("multiple-choice", "mc-v1")
HF_PAIR_CLASSIFIER = Identity("nli-classifier", "pair-v1", frozenset({TextPairRequest.kind}))
HF_EXTRACTIVE_QA = Identity(
    "extractive-qa",
    "qa-v2",  # v2: a model folder's answer-kind head is loaded (answer-kind requests)
    # a model with an answer-kind head accepts AnswerKindRequest too (the backend adds it)
    frozenset({SpanAnswerRequest.kind, SaliencyRequest.kind}),
    MappingProxyType(
        {
            # bump when faithprobe.attribution changes what it returns (v2: IG summaries l1, dot)
            SaliencyRequest.kind: "saliency-v2",
            # bump when the answer-kind head's reading (window choice, log-softmax) changes
            AnswerKindRequest.kind: "answer-kind-v1",
        }
    ),
)
