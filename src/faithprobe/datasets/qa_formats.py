"""Question-answering datasets -> :class:`QAExample`: one entry point for the three
formats the ``faithfulness`` suite reads.

* ``squad``: SQuAD v1.1/v2.0 and Quoref (:mod:`faithprobe.datasets.squad`)
* ``coqa``: CoQA (:mod:`faithprobe.datasets.coqa`)
* ``hotpotqa``: HotpotQA (:mod:`faithprobe.datasets.hotpotqa`)

:func:`read_qa` with ``format="auto"`` tells them apart by their shape (see
:func:`detect_qa_format`) and reads the file once. :class:`QAReading` is how the
``faithfulness`` suite reads any of them (its options for each format's reader); the
representation analysis reads through it too, so both see the same questions, the same
conversation history and the same rationales.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe.datasets.coqa import COQA_RULES, DEFAULT_HISTORY_TURNS, coqa_examples, read_coqa
from faithprobe.datasets.hotpotqa import hotpotqa_examples, read_hotpotqa
from faithprobe.datasets.json_doc import load_json
from faithprobe.datasets.squad import read_squad, squad_examples
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.records import QAExample
from faithprobe.sentences import DEFAULT_SPLITTER

QA_FORMATS = {
    "squad": squad_examples,
    "coqa": coqa_examples,
    "hotpotqa": hotpotqa_examples,
}

__all__ = [
    "QA_FORMATS",
    "QAReading",
    "detect_qa_format",
    "read_coqa",
    "read_hotpotqa",
    "read_qa",
    "read_squad",
]


def _shape(doc: Any) -> str | None:
    """``squad`` (``{"data": [{"paragraphs": ...}]}``), ``coqa`` (``{"data": [{"story":
    ...}]}``), ``hotpotqa`` (``[{"supporting_facts": ...}]``), or None."""
    if isinstance(doc, list):
        first = doc[0] if doc else None
        return "hotpotqa" if isinstance(first, dict) and "supporting_facts" in first else None
    data = doc.get("data") if isinstance(doc, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict):
        if "paragraphs" in first:
            return "squad"
        if "story" in first:
            return "coqa"
    return None


def _unknown_shape(path: Path, doc: Any) -> DataError:
    """Why ``doc`` has no shape :func:`_shape` knows: it is empty, lacks the field that would
    tell its format, or is something else."""
    if isinstance(doc, dict) and doc.get("data") == []:
        return DataError(path, "holds no articles (an empty list)", field="data")
    if doc == []:
        return DataError(path, "holds no questions (an empty list)")
    missing = _missing_field(doc)
    return DataError(
        path,
        ("missing, so " if missing else "")
        + "not a QA format faithprobe knows: expected SQuAD/Quoref ({'data': [{'paragraphs': "
        "...}]}), CoQA ({'data': [{'story': ...}]}) or HotpotQA ([{'supporting_facts': ...}])",
        field=missing,
    )


def _missing_field(doc: Any) -> str | None:
    """The field whose absence hides ``doc``'s format, if one does: ``data``, or the field of
    the first record that tells the format."""
    if isinstance(doc, list) and isinstance(doc[0], dict):
        return "[0].supporting_facts"
    if not isinstance(doc, dict):
        return None
    if "data" not in doc:
        return "data"
    data = doc["data"]
    if isinstance(data, list) and isinstance(data[0], dict):
        return "data[0].paragraphs or data[0].story"
    return None


def detect_qa_format(path: str | Path) -> str:
    """The format of a QA file: ``"squad"``, ``"coqa"`` or ``"hotpotqa"``."""
    path = Path(path)
    doc = load_json(path)
    shape = _shape(doc)
    if shape is None:
        raise _unknown_shape(path, doc)
    return shape


def read_qa(path: str | Path, format: str = "auto", **options: Any) -> list[QAExample]:
    """Examples from a QA file; ``options`` go to the format's reader (e.g. ``rationale=``
    for SQuAD, ``history_turns=`` for CoQA, ``titles=`` for HotpotQA)."""
    path = Path(path)
    if format != "auto" and format not in QA_FORMATS:
        raise UsageError(
            f"unknown QA format {excerpt(format)}; known: auto, {', '.join(QA_FORMATS)}"
        )
    doc = load_json(path)
    if format == "auto":
        format = _shape(doc)
        if format is None:
            raise _unknown_shape(path, doc)
    return QA_FORMATS[format](path, doc, **options)


@dataclass(frozen=True)
class QAReading:
    """How a QA file is read whatever its format: the options its format's reader takes
    (SQuAD/Quoref: the rationale, sentence or answer span, and the sentence splitter; CoQA:
    the turns of history before a question, with their gold answers, and faithprobe's or
    the method's rules; HotpotQA: none). The splitter also cuts the sentences the deletions
    remove (:func:`~faithprobe.interventions.deletion_variants.variant_pairs`)."""

    rationale: str = "sentence"
    splitter: str = DEFAULT_SPLITTER
    history_turns: int = DEFAULT_HISTORY_TURNS
    coqa_rules: str = COQA_RULES[0]

    def options(self, format: str) -> dict[str, Any]:
        """The keyword options of ``format``'s reader."""
        if format == "squad":
            return {"rationale": self.rationale, "splitter": self.splitter}
        if format == "coqa":
            return {"history_turns": self.history_turns, "rules": self.coqa_rules}
        return {}

    def read(self, path: str | Path) -> list[QAExample]:
        """The examples of the QA file ``path``, its format told by its shape."""
        path = Path(path)
        doc = load_json(path)
        format = _shape(doc)
        if format is None:
            raise _unknown_shape(path, doc)
        return QA_FORMATS[format](path, doc, **self.options(format))
