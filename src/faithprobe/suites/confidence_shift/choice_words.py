"""The words of a prompt or a choice, as the ``confidence-shift`` analyses count them:
lowercased runs of letters and digits (``\\w+``), so punctuation is no word and "don't" is
two."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The lowercased words of ``text``, in order."""
    return _WORD.findall(str(text).lower())


def overlap(choice: str, prompt: str) -> float:
    """The share of the choice's distinct words that occur in the prompt (0 for a choice
    without words)."""
    own = set(words(choice))
    return len(own & set(words(prompt))) / len(own) if own else 0.0
