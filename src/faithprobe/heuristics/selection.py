"""Sentence selectors: which sentence of the context most likely holds the answer.

A selector has a ``name`` and one verb, ``select(question, sentences) -> index``.
:meth:`Selector.select_many` answers many questions at once; selectors that profit from
batching (the sentence encoder) override it, the others loop.

Ties go to the earlier sentence (``max`` keeps the first maximum): when nothing tells two
sentences apart, the earlier one is the better guess, as the first-sentence baseline shows.
A question with no content word scores every sentence 0 and so gets the first sentence.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from faithprobe.content_words import content_tokens


def best_index(scores: Sequence[float]) -> int:
    """The index of the highest score, the earliest on a tie."""
    if not scores:
        raise ValueError("a context without sentences has no sentence to select")
    return max(range(len(scores)), key=scores.__getitem__)


class Selector(ABC):
    name: str

    @abstractmethod
    def select(self, question: str, sentences: Sequence[str]) -> int:
        """Index of the sentence to answer ``question`` from."""

    def select_many(
        self, questions: Sequence[str], sentences: Sequence[Sequence[str]]
    ) -> list[int]:
        """:meth:`select` for each (question, its context's sentences)."""
        return [self.select(q, s) for q, s in zip(questions, sentences, strict=True)]


class FirstSentence(Selector):
    """Always the first sentence: what position alone gives."""

    name = "first"

    def select(self, question: str, sentences: Sequence[str]) -> int:
        return best_index([0.0] * len(sentences))


class LexicalSelector(Selector):
    """The sentence scoring highest by ``score(question tokens, sentence tokens)`` over
    :func:`~faithprobe.content_words.content_tokens`."""

    def __init__(self, name: str, score: Callable[[list[str], list[str]], float]) -> None:
        self.name = name
        self.score = score

    def select(self, question: str, sentences: Sequence[str]) -> int:
        q = content_tokens(question)
        return best_index([self.score(q, content_tokens(s)) for s in sentences])


def overlap(question: list[str], sentence: list[str]) -> float:
    """How many distinct question words the sentence holds."""
    return float(len(set(question) & set(sentence)))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> float:
    """Length of the longest common subsequence of two token sequences: overlap that
    also keeps the question's word order."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return float(previous[-1])


def token_overlap() -> Selector:
    return LexicalSelector("overlap", overlap)


def longest_common_subsequence() -> Selector:
    return LexicalSelector("lcs", lcs_length)
