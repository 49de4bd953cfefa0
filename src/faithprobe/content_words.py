"""The word tokens the lexical heuristics compare: lowercased, stop words removed.

Words are runs of letters and digits (``\\w+``), so punctuation never matches; stop words
are spaCy's English list (``spacy.lang.en.stop_words.STOP_WORDS``), so "the" and "of" do
not make a sentence look like the question. A regular expression rather than spaCy's
tokenizer: selectors compare thousands of sentence-question pairs and need no parse.
"""

from __future__ import annotations

import re

from spacy.lang.en.stop_words import STOP_WORDS

_WORD = re.compile(r"\w+")


def content_tokens(text: str) -> list[str]:
    """The lowercased words of ``text`` that are not stop words, in order."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def is_novel(phrase: str, question_tokens: set[str]) -> bool:
    """Whether ``phrase`` says something the question does not: it has a content word and
    not all of its content words occur in the question. A question's own words are its
    anchors, not its answer; a phrase of stop words only ("it", "his") is no answer."""
    words = content_tokens(phrase)
    return bool(words) and not set(words) <= question_tokens
