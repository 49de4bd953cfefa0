"""Saliency partitions: which words a careful reader needs (positive) and which it does not
(negative), for the ``right-reasons`` suite (Ray Choudhury, Rogers & Augenstein, "Machine
reading, fast and slow").

A model that reads "slowly" should put more saliency on the positive words than on the
negative ones (:mod:`faithprobe.metrics.alignment` tests that). Two question types:

* **comparison** ("Which film came out earlier, Red Harbor or Blue Field?"): positive =
  the comparative's words in the question ("earlier"; "more recently"; for "came out
  earlier" only "earlier", the span :func:`~faithprobe.datasets.comparisons.comparison`
  finds). Negative = the other question words that a reader can do without: not the
  compared entities' words (the answer is one of them, so they are *expected* to matter),
  not values (numbers, dates, and spaCy's other numeric entities: the compared quantity),
  not verbs (POS ``VERB``: "born", "released" name what is compared), not punctuation.
  Auxiliaries (POS ``AUX``: "was", "did") carry tense, not the compared property, so they
  stay negative.
* **coreference**: positive = the context words of the cluster that resolves the question
  (its mentions' character spans come from a resolver, an input here). Negative = the
  other context words that match no question word (case-insensitive): words the question
  shares with the context are lexical cues, which a "fast" reader uses too, so they are
  neither. Punctuation is neither.

Partitions are built on **words** (spaCy tokens, as character spans) by pure functions of
small records (:class:`Word`), so they can be tested on hand-tokenised text;
:func:`tag_words` makes those records with spaCy. :func:`token_partition` then maps a word
partition to the subword tokens of one input
(:func:`~faithprobe.saliency.words.tokens_of_words` on
:meth:`~faithprobe.requests.TokenSaliency.spans`). It lives in ``saliency/`` beside
``words.py``, below the subjects: it is the bridge from words to the tokens of a saliency
answer, whichever backend computed it; the statistics on top are metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from faithprobe.records import QAExample
from faithprobe.saliency.words import tokens_of_words
from faithprobe.sentences import SPACY_MODEL

Span = tuple[int, int]

# spaCy entity labels whose words are values (the things compared), besides POS NUM
VALUE_ENTITIES = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"})


@dataclass(frozen=True)
class Word:
    """One word of a text: its character span, text, universal POS tag and whether it is a
    value (a number or part of a date/quantity entity)."""

    start: int
    end: int
    text: str
    pos: str
    value: bool = False

    @property
    def span(self) -> Span:
        return (self.start, self.end)

    @property
    def punct(self) -> bool:
        return self.pos == "PUNCT"

    def overlaps(self, spans: Iterable[Span]) -> bool:
        return any(self.start < end and start < self.end for start, end in spans)


@dataclass(frozen=True)
class Partition:
    """Positive and negative parts of one input: word spans (:func:`comparison_partition`,
    :func:`coreference_partition`) or token indices (:func:`token_partition`). Disjoint."""

    positive: tuple
    negative: tuple


@cache
def _tagger():
    import spacy

    # POS (tagger + attribute rules) and NER (dates, quantities); no parser, no lemmas
    return spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer"])


def tag_words(texts: Sequence[str]) -> list[tuple[Word, ...]]:
    """The words of each text (spaCy tokens, whitespace tokens dropped)."""
    return [
        tuple(
            Word(
                t.idx,
                t.idx + len(t.text),
                t.text,
                t.pos_,
                t.pos_ == "NUM" or t.ent_type_ in VALUE_ENTITIES,
            )
            for t in doc
            if not t.is_space
        )
        for doc in _tagger().pipe(texts, batch_size=64)
    ]


def comparison_partition(
    question_words: Sequence[Word], comparative: Span, entities: Sequence[Span]
) -> Partition:
    """Word spans of a comparison question: the comparative's words against the question
    words that are none of entity, value, verb, punctuation (module docstring)."""
    positive = [w for w in question_words if w.overlaps([comparative])]
    negative = [
        w
        for w in question_words
        if w not in positive and not (w.punct or w.value or w.pos == "VERB" or w.overlaps(entities))
    ]
    return Partition(tuple(w.span for w in positive), tuple(w.span for w in negative))


def coreference_partition(
    context_words: Sequence[Word], cluster: Sequence[Span], question_words: Sequence[Word]
) -> Partition:
    """Word spans of a coreference question's context: the words of the cluster's mentions
    against the other non-punctuation words that match no question word (module
    docstring)."""
    asked = {w.text.casefold() for w in question_words}
    positive = [w for w in context_words if not w.punct and w.overlaps(cluster)]
    negative = [
        w
        for w in context_words
        if w not in positive and not w.punct and w.text.casefold() not in asked
    ]
    return Partition(tuple(w.span for w in positive), tuple(w.span for w in negative))


def comparison_partition_of(example: QAExample) -> Partition:
    """:func:`comparison_partition` of an example with the comparison features
    (:func:`faithprobe.datasets.comparisons.comparison`), its question tagged by spaCy."""
    features = example.features
    (words,) = tag_words([example.question])
    entities = [tuple(e["question_span"]) for e in features["entities"]]
    return comparison_partition(words, tuple(features["comparative_span"]), entities)


def token_partition(words: Partition, token_offsets: Sequence[Span | None]) -> Partition:
    """The token indices of a word partition in one input: ``token_offsets`` per token its
    span in the partition's text, None elsewhere (``TokenSaliency.spans(0)`` for a
    comparison, ``spans(1)`` for coreference). A token that overlaps both a positive and a
    negative word (a subword straddling a word boundary) speaks for neither and is
    dropped; a word outside the window has no token."""
    positive, negative = (
        {i for group in tokens_of_words(token_offsets, spans) for i in group}
        for spans in (words.positive, words.negative)
    )
    both = positive & negative
    return Partition(tuple(sorted(positive - both)), tuple(sorted(negative - both)))
