"""Two-class NLI sets -> :class:`NLIExample`.

* MNLI-style TSV with a header row: ``sentence1`` (premise), ``sentence2`` (hypothesis),
  ``gold_label`` -- MED, the NLI-XY copies of HELP's test set and of the monotonicity
  fragments, MultiNLI's own ``.txt`` files and GLUE's MNLI ``.tsv`` files.
* HELP's own TSV: ``ori_sentence`` (premise), ``new_sentence`` (hypothesis), ``gold_label``.
* JSON lines: ``premise``, ``hypothesis``, ``label``, optional ``id``; or SNLI's and
  MultiNLI's official jsonl (``snli_1.0_*.jsonl``, ``multinli_1.0_*.jsonl``): ``sentence1``,
  ``sentence2``, ``gold_label``, optional ``pairID``; or ANLI's release (``R1``..``R3``/
  ``{train,dev,test}.jsonl``): ``uid``, ``context`` (the premise), ``hypothesis``, ``label``
  in ``e``/``n``/``c`` -- or the same with ``premise`` for ``context``, the form the ANLI
  README shows and its authors' code writes. Told apart per record: one holding any of
  ``sentence1``, ``sentence2`` or ``gold_label`` is SNLI's or MultiNLI's; one holding
  ``context`` or ``uid``, or labelled ``e``, ``n`` or ``c``, ANLI's.

Labels are read case-insensitively and collapsed to two classes: ``entailment`` stays
entailment; ``neutral``, ``contradiction``, ``non-entailment`` and ``not_entailment`` become
non-entailment; ANLI's ``e`` is entailment, its ``n`` and ``c`` non-entailment (the method
merges neutral and contradiction). A gold label ``-`` (SNLI's and MNLI's mark for no
annotator consensus) has no gold class: the line is dropped, as the data sets' authors
prescribe. The label as written is kept in ``features["gold_label"]``. Ids are ``<file
stem>-<line>`` (the files' own index columns are not unique everywhere), or a JSON record's
``id`` (SNLI and MultiNLI: ``pairID``; ANLI: ``uid``, unique across its rounds).

A file is one challenge set, named by its file's stem; ANLI's files, whose stems repeat in
every round, are named by their round too: ``R1/test.jsonl`` is ``anli-R1-test``.

TSV files are read without quote processing (MNLI's convention: a ``"`` is text). Each
layout declares its schema (:data:`CHALLENGE_SCHEMAS`, :mod:`faithprobe.datasets.schema`),
and every record is checked against it as it is read: a missing or empty premise,
hypothesis or label, or a label outside the layout's, is one DataError naming the file,
the line and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from faithprobe.datasets.jsonl import iter_records
from faithprobe.datasets.schema import TEXT, TEXT_OR_INTEGER, Condition, DataSchema, Field
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
# ANLI's labels (its README; its authors' format_convert.py) and the two classes they make
ANLI_CLASSES = {"e": ENTAILMENT, "n": NON_ENTAILMENT, "c": NON_ENTAILMENT}
ANLI_ROUND = re.compile(r"r\d+", re.IGNORECASE)  # ANLI's round folders: R1, R2, R3


@dataclass(frozen=True)
class Layout:
    """Where one two-class NLI format keeps each part of a record, its labels (as written,
    in lower case -> the two classes) and its schema."""

    premise: str
    hypothesis: str
    label: str
    id: str | None  # the record's own id field (None: ids are <file stem>-<line>)
    schema: DataSchema
    classes: Mapping[str, str]


_LABEL_MEANING = (
    "the gold label, read case-insensitively: entailment is entailment; neutral, "
    "contradiction and the non-entailment spellings are non-entailment; - (no annotator "
    "consensus) has no gold class and its record is skipped (counted in the report's data "
    "table)"
)
_ANLI_LABEL_MEANING = (
    "the gold label, read case-insensitively: e (entailment) is entailment; n (neutral) and "
    "c (contradiction) are non-entailment"
)

_ANLI_ID_MEANING = "the pair's id, unique across ANLI's three rounds (and so in the file)"


def _layout(
    name: str,
    record: str,
    names: tuple[str, str, str, str | None],
    links: str,
    *,
    classes: Mapping[str, str] = TWO_CLASS,
    labels: tuple[str, ...] = LABELS,  # the values allowed (classes' keys, and any skipped)
    label_meaning: str = _LABEL_MEANING,
    id_meaning: str = "the pair's id, unique in the file (default: <file stem>-<line>)",
    id_required: bool = False,
    premise_required: bool | Condition = True,
) -> Layout:
    premise, hypothesis, label, id_field = names
    fields = [
        Field(label, TEXT, label_meaning, required=True, allowed=labels),
        Field(premise, TEXT, "the premise", required=premise_required),
        Field(hypothesis, TEXT, "the hypothesis", required=True),
    ]
    if id_field is not None:
        fields.append(Field(id_field, TEXT_OR_INTEGER, id_meaning, required=id_required))
    return Layout(premise, hypothesis, label, id_field,
                  DataSchema(name, record, tuple(fields), links=links), classes)  # fmt: skip


_TSV_LINKS = (
    "none: each row is one challenge example, named <file stem>-<line>; other columns "
    "(index, pairID, genre, parses, label1..label5, ...) are ignored"
)
_JSONL_LINKS = "none: each line is one challenge example; ids must be unique in the file"
_ANLI_LINKS = (
    "none: each line is one challenge example, named by its uid; a file in one of ANLI's "
    "round folders (R1, R2, R3) is the challenge set anli-<round>-<file stem> "
    "(R1/test.jsonl: anli-R1-test), any other is named by its file's stem"
)
MNLI_TSV = _layout(
    "two-class NLI, MNLI-style TSV (option challenge)",
    "one premise-hypothesis pair per row of a tab-separated file with a header line (no "
    "quoting): MED, the NLI-XY copies of HELP's test set and of the monotonicity fragments, "
    "MultiNLI's multinli_1.0_*.txt, GLUE's MNLI/dev_*.tsv",
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
    "sentence2, gold_label, uid, context, and a label other than e, n, c",
    ("premise", "hypothesis", "label", "id"),
    _JSONL_LINKS,
)
SNLI_JSONL = _layout(
    "two-class NLI, SNLI's and MultiNLI's official jsonl (option challenge)",
    "one pair per line of a .jsonl or .json file, a JSON object holding any of sentence1, "
    "sentence2, gold_label: snli_1.0_*.jsonl, multinli_1.0_*.jsonl (other fields, e.g. "
    "annotator_labels, genre and the parses, are ignored)",
    ("sentence1", "sentence2", "gold_label", "pairID"),
    _JSONL_LINKS,
)
ANLI_JSONL = _layout(
    "two-class NLI, ANLI's release jsonl (option challenge)",
    "one pair per line of a .jsonl file, a JSON object holding context (or, without premise, "
    "uid or a label e, n, c): the files of ANLI's release, R1, R2, R3/{train,dev,test}.jsonl (other fields, "
    "e.g. reason, genre, tag, model_label, emturk, are ignored)",
    ("context", "hypothesis", "label", "uid"),
    _ANLI_LINKS,
    # a line with uid and no context is read in README form where it holds premise: one
    # with neither lacks both, and the message names the two
    premise_required=Condition(
        "unless the line holds field 'premise' (the form the ANLI README shows)",
        lambda record: "premise" not in record,
    ),
    classes=ANLI_CLASSES,
    labels=tuple(ANLI_CLASSES),
    label_meaning=_ANLI_LABEL_MEANING,
    id_meaning=_ANLI_ID_MEANING,
    id_required=True,
)
ANLI_README_JSONL = _layout(
    "two-class NLI, ANLI as its README shows it (option challenge)",
    "one pair per line of a .jsonl file, a JSON object holding premise and uid or a label e, "
    "n, c, and no context: "
    "the record the ANLI README shows and its authors' code writes (build/anli/r1..r3)",
    ("premise", "hypothesis", "label", "uid"),
    _ANLI_LINKS,
    classes=ANLI_CLASSES,
    labels=tuple(ANLI_CLASSES),
    label_meaning=_ANLI_LABEL_MEANING,
    id_meaning=_ANLI_ID_MEANING,
    id_required=True,
)
TSV_LAYOUTS = (MNLI_TSV, HELP_TSV)
JSONL_LAYOUTS = (OWN_JSONL, SNLI_JSONL, ANLI_JSONL, ANLI_README_JSONL)
ANLI_LAYOUTS = (ANLI_JSONL, ANLI_README_JSONL)
# a JSON record holding any of these is read as SNLI's (or MultiNLI's, the same layout)
SNLI_FIELDS = frozenset({SNLI_JSONL.premise, SNLI_JSONL.hypothesis, SNLI_JSONL.label})
CHALLENGE_SCHEMAS = tuple(layout.schema for layout in (*TSV_LAYOUTS, *JSONL_LAYOUTS))


def json_layout(record: Mapping) -> Layout:
    """The layout of one JSON record (module docstring: told apart per record)."""
    if SNLI_FIELDS & record.keys():
        return SNLI_JSONL
    if ANLI_JSONL.premise in record:
        return ANLI_JSONL
    label = record.get(ANLI_JSONL.label)
    anli_label = isinstance(label, str) and label.strip().lower() in ANLI_CLASSES
    if ANLI_JSONL.id in record or anli_label:
        return ANLI_README_JSONL if ANLI_README_JSONL.premise in record else ANLI_JSONL
    return OWN_JSONL


def _example(item_id: str, source: str, line: int, layout: Layout, record: dict) -> NLIExample:
    raw = record[layout.label]
    return NLIExample(
        id=item_id,
        premise=record[layout.premise].strip(),
        hypothesis=record[layout.hypothesis].strip(),
        label=layout.classes[raw.strip().lower()],
        features={"source": source, "line": line, "gold_label": raw},
    )


def _checked(path: Path, line: int, layout: Layout, record: dict) -> bool:
    """Check ``record`` against its layout's schema (its label in lower case; an empty
    string counts as missing, as an empty TSV cell does); whether it has a gold class (its
    label is not ``-``)."""
    record = {k: v for k, v in record.items() if not isinstance(v, str) or v.strip()}
    raw = record.get(layout.label)
    if isinstance(raw, str):
        record = {**record, layout.label: raw.strip().lower()}
    layout.schema.check(path, f"line {line}", record)
    return record[layout.label] != NO_CONSENSUS


@dataclass(frozen=True)
class TwoClassSet:
    """The examples of one two-class NLI file, the challenge set's name (the file's stem;
    ``anli-<round>-<stem>`` for ANLI's), the file as the report names it and how many of
    its records were skipped for a gold label ``-`` (no annotator consensus)."""

    examples: list[NLIExample]
    no_consensus: int
    name: str
    file: str


def _read_tsv(path: Path) -> TwoClassSet:
    header, rows = read_tsv(path)
    layout = next((t for t in TSV_LAYOUTS if {t.premise, t.hypothesis} <= set(header)), None)
    if layout is None or "gold_label" not in header:
        unlabelled = layout is not None
        raise DataError(
            path,
            "has no gold_label column (GLUE's and MultiNLI's test files are unlabelled)"
            if unlabelled
            else "not an NLI TSV faithprobe knows: the header needs gold_label and "
            "sentence1/sentence2 (MNLI style) or ori_sentence/new_sentence (HELP)",
            record="line 1",
            field="gold_label" if unlabelled else None,
        )
    kept = [(line, record) for line, record in rows if _checked(path, line, layout, record)]
    if not kept:
        raise DataError(path, "holds no examples")
    name = path.stem
    items = [_example(f"{name}-{line}", name, line, layout, r) for line, r in kept]
    return TwoClassSet(items, len(rows) - len(kept), name, path.name)


def _read_jsonl(path: Path) -> TwoClassSet:
    read, seen, skipped = [], set(), 0
    for line, record in iter_records(path):
        layout = json_layout(record)
        if not _checked(path, line, layout, record):
            skipped += 1
            continue
        key = record.get(layout.id) if layout.id else None
        item_id = str(key) if key is not None else f"{path.stem}-{line}"
        if item_id in seen:
            raise DataError(path, f"duplicate id {excerpt(item_id)}", record=f"line {line}",
                            field=layout.id)  # fmt: skip
        seen.add(item_id)
        read.append((item_id, line, layout, record))
    if not read:
        raise DataError(path, "holds no examples with a gold label")
    name, file = path.stem, path.name
    folder = path.resolve().parent.name
    if ANLI_ROUND.fullmatch(folder) and any(r[2] in ANLI_LAYOUTS for r in read):
        name, file = f"anli-{folder.upper()}-{path.stem}", f"{folder}/{path.name}"
    items = [_example(item_id, name, line, layout, r) for item_id, line, layout, r in read]
    return TwoClassSet(items, skipped, name, file)


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
