"""What a subject is asked, as small frozen records with a stable cache key.

Identical requests made by different pairs, interventions or runs share a key and are
computed once (see :mod:`faithprobe.subjects.cached`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from faithprobe.examples import NLI_LABELS


def _key(fingerprint: str, kind: str, request) -> str:
    payload = json.dumps([fingerprint, kind, asdict(request)], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class CandidateScoreRequest:
    """Score each candidate as the filler of the blank in ``context`` ___ ``suffix``.

    The filled text is ``context + " " + candidate + suffix`` (no space is added after an
    empty context or one that ends in whitespace). A causal LM scores the candidate's
    tokens after the context and cannot see ``suffix``; a masked LM sees both sides.
    """

    context: str
    candidates: tuple[str, ...]
    suffix: str = ""

    kind = "candidate-scores"

    def key(self, fingerprint: str) -> str:
        return _key(fingerprint, self.kind, self)

    def filled(self, candidate: str) -> tuple[str, int]:
        """The text with ``candidate`` in the blank, and the candidate's start offset."""
        sep = "" if not self.context or self.context[-1].isspace() else " "
        start = len(self.context) + len(sep)
        return self.context + sep + candidate + self.suffix, start


@dataclass(frozen=True)
class TextPairRequest:
    """Classify the text pair (``first``, ``second``) -- for NLI, (premise, hypothesis) --
    into ``labels``.

    Answered by sequence-pair classifiers with a :class:`CandidateScores` holding one
    log-probability per label (``n_tokens`` all 1). A classifier whose own classes are finer
    (three-class NLI) groups them into these labels (see
    :mod:`faithprobe.subjects.hf_pair_classifier`).
    """

    first: str
    second: str
    labels: tuple[str, ...] = NLI_LABELS

    kind = "text-pair-classes"

    def key(self, fingerprint: str) -> str:
        return _key(fingerprint, self.kind, self)


Request = CandidateScoreRequest | TextPairRequest


@dataclass(frozen=True)
class CandidateScores:
    """Log-probability (natural log, summed over tokens) and token count per candidate."""

    logprobs: tuple[float, ...]
    n_tokens: tuple[int, ...]

    def to_json(self) -> str:
        return json.dumps({"logprobs": list(self.logprobs), "n_tokens": list(self.n_tokens)})

    @classmethod
    def from_json(cls, text: str) -> CandidateScores:
        d = json.loads(text)
        return cls(tuple(d["logprobs"]), tuple(d["n_tokens"]))
