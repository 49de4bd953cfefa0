"""HotpotQA JSON (a list of questions) -> :class:`QAExample`, id ``hotpot-<_id>``.

Only the gold paragraphs are kept, as the method feeds them: the paragraphs whose titles the
supporting facts name, in the order of ``context``. The context is::

    Title of paragraph 1
    Sentence 1. Sentence 2.

    Title of paragraph 2
    Sentence 1. ...

(``titles=False`` leaves the title lines out.) Each of HotpotQA's sentences is stripped of
surrounding whitespace and joined to the next with one space; empty sentences are skipped.
A title line belongs to no sentence: the deletions take it away with the last sentence of
its paragraph (:mod:`faithprobe.interventions.deletion`), so no bare title is left.
The character spans of all sentences are kept in ``features["sentences"]``, so that
deletions remove HotpotQA's own sentences rather than a splitter's. The rationale is the
spans of the supporting-fact sentences. HotpotQA has a few supporting facts that point
past the end of their paragraph; they are listed in ``features["missing_facts"]`` rather
than failing the file.

The answer type is ``yes``/``no`` for those answers, ``span`` when the answer occurs in the
gold paragraphs (its first occurrence; case-insensitive if need be), else ``free``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from faithprobe.datasets.json_doc import get, load_json, record_id
from faithprobe.datasets.schema import TEXT, TEXT_OR_INTEGER, DataSchema, Field, Kind
from faithprobe.errors import DataError, excerpt
from faithprobe.records import QAExample

# HotpotQA's question types and levels, and 2WikiMultiHopQA's types (same format, no level)
TYPES = ("comparison", "bridge", "compositional", "inference", "bridge_comparison")
LEVELS = ("easy", "medium", "hard")


def _titled(value: Any, second: Callable[[Any], bool]) -> bool:
    """Whether ``value`` is a ``[title, x]`` pair whose ``x`` passes ``second``."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], str)
        and (second(value[1]))
    )


def _is_fact(value: Any) -> bool:
    return _titled(value, lambda i: isinstance(i, int) and not isinstance(i, bool))


def _is_paragraph(value: Any) -> bool:
    return _titled(value, lambda s: isinstance(s, list) and all(isinstance(x, str) for x in s))


FACTS = Kind(
    "list of [title, sentence index] pairs",
    lambda v: isinstance(v, list) and all(_is_fact(f) for f in v),
)
PARAGRAPHS = Kind(
    "list of [title, [sentence, ...]] pairs",
    lambda v: isinstance(v, list) and all(_is_paragraph(p) for p in v),
)

HOTPOTQA_SCHEMA = DataSchema(
    name="HotpotQA JSON (HotpotQA, 2WikiMultiHopQA)",
    record="one question of the file's JSON list; a question is one item, id hotpot-<_id>",
    fields=(
        Field("_id", TEXT_OR_INTEGER, "the question's id, unique in the file", required=True),
        Field("question", TEXT, "the question", required=True),
        Field(
            "answer",
            TEXT,
            "the gold answer: yes or no (case aside) make a yes/no item; otherwise a span "
            "of the gold paragraphs if it occurs there, else free text",
            required=True,
        ),
        Field(
            "supporting_facts",
            FACTS,
            "the sentences the answer rests on (the rationale), each as the title of a "
            "paragraph of context and the sentence's index in it (from 0); at least one",
            required=True,
        ),
        Field(
            "context",
            PARAGRAPHS,
            "the paragraphs, each a title and its sentences; only the gold paragraphs (those "
            "a supporting fact names) are kept, in this order",
            required=True,
        ),
        Field(
            "type",
            TEXT,
            "the question's type (HotpotQA: comparison or bridge; 2WikiMultiHopQA: "
            "comparison, compositional, inference, bridge_comparison); kept in the item's "
            "features",
            allowed=TYPES,
        ),
        Field("level", TEXT, "HotpotQA's difficulty; kept in the item's features", allowed=LEVELS),
    ),
    links="a supporting fact names a paragraph of its question's context by title and a "
    "sentence of it by index; at least one must name a sentence that is there (facts past "
    "the end of their paragraph are listed in the item's features.missing_facts).",
)


def read_hotpotqa(path: str | Path, *, titles: bool = True) -> list[QAExample]:
    path = Path(path)
    return hotpotqa_examples(path, load_json(path), titles=titles)


def hotpotqa_examples(path: Path, doc: Any, *, titles: bool = True) -> list[QAExample]:
    if not isinstance(doc, list):
        raise DataError(path, "expected a JSON list of questions (HotpotQA format)")
    examples = []
    seen: set[str] = set()
    for i, rec in enumerate(doc):
        qid, where = record_id(path, f"[{i}]", rec, "_id", seen)
        answer = get(path, where, rec, "answer", str).strip()
        facts = _facts(path, where, rec)
        paragraphs = _paragraphs(path, where, rec)
        HOTPOTQA_SCHEMA.check(path, where, rec)  # what the reader only passes along
        gold = [(t, s) for t, s in paragraphs if t in {title for title, _ in facts}]
        context, sentence_at = _render(gold, titles)
        missing = [[t, k] for t, k in facts if (t, k) not in sentence_at]
        if len(missing) == len(facts):
            raise DataError(
                path, "no supporting fact names a sentence of the context", record=where,
                field="supporting_facts",
            )  # fmt: skip
        rationale = tuple(sorted(sentence_at[f] for f in facts if f in sentence_at))
        kind = answer.lower() if answer.lower() in ("yes", "no") else "span"
        starts: tuple[int, ...] = ()
        if kind == "span":
            at = context.find(answer)
            at = context.lower().find(answer.lower()) if at < 0 else at
            kind, starts = ("span", (at,)) if at >= 0 else ("free", (-1,))
        features = {
            "source": "hotpotqa",
            "type": rec.get("type"),
            "level": rec.get("level"),
            "titles": [t for t, _ in gold],
            "sentences": tuple(sorted(sentence_at.values())),
        }
        if missing:
            features["missing_facts"] = missing
        examples.append(
            QAExample(
                id=f"hotpot-{qid}",
                context=context,
                question=get(path, where, rec, "question", str),
                answers=(answer,),
                answer_type=kind,
                answer_starts=starts,
                rationale=rationale,
                features=features,
            )
        )
    return examples


def _facts(path: Path, where: str, rec: Any) -> list[tuple[str, int]]:
    facts = get(path, where, rec, "supporting_facts", list)
    out = []
    for k, fact in enumerate(facts):
        if not _is_fact(fact):
            raise DataError(
                path, f"expected [title, sentence index], got {excerpt(fact)}", record=where,
                field=f"supporting_facts[{k}]",
            )  # fmt: skip
        out.append((fact[0], fact[1]))
    if not out:
        raise DataError(path, "no supporting facts", record=where, field="supporting_facts")
    return out


def _paragraphs(path: Path, where: str, rec: Any) -> list[tuple[str, list[str]]]:
    out = []
    for k, para in enumerate(get(path, where, rec, "context", list)):
        if not _is_paragraph(para):
            raise DataError(
                path, "expected [title, [sentence, ...]]", record=where, field=f"context[{k}]"
            )
        out.append((para[0], para[1]))
    return out


def _render(
    paragraphs: list[tuple[str, list[str]]], titles: bool
) -> tuple[str, dict[tuple[str, int], tuple[int, int]]]:
    """The context text and the span of every (title, sentence index) in it."""
    text = ""
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    for title, sentences in paragraphs:
        if text:
            text += "\n\n"
        if titles:
            text += title.strip() + "\n"
        line_start = len(text)
        for k, sentence in enumerate(sentences):
            sentence = sentence.strip()
            if not sentence:
                continue
            if len(text) > line_start:
                text += " "
            spans[(title, k)] = (len(text), len(text) + len(sentence))
            text += sentence
    return text, spans
