"""Two-class NLI sets -> :class:`NLIExample`.

* MNLI-style TSV with a header row: ``sentence1`` (premise), ``sentence2`` (hypothesis),
  ``gold_label`` -- MED, the NLI-XY copies of HELP's test set and of the monotonicity
  fragments.
* HELP's own TSV: ``ori_sentence`` (premise), ``new_sentence`` (hypothesis), ``gold_label``.
* JSON lines: ``premise``, ``hypothesis``, ``label``, optional ``id``; or SNLI's official
  jsonl (``snli_1.0_*.jsonl``): ``sentence1``, ``sentence2``, ``gold_label``, optional
  ``pairID`` -- told apart per record: one holding any of ``sentence1``, ``sentence2`` or
  ``gold_label`` is SNLI's.

Labels are read case-insensitively and collapsed to two classes: ``entailment`` stays
entailment; ``neutral``, ``contradiction``, ``non-entailment`` and ``not_entailment`` become
non-entailment. A gold label ``-`` (SNLI's and MNLI's mark for no annotator consensus) has no
gold class: the line is dropped, as the data sets' authors prescribe. The label as written is
kept in ``features["gold_label"]``. Ids are ``<file stem>-<line>`` (the files' own index
columns are not unique everywhere), or a JSON record's ``id`` (SNLI: ``pairID``).

TSV files are read without quote processing (MNLI's convention: a ``"`` is text). Each
layout declares its schema (:data:`CHALLENGE_SCHEMAS`, :mod:`faithprobe.datasets.schema`),
and every record is checked against it as it is read: a missing or empty premise,
hypothesis or label, or a label outside :data:`LABELS`, is one DataError naming the file,
the line and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from faithprobe.datasets.jsonl import iter_records
from faithprobe.datasets.schema import TEXT, TEXT_OR_INTEGER, DataSchema, Field
from faithprobe.datasets.tsv import read_tsv
from faithprobe.errors import DataError, excerpt
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT, NLIExample

TWO_CLASS = {
    "entailment": ENTAILMENT,
    "neutral": NON_ENTAILMENT,
    "contradiction": NON_ENTAILMENT,
    "non-entailment": NON_ENTAILMENT,
    "non_entailment": NON_ENTAILMENT,
    "not_entailment": NON_ENTAILMENT,
    "not-entailment": NON_ENTAILMENT,
}
NO_CONSENSUS = "-"  # SNLI/MNLI gold label when the annotators did not agree: no gold class
LABELS = (*sorted(TWO_CLASS), NO_CONSENSUS)


@dataclass(frozen=True)
class Layout:
    """Where one two-class NLI format keeps each part of a record, and its schema."""

    premise: str
    hypothesis: str
    label: str
    id: str | None  # the record's own id field (None: ids are <file stem>-<line>)
    schema: DataSchema


def _layout(name: str, record: str, names: tuple[str, str, str, str | None], links: str) -> Layout:
    premise, hypothesis, label, id_field = names
    fields = [
        Field(
            label,
            TEXT,
            "the gold label, read case-insensitively: entailment is entailment; neutral, "
            "contradiction and the non-entailment spellings are non-entailment; - (no "
            "annotator consensus) has no gold class and its record is skipped (counted in the "
            "report's data table)",
            required=True,
            allowed=LABELS,
        ),
        Field(premise, TEXT, "the premise", required=True),
        Field(hypothesis, TEXT, "the hypothesis", required=True),
    ]
    if id_field is not None:
        fields.append(Field(id_field, TEXT_OR_INTEGER, "the pair's id, unique in the file "
                            "(default: <file stem>-<line>)"))  # fmt: skip
    return Layout(premise, hypothesis, label, id_field,
                  DataSchema(name, record, tuple(fields), links=links))  # fmt: skip


_TSV_LINKS = (
    "none: each row is one challenge example, named <file stem>-<line>; other columns "
    "(index, pairID, genre, parses, label1..label5, ...) are ignored"
)
_JSONL_LINKS = "none: each line is one challenge example; ids must be unique in the file"
MNLI_TSV = _layout(
    "two-class NLI, MNLI-style TSV (option challenge)",
    "one premise-hypothesis pair per row of a tab-separated file with a header line (no "
    "quoting): MED, the NLI-XY copies of HELP's test set and of the monotonicity fragments",
    ("sentence1", "sentence2", "gold_label", None),
    _TSV_LINKS,
)
HELP_TSV = _layout(
    "two-class NLI, HELP's TSV (option challenge)",
    "one pair per row of a tab-separated file with a header line holding ori_sentence and "
    "new_sentence (HELP's own files)",
    ("ori_sentence", "new_sentence", "gold_label", None),
    _TSV_LINKS,
)
OWN_JSONL = _layout(
    "two-class NLI, JSON lines (option challenge)",
    "one pair per line of a .jsonl or .json file, a JSON object with none of sentence1, "
    "sentence2, gold_label",
    ("premise", "hypothesis", "label", "id"),
    _JSONL_LINKS,
)
SNLI_JSONL = _layout(
    "two-class NLI, SNLI's official jsonl (option challenge)",
    "one pair per line of a .jsonl or .json file, a JSON object holding any of sentence1, "
    "sentence2, gold_label (other fields, e.g. annotator_labels and the parses, are ignored)",
    ("sentence1", "sentence2", "gold_label", "pairID"),
    _JSONL_LINKS,
)
TSV_LAYOUTS = (MNLI_TSV, HELP_TSV)
# a JSON record holding any of these is read as SNLI's
SNLI_FIELDS = frozenset({SNLI_JSONL.premise, SNLI_JSONL.hypothesis, SNLI_JSONL.label})
CHALLENGE_SCHEMAS = tuple(layout.schema for layout in (*TSV_LAYOUTS, OWN_JSONL, SNLI_JSONL))


def _example(path: Path, line: int, item_id: str, layout: Layout, record: dict) -> NLIExample:
    raw = record[layout.label]
    return NLIExample(
        id=item_id,
        premise=record[layout.premise].strip(),
        hypothesis=record[layout.hypothesis].strip(),
        label=TWO_CLASS[raw.strip().lower()],
        features={"source": path.stem, "line": line, "gold_label": raw},
    )


def _checked(path: Path, line: int, layout: Layout, record: dict) -> bool:
    """Check ``record`` against its layout's schema (its label in lower case); whether it has
    a gold class (its label is not ``-``)."""
    raw = record.get(layout.label)
    if isinstance(raw, str):
        record = {**record, layout.label: raw.strip().lower()}
    layout.schema.check(path, f"line {line}", record)
    return record[layout.label] != NO_CONSENSUS


@dataclass(frozen=True)
class TwoClassSet:
    """The examples of one two-class NLI file and how many of its records were skipped for
    a gold label ``-`` (no annotator consensus)."""

    examples: list[NLIExample]
    no_consensus: int


def _read_tsv(path: Path) -> TwoClassSet:
    header, rows = read_tsv(path)
    layout = next((t for t in TSV_LAYOUTS if {t.premise, t.hypothesis} <= set(header)), None)
    if layout is None or "gold_label" not in header:
        raise DataError(
            path,
            "not an NLI TSV faithprobe knows: the header needs gold_label and "
            "sentence1/sentence2 (MNLI style) or ori_sentence/new_sentence (HELP)",
            record="line 1",
        )
    kept = [(line, record) for line, record in rows if _checked(path, line, layout, record)]
    if not kept:
        raise DataError(path, "holds no examples")
    items = [_example(path, line, f"{path.stem}-{line}", layout, r) for line, r in kept]
    return TwoClassSet(items, len(rows) - len(kept))


def _read_jsonl(path: Path) -> TwoClassSet:
    items, seen, skipped = [], set(), 0
    for line, record in iter_records(path):
        layout = SNLI_JSONL if SNLI_FIELDS & record.keys() else OWN_JSONL
        if not _checked(path, line, layout, record):
            skipped += 1
            continue
        key = record.get(layout.id) if layout.id else None
        item_id = str(key) if key is not None else f"{path.stem}-{line}"
        if item_id in seen:
            raise DataError(path, f"duplicate id {excerpt(item_id)}", record=f"line {line}",
                            field=layout.id)  # fmt: skip
        seen.add(item_id)
        items.append(_example(path, line, item_id, layout, record))
    if not items:
        raise DataError(path, "holds no examples with a gold label")
    return TwoClassSet(items, skipped)


def read_two_class(path: str | Path) -> TwoClassSet:
    """Any supported two-class NLI file, told apart by its extension (``.jsonl``/``.json``
    are JSON lines, anything else TSV), with its count of skipped ``-`` records."""
    path = Path(path)
    if path.suffix in (".jsonl", ".json"):
        return _read_jsonl(path)
    return _read_tsv(path)


def read_nli(path: str | Path) -> list[NLIExample]:
    """The examples of :func:`read_two_class`."""
    return read_two_class(path).examples
