"""Every selector x extractor on QA examples: one row per (heuristic, example).

Contexts are split into sentences once (:func:`faithprobe.sentences.split_many`) and
parsed once with spaCy's full small pipeline (``nlp.pipe``, batched: NER and noun chunks
for the extractors). Each selector picks a sentence for every question; each extractor
then answers from it. The ``oracle`` selector is the sentence holding the first gold
answer's start: with an extractor, the most that sentence selection can give it. An example
without answer offsets (an unanswerable SQuAD 2.0 question) has no oracle row.

Predictions frame columns: ``heuristic`` (``selector+extractor``), ``selector``,
``extractor``, ``original_id``, ``passage_id`` (the bootstrap's cluster), ``question``,
``sentence_index``, ``sentence_start``/``sentence_end`` (characters of the context),
``answer_sentence`` (the selected sentence holds the start of some gold answer),
``prediction`` and ``answers``; :func:`~faithprobe.baseline.scoring.score_rows` adds
``em`` and ``f1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from faithprobe.heuristics.encoder import EncoderSelector
from faithprobe.heuristics.extraction import Extractor, default_extractors
from faithprobe.heuristics.selection import (
    FirstSentence,
    Selector,
    longest_common_subsequence,
    token_overlap,
)
from faithprobe.parsing import parser
from faithprobe.qa.questions import passage_id
from faithprobe.records import QAExample
from faithprobe.seeding import hash_rank
from faithprobe.sentences import DEFAULT_SPLITTER, Span, sentence_at, split_many

ORACLE = "oracle"


def default_selectors() -> list[Selector]:
    return [FirstSentence(), token_overlap(), longest_common_subsequence(), EncoderSelector()]


def sample(examples: Sequence[QAExample], limit: int | None, seed: int) -> list[QAExample]:
    """``limit`` examples, the first in a seeded hash order of their ids (as the suites
    sample), kept in file order; all of them for ``None``."""
    if limit is None:
        return list(examples)
    keep = set(sorted((e.id for e in examples), key=lambda i: hash_rank(seed, i))[:limit])
    return [e for e in examples if e.id in keep]


def _answer_sentences(example: QAExample, spans: Sequence[Span]) -> list[int]:
    """Indices of the sentences holding a gold answer's start, the first answer's first."""
    return [sentence_at(spans, s) for s in example.answer_starts if s >= 0]


def predict(
    examples: Sequence[QAExample],
    *,
    selectors: Sequence[Selector] | None = None,
    extractors: Sequence[Extractor] | None = None,
    splitter: str = DEFAULT_SPLITTER,
    batch_size: int = 32,
) -> pd.DataFrame:
    """The predictions frame (see the module docstring)."""
    selectors = default_selectors() if selectors is None else selectors
    extractors = default_extractors() if extractors is None else extractors
    contexts = list(dict.fromkeys(e.context for e in examples))
    spans = dict(zip(contexts, split_many(contexts, splitter), strict=True))
    docs = dict(zip(contexts, parser().pipe(contexts, batch_size=batch_size), strict=True))
    texts = [[e.context[s:t] for s, t in spans[e.context]] for e in examples]
    questions = [e.question for e in examples]
    golds = [_answer_sentences(e, spans[e.context]) for e in examples]
    choices = {s.name: s.select_many(questions, texts) for s in selectors}
    choices[ORACLE] = [g[0] if g else None for g in golds]
    rows = []
    for selector, picked in choices.items():
        for example, index, gold in zip(examples, picked, golds, strict=True):
            if index is None:
                continue
            start, end = spans[example.context][index]
            sentence = docs[example.context].char_span(start, end, alignment_mode="expand")
            for extractor in extractors:
                rows.append(
                    {
                        "heuristic": f"{selector}+{extractor.name}",
                        "selector": selector,
                        "extractor": extractor.name,
                        "original_id": example.id,
                        "passage_id": passage_id(example),
                        "question": example.question,
                        "sentence_index": index,
                        "sentence_start": start,
                        "sentence_end": end,
                        "answer_sentence": index in gold,
                        "prediction": extractor.extract(example.question, sentence),
                        "answers": list(example.answers),
                    }
                )
    return pd.DataFrame(rows)
