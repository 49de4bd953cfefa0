"""A choice's score from its summed token log-probability, by the names of
:data:`~faithprobe.suites.confidence_shift.NORMALISATIONS`.

``per-token`` divides by the choice's token count (which depends on the tokenizer);
``per-char`` and ``per-byte`` divide by the length of the choice's text (without the space
that separates it from the prompt) in characters or UTF-8 bytes, as lm-evaluation-harness's
``acc_norm`` and ``acc_bytes`` do, so they do not depend on the tokenizer. A
multiple-choice classifier's score is one log-probability per whole choice: keep ``sum``
for it (dividing by a length would only rescale its choices unevenly).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def choice_lengths(choices: Sequence[str], normalisation: str, n_tokens: Sequence[int]):
    """What each choice's summed log-probability is divided by (ones for ``sum``)."""
    if normalisation == "sum":
        return np.ones(len(choices))
    if normalisation == "per-token":
        return np.maximum(np.asarray(n_tokens, dtype=float), 1)
    if normalisation == "per-char":
        return np.asarray([max(len(c), 1) for c in choices], dtype=float)
    if normalisation == "per-byte":
        return np.asarray([max(len(c.encode("utf-8")), 1) for c in choices], dtype=float)
    raise ValueError(f"unknown normalisation {normalisation!r}")


def choice_scores(
    logprobs: Sequence[float], n_tokens: Sequence[int], choices: Sequence[str], normalisation: str
) -> np.ndarray:
    """The choices' scores under ``normalisation``: their summed log-probabilities divided
    by :func:`choice_lengths`."""
    return np.asarray(logprobs, dtype=float) / choice_lengths(choices, normalisation, n_tokens)
