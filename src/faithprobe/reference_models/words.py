"""The words reference models read: word tokens with their character spans, and where a
word or phrase is mentioned in a text (content words are the lexical heuristics' own,
:func:`faithprobe.content_words.content_tokens`).

A reference model needs no tokenizer: its saliency is given per word token (a run of letters
and digits, or one punctuation mark), which is how the right-reasons partitions are made
(spaCy words, matched to tokens by overlap), so a word-level saliency maps onto them whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Span = tuple[int, int]

_TOKEN = re.compile(r"\w+|[^\w\s]")


def word_spans(text: str) -> list[Span]:
    """The character span of every word token of ``text`` (module docstring), in order."""
    return [m.span() for m in _TOKEN.finditer(text)]


def mentions(text: str, phrases: Iterable[str]) -> list[Span]:
    """The spans of every whole-word, case-insensitive occurrence of any of ``phrases`` in
    ``text``, in order: "run" is not mentioned in "runs"."""
    found = []
    for phrase in phrases:
        if phrase.strip():
            pattern = rf"(?<!\w){re.escape(phrase.strip())}(?!\w)"
            found += [m.span() for m in re.finditer(pattern, text, flags=re.IGNORECASE)]
    return sorted(found)


def first_word(text: str) -> Span | None:
    """The span of the first run of letters and digits in ``text``; None if it has none."""
    found = re.search(r"\w+", text)
    return found.span() if found else None
