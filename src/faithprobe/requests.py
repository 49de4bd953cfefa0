"""What a subject is asked, as small frozen records with a stable cache key.

Identical requests made by different pairs, interventions or runs share a key and are
computed once (see :mod:`faithprobe.subjects.cached`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass


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
        payload = json.dumps([fingerprint, self.kind, asdict(self)], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    def filled(self, candidate: str) -> tuple[str, int]:
        """The text with ``candidate`` in the blank, and the candidate's start offset."""
        sep = "" if not self.context or self.context[-1].isspace() else " "
        start = len(self.context) + len(sep)
        return self.context + sep + candidate + self.suffix, start


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
