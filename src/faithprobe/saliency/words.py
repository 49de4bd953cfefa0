"""From subword tokens to words: which tokens make up each word, and saliency per word.

The ``right-reasons`` suite reasons about words (the comparative, the entity a pronoun
refers to, the question words), while saliency comes per subword token. Words are given
as character spans of one text (the question or the context); tokens by their character
spans in that same text (:meth:`~faithprobe.subjects.hf.attribution.base.TokenSaliency.spans`), None
for tokens outside it. Matching by overlap, not by equality, copes with tokenizers whose
offsets include the space before a word (byte-level BPE) and with words split into several
tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Span = tuple[int, int]

_REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max}


def tokens_of_words(
    token_offsets: Sequence[Span | None], word_spans: Sequence[Span]
) -> list[list[int]]:
    """Per word, the indices of the tokens whose span overlaps it (at least one character
    in common), in order. A token with an empty span or None never belongs to a word; a
    token straddling two words belongs to both; a word cut out of the window gets []."""
    return [
        [
            i
            for i, span in enumerate(token_offsets)
            if span is not None and span[0] < span[1] and span[0] < end and start < span[1]
        ]
        for start, end in word_spans
    ]


def aggregate(
    saliency: Sequence[float], groups: Sequence[Sequence[int]], how: str = "sum"
) -> list[float]:
    """Per group of token indices (a word, or a partition of words), the ``sum``, ``mean``
    or ``max`` of their saliency; NaN for an empty group (no token to speak for it)."""
    if how not in _REDUCTIONS:
        raise ValueError(f"unknown aggregation {how!r}; known: {', '.join(_REDUCTIONS)}")
    values = np.asarray(saliency, dtype=np.float64)
    return [float(_REDUCTIONS[how](values[list(g)])) if g else float("nan") for g in groups]


def shares(saliency: Sequence[float], groups: Sequence[Sequence[int]]) -> list[float]:
    """Per group, its part of the total absolute saliency of the input (all tokens, special
    ones included at zero): how much of the saliency a partition (of words) takes. A token
    in several groups counts in each."""
    values = np.abs(np.asarray(saliency, dtype=np.float64))
    total = values.sum()
    return [float(values[list(g)].sum() / total) if total else float("nan") for g in groups]
