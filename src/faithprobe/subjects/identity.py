"""What a local backend's answers are keyed by, declared apart from its code.

A cached answer is found by a key built from the model's fingerprint and the backend's
identity: its kind, its scoring version, and a version per request kind whose code can
change on its own. The backends' modules import torch and transformers; this one imports
neither, so a run whose answers are all cached builds its keys -- and finishes -- without
importing them or loading any weights (:class:`~faithprobe.subjects.deferred.DeferredSubject`).
Each backend class takes its identity from here (:class:`~faithprobe.subjects.hf.base.HFSubject`),
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
    """``kind``: the backend's name, its ``--model`` prefix; ``scoring_version``: bump when
    the scoring code changes what it returns; ``request_versions``: a version per request
    kind answered by code of its own (bumping it invalidates that kind's cached answers
    only); ``cache_kind``: the name the fingerprint is hashed with, when it is not ``kind``
    (three backends had other names before they were named by their prefix; hashing the
    old name keeps the answers already cached under it)."""

    kind: str
    scoring_version: str
    accepts: frozenset[str] = frozenset({CandidateScoreRequest.kind})
    request_versions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cache_kind: str = ""

    @property
    def fingerprint_kind(self) -> str:
        return self.cache_kind or self.kind

    def fingerprint(self, path: str | Path, parts: tuple[str, ...] = ()) -> str:
        """The fingerprint of the model in folder ``path`` under this backend: its files
        (:func:`~faithprobe.subjects.fingerprint.fingerprint_path`), kind and scoring
        version, and the ``parts`` its settings add (where and how it computes:
        :func:`~faithprobe.subjects.local_settings.answer_parts`; none at the defaults on a
        CPU) -- what the loaded model reports too."""
        return fingerprint_path(path, self.fingerprint_kind, self.scoring_version, *parts)


HF_CAUSAL = Identity(
    "hf-causal",
    "causal-v3",  # v2: packed scoring; v3: requests share packed rows (rounding moves, <1e-4)
    frozenset({CandidateScoreRequest.kind, GenerationRequest.kind, PromptSaliencyRequest.kind}),
    MappingProxyType(
        {
            GenerationRequest.kind: "generation-v2",  # bump when generation changes
            # bump when faithprobe.subjects.hf.attribution (causal.py) changes what it returns
            PromptSaliencyRequest.kind: "prompt-saliency-v1",
        }
    ),
)
HF_MASKED = Identity("hf-masked", "masked-v1")
HF_MC = Identity("hf-mc", "mc-v1", cache_kind="multiple-choice")
HF_NLI = Identity(
    "hf-nli", "pair-v1", frozenset({TextPairRequest.kind}), cache_kind="nli-classifier"
)
HF_QA = Identity(
    "hf-qa",
    "qa-v2",  # v2: a model folder's answer-kind head is loaded (answer-kind requests)
    # a model with an answer-kind head accepts AnswerKindRequest too (the backend adds it)
    frozenset({SpanAnswerRequest.kind, SaliencyRequest.kind}),
    MappingProxyType(
        {
            # bump when hf.attribution changes what it returns (v2: IG summaries l1, dot)
            SaliencyRequest.kind: "saliency-v2",
            # bump when the answer-kind head's reading (window choice, log-softmax) changes
            AnswerKindRequest.kind: "answer-kind-v1",
        }
    ),
    cache_kind="extractive-qa",
)
