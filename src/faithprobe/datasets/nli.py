"""Two-class NLI sets -> :class:`NLIExample`.

* MNLI-style TSV with a header row: ``sentence1`` (premise), ``sentence2`` (hypothesis),
  ``gold_label`` -- MED, the NLI-XY copies of HELP's test set and of the monotonicity
  fragments.
* HELP's own TSV: ``ori_sentence`` (premise), ``new_sentence`` (hypothesis), ``gold_label``.
* JSON lines: ``premise``, ``hypothesis``, ``label``, optional ``id``; or SNLI's official
  jsonl (``snli_1.0_*.jsonl``): ``sentence1``, ``sentence2``, ``gold_label``, optional
  ``pairID`` -- told apart per record by the presence of ``sentence1``.

Labels are read case-insensitively and collapsed to two classes: ``entailment`` stays
entailment; ``neutral``, ``contradiction``, ``non-entailment`` and ``not_entailment`` become
non-entailment. A gold label ``-`` (SNLI's and MNLI's mark for no annotator consensus) has no
gold class: the line is dropped, as the data sets' authors prescribe. The label as written is
kept in ``features["gold_label"]``. Ids are ``<file stem>-<line>`` (the files' own index
columns are not unique everywhere), or a JSON record's ``id`` (SNLI: ``pairID``).

TSV files are read without quote processing (MNLI's convention: a ``"`` is text).
"""

from __future__ import annotations

import csv
from pathlib import Path

from faithprobe.datasets.jsonl import field, iter_records, read_text
from faithprobe.errors import DataError, excerpt
from faithprobe.examples import ENTAILMENT, NON_ENTAILMENT, NLIExample

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
# (premise column, hypothesis column) of the TSV layouts we know
TSV_LAYOUTS = (("sentence1", "sentence2"), ("ori_sentence", "new_sentence"))
# (premise, hypothesis, label, id) fields of the JSON-lines layouts we know: ours, SNLI's
OWN_JSONL = ("premise", "hypothesis", "label", "id")
SNLI_JSONL = ("sentence1", "sentence2", "gold_label", "pairID")


def two_class(path: Path, record: str, raw: object) -> str:
    """``raw`` as ``"entailment"`` or ``"non-entailment"``, or a DataError naming it."""
    label = TWO_CLASS.get(str(raw).strip().lower()) if isinstance(raw, str) else None
    if label is None:
        raise DataError(
            path,
            f"unknown label {excerpt(raw)}; expected one of {', '.join(sorted(TWO_CLASS))}",
            record=record,
            field="label",
        )
    return label


def read_nli_tsv(path: str | Path) -> list[NLIExample]:
    path = Path(path)
    lines = read_text(path).splitlines()
    if not lines:
        raise DataError(path, "is empty")
    rows = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(rows)
    layout = next((cols for cols in TSV_LAYOUTS if set(cols) <= set(header)), None)
    if layout is None or "gold_label" not in header:
        raise DataError(
            path,
            "not an NLI TSV faithprobe knows: the header needs gold_label and "
            "sentence1/sentence2 (MNLI style) or ori_sentence/new_sentence (HELP)",
            record="line 1",
        )
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    items = []
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"line {line}"

        def cell(name: str, row=row, where=where) -> str:
            i = col[name]
            if i >= len(row) or not row[i].strip():
                raise DataError(path, "missing or empty", record=where, field=name)
            return row[i].strip()

        raw = cell("gold_label")
        if raw == NO_CONSENSUS:
            continue
        premise, hypothesis = cell(layout[0]), cell(layout[1])
        items.append(
            NLIExample(
                id=f"{path.stem}-{line}",
                premise=premise,
                hypothesis=hypothesis,
                label=two_class(path, where, raw),
                features={"source": path.stem, "line": line, "gold_label": raw},
            )
        )
    if not items:
        raise DataError(path, "holds no examples")
    return items


def read_nli_jsonl(path: str | Path) -> list[NLIExample]:
    path = Path(path)
    items, seen = [], set()
    for line, record in iter_records(path):
        where = f"line {line}"
        premise_key, hypothesis_key, label_key, id_key = (
            SNLI_JSONL if "sentence1" in record else OWN_JSONL
        )
        raw = field(path, line, record, label_key, str)
        if raw.strip() == NO_CONSENSUS:
            continue
        key = field(path, line, record, id_key, (str, int), required=False)
        item_id = str(key) if key is not None else f"{path.stem}-{line}"
        if item_id in seen:
            raise DataError(path, f"duplicate id {excerpt(item_id)}", record=where, field="id")
        seen.add(item_id)
        items.append(
            NLIExample(
                id=item_id,
                premise=field(path, line, record, premise_key, str).strip(),
                hypothesis=field(path, line, record, hypothesis_key, str).strip(),
                label=two_class(path, where, raw),
                features={"source": path.stem, "line": line, "gold_label": raw},
            )
        )
    if not items:
        raise DataError(path, "holds no examples with a gold label")
    return items


def read_nli(path: str | Path) -> list[NLIExample]:
    """Any supported two-class NLI file, told apart by its extension (``.jsonl``/``.json``
    are JSON lines, anything else TSV)."""
    path = Path(path)
    if path.suffix in (".jsonl", ".json"):
        return read_nli_jsonl(path)
    return read_nli_tsv(path)
