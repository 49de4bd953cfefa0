"""SQuAD-format JSON (SQuAD v1.1 and v2.0, Quoref) -> :class:`QAExample`.

Every question is one example, id ``squad-<question id>`` (``quoref-<question id>`` for
Quoref, recognised by its paragraphs' ``context_id``). Gold answers keep their character
offsets. A SQuAD v2.0 question with ``is_impossible`` becomes an ``"unknown"`` example whose
gold answer is ``"unknown"`` (its ``plausible_answers`` go to ``features``).

SQuAD annotates no rationale, so one is derived (``rationale=``):

* ``"sentence"`` (default, the method's choice): the sentence holding the first gold
  answer's start -- extended to the following sentence(s) when the answer runs past a
  sentence boundary (a splitter error; 15 of SQuAD v1.1 dev's 10,570 with spaCy), so that
  the rationale always covers the answer.
* ``"answer"``: the first gold answer's span itself.

SQuAD lists one answer per annotator (alternatives); Quoref lists the spans of *one*
multi-span answer. For Quoref questions with several spans ``features["multi_span"]`` is
true and the rationale covers every span's sentence.

An answer whose ``answer_start`` does not point at its text is an error, except that an
occurrence of the text at most ``offset_tolerance`` characters away is taken instead and
counted in ``features["offsets_repaired"]``: Quoref dev has 50 answers off by 1 to 12
characters (SQuAD v1.1 dev has none). ``offset_tolerance=0`` is strict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from faithprobe.atomic import write_text
from faithprobe.datasets.json_doc import get, load_json, record_id, within
from faithprobe.datasets.schema import (
    BOOLEAN,
    INTEGER,
    OBJECTS,
    TEXT,
    TEXT_OR_INTEGER,
    DataSchema,
    Field,
)
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.records import UNKNOWN, QAExample
from faithprobe.sentences import DEFAULT_SPLITTER, Span, check_splitter, overlapping, split_many

RATIONALES = ("sentence", "answer")
QAS = "data[].paragraphs[].qas[]"
ANSWER_START = Field(
    f"{QAS}.answers[].answer_start",
    INTEGER,
    "the answer's character offset in its paragraph's context (an offset at most "
    "offset_tolerance characters off, 16 by default, is repaired and counted)",
    required=True,
    minimum=0,
)

SQUAD_SCHEMA = DataSchema(
    name="SQuAD-format JSON (SQuAD v1.1/v2.0, Quoref)",
    record="one JSON document of articles, each of paragraphs, each of questions; a question "
    "is one item, id squad-<id> (quoref-<id> where the paragraph has a context_id)",
    fields=(
        Field("data", OBJECTS, "the articles (at least one)", required=True),
        Field("data[].title", TEXT, "the article's title (default: none)"),
        Field("data[].paragraphs", OBJECTS, "the article's paragraphs", required=True),
        Field(
            "data[].paragraphs[].context",
            TEXT,
            "the paragraph's text: the context of its questions; the sentence holding a "
            "question's answer is its rationale (option rationale=sentence, the default)",
            required=True,
        ),
        Field(
            "data[].paragraphs[].context_id",
            TEXT_OR_INTEGER,
            "present in Quoref files: the questions are Quoref's (ids quoref-<id>; several "
            "answers are the spans of one multi-span answer)",
        ),
        Field("data[].paragraphs[].qas", OBJECTS, "the paragraph's questions", required=True),
        Field(f"{QAS}.id", TEXT_OR_INTEGER, "the question's id, unique in the file", required=True),
        Field(f"{QAS}.question", TEXT, "the question", required=True),
        Field(
            f"{QAS}.answers",
            OBJECTS,
            "the gold answers (SQuAD: one per annotator, alternatives; Quoref: the spans of "
            "one answer); empty only where is_impossible is true",
            required=True,
        ),
        Field(f"{QAS}.answers[].text", TEXT, "the answer, a non-empty span", required=True),
        ANSWER_START,
        Field(
            f"{QAS}.is_impossible",
            BOOLEAN,
            "SQuAD v2.0: true for a question the paragraph does not answer (its gold answer "
            "is then unknown); default false",
        ),
        Field(
            f"{QAS}.plausible_answers",
            OBJECTS,
            "SQuAD v2.0, with is_impossible: wrong answers annotators found plausible (kept "
            "in the item's features, not scored)",
        ),
        Field(f"{QAS}.plausible_answers[].text", TEXT, "a plausible wrong answer"),
    ),
    links="a question belongs to the paragraph that holds it: that paragraph's context is "
    "its text, and its answers' offsets point into it. Ids are unique across the file.",
)


def read_squad(
    path: str | Path,
    *,
    rationale: str = "sentence",
    splitter: str = DEFAULT_SPLITTER,
    offset_tolerance: int = 16,
) -> list[QAExample]:
    path = Path(path)
    return squad_examples(
        path,
        load_json(path),
        rationale=rationale,
        splitter=splitter,
        offset_tolerance=offset_tolerance,
    )


def squad_examples(
    path: Path,
    doc: Any,
    *,
    rationale: str = "sentence",
    splitter: str = DEFAULT_SPLITTER,
    offset_tolerance: int = 16,
) -> list[QAExample]:
    """Examples from an already parsed SQuAD-format document (see the module docstring)."""
    if rationale not in RATIONALES:
        raise UsageError(f"rationale must be one of {RATIONALES}, got {excerpt(rationale)}")
    check_splitter(splitter)
    records = list(_records(path, doc, offset_tolerance))
    SQUAD_SCHEMA.check(path, "top level", doc)  # what the reader only passes along
    contexts = [r["context"] for r in records if r["spans"]] if rationale == "sentence" else []
    sentences = dict(zip(contexts, split_many(contexts, splitter), strict=True))
    examples = []
    for r in records:
        spans: list[Span] = r.pop("spans")
        context = r["context"]
        if not spans:
            r.update(answers=(UNKNOWN,), answer_type=UNKNOWN, rationale=())
        else:
            covered = spans if r["features"].get("multi_span") else spans[:1]
            r["rationale"] = (
                _sentences_covering(sentences[context], covered)
                if rationale == "sentence"
                else tuple(covered)
            )
            r["features"]["rationale"] = rationale
            if rationale == "sentence":
                r["features"]["splitter"] = splitter
        examples.append(QAExample(**r))
    return examples


def _records(path: Path, doc: Any, tolerance: int):
    """The fields of every question's example, with its answer spans under ``"spans"``."""
    seen: set[str] = set()
    articles = get(path, "top level", doc, "data", list)
    if not articles:
        raise DataError(path, "holds no articles (an empty list)", field="data")
    for i, article in enumerate(articles):
        where_a = f"data[{i}]"
        title = get(path, where_a, article, "title", str, "")
        for j, para in enumerate(get(path, where_a, article, "paragraphs", list)):
            where_p = f"{where_a}.paragraphs[{j}]"
            context = get(path, where_p, para, "context", str)
            source = "quoref" if isinstance(para, dict) and "context_id" in para else "squad"
            for k, qa in enumerate(get(path, where_p, para, "qas", list)):
                qid, where = record_id(path, f"{where_p}.qas[{k}]", qa, "id", seen)
                example_id = f"{source}-{qid}"
                features: dict[str, Any] = {"source": source, "title": title, "paragraph": j}
                impossible = get(path, where, qa, "is_impossible", bool, False)
                raw = get(path, where, qa, "answers", list)
                if not raw and not impossible:
                    raise DataError(
                        path, "no answers (and is_impossible is not true)", record=where,
                        field="answers",
                    )  # fmt: skip
                if impossible:
                    plausible = get(path, where, qa, "plausible_answers", list, [])
                    features["plausible_answers"] = [
                        a.get("text") for a in plausible if isinstance(a, dict)
                    ]
                    raw = []
                answers = [
                    _answer(path, f"{where}.answers[{m}]", context, a, tolerance)
                    for m, a in enumerate(raw)
                ]
                repaired = sum(moved for _, _, moved in answers)
                if repaired:
                    features["offsets_repaired"] = repaired
                if source == "quoref" and len(answers) > 1:
                    features["multi_span"] = True
                yield {
                    "id": example_id,
                    "context": context,
                    "question": get(path, where, qa, "question", str),
                    "answers": tuple(text for text, _, _ in answers),
                    "answer_starts": tuple(start for _, start, _ in answers),
                    "spans": [(start, start + len(text)) for text, start, _ in answers],
                    "features": features,
                }


def _answer(path: Path, where: str, context: str, raw: Any, tolerance: int):
    """``(text, start, moved)`` of one gold answer, its offset checked against the text."""
    text = get(path, where, raw, "text", str)
    start = within(path, where, get(path, where, raw, "answer_start", int), ANSWER_START)
    if not text.strip():
        raise DataError(path, "empty answer text", record=where, field="text")
    if start >= 0 and context[start : start + len(text)] == text:
        return text, start, False
    near = _nearest(context, text, start, tolerance)
    if near is None:
        found = context[max(start, 0) : max(start, 0) + len(text)]
        raise DataError(
            path,
            f"answer {excerpt(text)} is not at offset {start} of the context (which reads "
            f"{excerpt(found)} there) nor within {tolerance} characters of it",
            record=where,
            field="answer_start",
        )
    return text, near, True


def _nearest(context: str, text: str, start: int, tolerance: int) -> int | None:
    lo = max(0, start - tolerance)
    best = None
    at = context.find(text, lo, start + tolerance + len(text))
    while at >= 0:
        if best is None or abs(at - start) < abs(best - start):
            best = at
        at = context.find(text, at + 1, start + tolerance + len(text))
    return best


def _sentences_covering(sentences: tuple[Span, ...], spans: list[Span]) -> tuple[Span, ...]:
    """The sentences overlapping ``spans``, adjacent ones merged into one span each."""
    hit = sorted({i for s, e in spans for i in overlapping(sentences, s, e)})
    blocks: list[list[int]] = []
    for i in hit:
        if blocks and blocks[-1][-1] == i - 1:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    return tuple((sentences[b[0]][0], sentences[b[-1]][1]) for b in blocks)


def write_squad(examples: Iterable[QAExample], path: str | Path, *, title: str = "") -> int:
    """Write span examples as SQuAD v1.1 JSON (atomically), one article per
    ``features["title"]`` (else ``features["domain"]``, else ``title``) and one paragraph per
    distinct context; return the question count. Only what SQuAD holds survives: id,
    context, question, answers with offsets (:func:`read_squad` prefixes ids with
    ``squad-``)."""
    path = Path(path)
    articles: dict[str, dict[str, list]] = {}
    n = 0
    for e in examples:
        name = e.features.get("title") or e.features.get("domain") or title
        qa = {
            "id": e.id,
            "question": e.question,
            "answers": [
                {"text": a, "answer_start": s}
                for a, s in zip(e.answers, e.answer_starts, strict=True)
            ],
        }
        articles.setdefault(name, {}).setdefault(e.context, []).append(qa)
        n += 1
    doc = {
        "version": "1.1",
        "data": [
            {"title": name, "paragraphs": [{"context": c, "qas": q} for c, q in paras.items()]}
            for name, paras in articles.items()
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(doc, ensure_ascii=False))
    return n
