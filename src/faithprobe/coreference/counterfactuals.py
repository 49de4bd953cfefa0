"""Importing coreference counterfactuals written elsewhere (by hand, or by another tool).

Format: JSON lines, one counterfactual per line (the fields, their types and what they
mean are declared in :data:`COUNTERFACTUALS_SCHEMA`, checked per line)::

    {"id": "cf-1", "original_id": "quoref-abc", "context": "...", "question": "...",
     "answer": "Marco Rossi", "answer_start": 512, "inserted": "..."}

Beyond the schema: ids are unique; ``id``, ``original_id``, ``context``, ``question`` and
``answer`` are not blank; ``context[answer_start:][:len(answer)]`` is the answer; an
``inserted`` text occurs in ``context``. When ``originals`` are given (examples, matched by
id), every ``original_id`` must be one of them, and one of that original's gold answers must
still occur in the changed context (whole word, any case): the method keeps the old answer in
the text, so that a model that ignores the inserted sentence can still give it.

Examples come back as :class:`QAExample` with ``features`` ``original_id``, ``variant``
(``"CF"``), ``expected`` (the new answer), ``inserted`` and ``generated`` (False).
Any violation is a :class:`~faithprobe.errors.DataError` naming the file, the line and
the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

from faithprobe.datasets.jsonl import iter_records
from faithprobe.datasets.schema import INTEGER, TEXT, DataSchema, Field
from faithprobe.errors import DataError, excerpt
from faithprobe.qa.answers import occurs
from faithprobe.records import QAExample

COUNTERFACTUALS_SCHEMA = DataSchema(
    name="coreference counterfactuals (JSON lines, option counterfactuals=FILE)",
    record="one counterfactual per JSON line, of one coreference question of --data",
    fields=(
        Field("id", TEXT, "the counterfactual's id, unique in the file", required=True),
        Field(
            "original_id",
            TEXT,
            "the item id of the question it was made from (quoref-<id> for a Quoref question, "
            "squad-<id> for a SQuAD one)",
            required=True,
            links="It names a question of the --data file.",
        ),
        Field("context", TEXT, "the changed context (non-empty)", required=True),
        Field("question", TEXT, "its question (non-empty)", required=True),
        Field("answer", TEXT, "the new gold answer (non-empty)", required=True),
        Field(
            "answer_start",
            INTEGER,
            "the new answer's character offset in context: it must be there",
            required=True,
            minimum=0,
        ),
        Field(
            "inserted",
            TEXT,
            "the sentence(s) inserted into the original context; when "
            "given, it must occur in context",
        ),  # fmt: skip
    ),
    links="original_id names a question of the --data file; one of that question's gold "
    "answers must still occur in the changed context (whole word, any case), so a model "
    "that ignores the inserted sentence can still give it. A question with no "
    "counterfactual in the file gets none (counted as dropped).",
)


def read_coref_counterfactuals(
    path: str | Path, originals: Iterable[QAExample] | None = None
) -> list[QAExample]:
    """The counterfactuals in the JSON-lines file ``path`` (format in the module docstring)."""
    path = Path(path)
    by_id = None if originals is None else {e.id: e for e in originals}
    seen: set[str] = set()
    out = []
    for line, record in iter_records(path):
        COUNTERFACTUALS_SCHEMA.check(path, f"line {line}", record)
        text = partial(_nonempty, path, line, record)
        cf_id, original_id = text("id"), text("original_id")
        if cf_id in seen:
            raise DataError(
                path, f"duplicate id {excerpt(cf_id)}", record=f"line {line}", field="id"
            )
        seen.add(cf_id)
        context, question, answer = text("context"), text("question"), text("answer")
        start = record["answer_start"]
        if context[start : start + len(answer)] != answer:
            raise DataError(
                path,
                f"answer {excerpt(answer)} is not at offset {start} of the context",
                record=f"line {line}",
                field="answer_start",
            )
        inserted = text("inserted")
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


def _nonempty(path: Path, line: int, record: dict, name: str) -> str | None:
    """``record[name]`` (a string: the schema checked it), refused if blank; ``None`` if
    absent (only an optional field can be)."""
    value = record.get(name)
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
