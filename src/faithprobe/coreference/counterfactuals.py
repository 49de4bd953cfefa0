"""Importing coreference counterfactuals written elsewhere (by hand, or by another tool).

Format: JSON lines, one counterfactual per line::

    {"id": "cf-1", "original_id": "quoref-abc", "context": "...", "question": "...",
     "answer": "Marco Rossi", "answer_start": 512, "inserted": "..."}

* ``id`` (string, unique in the file): the counterfactual's id.
* ``original_id`` (string): the id of the example it was made from (``quoref-<question
  id>`` for a Quoref question read by :func:`faithprobe.datasets.qa.read_qa`).
* ``context``, ``question`` (non-empty strings): the changed context and its question.
* ``answer`` (non-empty string) and ``answer_start`` (int): the new answer and its
  character offset in ``context``; ``context[answer_start:][:len(answer)]`` must be it.
* ``inserted`` (string, optional): the sentence(s) inserted into the original context;
  when given it must occur in ``context``.

When ``originals`` are given (examples, matched by id), every ``original_id`` must be one
of them, and one of that original's gold answers must still occur in the changed context
(whole word, any case): the method keeps the old answer in the text, so that a model that
ignores the inserted sentence can still give it.

Examples come back as :class:`QAExample` with ``features`` ``original_id``, ``variant``
(``"CF"``), ``expected`` (the new answer), ``inserted`` and ``generated`` (False).
Any violation is a :class:`~faithprobe.errors.DataError` naming the file, the line and
the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

from faithprobe.datasets.jsonl import field, iter_records
from faithprobe.errors import DataError, excerpt
from faithprobe.examples import QAExample
from faithprobe.qa.answers import occurs


def read_coref_counterfactuals(
    path: str | Path, originals: Iterable[QAExample] | None = None
) -> list[QAExample]:
    """The counterfactuals in the JSON-lines file ``path`` (format in the module docstring)."""
    path = Path(path)
    by_id = None if originals is None else {e.id: e for e in originals}
    seen: set[str] = set()
    out = []
    for line, record in iter_records(path):
        text = partial(_text, path, line, record)
        cf_id, original_id = text("id"), text("original_id")
        if cf_id in seen:
            raise DataError(
                path, f"duplicate id {excerpt(cf_id)}", record=f"line {line}", field="id"
            )
        seen.add(cf_id)
        context, question, answer = text("context"), text("question"), text("answer")
        start = field(path, line, record, "answer_start", int)
        if start < 0 or context[start : start + len(answer)] != answer:
            raise DataError(
                path,
                f"answer {excerpt(answer)} is not at offset {start} of the context",
                record=f"line {line}",
                field="answer_start",
            )
        inserted = text("inserted", required=False)
        if inserted is not None and inserted not in context:
            raise DataError(
                path, "the inserted text is not in the context", record=f"line {line}",
                field="inserted",
            )  # fmt: skip
        if by_id is not None:
            _check_original(path, line, by_id.get(original_id), original_id, context)
        out.append(
            QAExample(
                id=cf_id,
                context=context,
                question=question,
                answers=(answer,),
                answer_starts=(start,),
                features={
                    "original_id": original_id,
                    "variant": "CF",
                    "expected": answer,
                    "inserted": inserted,
                    "generated": False,
                },
            )
        )
    return out


def _text(path: Path, line: int, record: dict, name: str, required: bool = True) -> str | None:
    """``record[name]``: a non-empty string (``None`` if absent and not ``required``)."""
    value = field(path, line, record, name, str, required)
    if value is not None and not value.strip():
        raise DataError(path, "must not be empty", record=f"line {line}", field=name)
    return value


def _check_original(
    path: Path, line: int, original: QAExample | None, original_id: str, context: str
) -> None:
    if original is None:
        raise DataError(
            path, f"no original example with id {excerpt(original_id)}", record=f"line {line}",
            field="original_id",
        )  # fmt: skip
    if not any(occurs(a, context) for a in original.answers):
        raise DataError(
            path,
            f"the original answer ({' / '.join(original.answers)}) is no longer in the "
            "context; a counterfactual keeps it",
            record=f"line {line}",
            field="context",
        )
