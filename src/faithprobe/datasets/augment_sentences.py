"""The faithfulness method's +Aug sentences read from a file (option ``augment_file``): one
sentence per question that states its answer, put in place of the bare re-inserted answer of
TS-R / OS-R (Chaturvedi et al.'s augmentation, their sentences written by ChatGPT).

The method's code loads them as a dict from the HotpotQA question id to the sentence (a
pickled ``.npy``; faithprobe never unpickles a file, which can run code: convert it with
``json.dump({k: str(v) for k, v in numpy.load(F, allow_pickle=True)[()].items()}, out)``).
Two forms are read: one JSON object ``{question id: sentence}``, or JSON lines
``{"id": ..., "sentence": ...}``. A question id is the one in the data file (``_id`` in
HotpotQA, ``id`` in SQuAD, ``<story id>-<turn>`` in CoQA) or faithprobe's own example id
(``hotpot-<_id>``); :func:`sentence_for` tries both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from faithprobe import json_values
from faithprobe.datasets.jsonl import checked_records, read_text
from faithprobe.datasets.schema import TEXT, DataSchema, Field
from faithprobe.errors import DataError
from faithprobe.records import QAExample

AUGMENT_SCHEMA = DataSchema(
    name="+Aug sentences (augment_file=FILE)",
    record="one JSON object {question id: sentence}, or one {id, sentence} object per JSON line",
    fields=(
        Field(
            "id",
            TEXT,
            "the question's id in the data file (HotpotQA _id, SQuAD id, CoQA '<story id>-"
            "<turn>') or faithprobe's example id (hotpot-<_id>)",
            required=True,
        ),
        Field(
            "sentence",
            TEXT,
            "a sentence stating the question's answer; put after the text a deletion left, "
            "in place of the bare answer",
            required=True,
        ),
    ),
    links="a sentence belongs to the question its id names; a question the deletion must "
    "re-insert an answer for and the file has no sentence for is dropped from +Aug (as the "
    "method drops it), a sentence without the answer too",
)


def read_augment_sentences(path: str | Path) -> dict[str, str]:
    """The file's sentences by question id (module docstring)."""
    path = Path(path)
    text = read_text(path)
    try:
        whole = json_values.loads(text)
    except json_values.Unfit as err:
        raise err.in_file(path) from None
    except json.JSONDecodeError:
        whole = None  # JSON lines
    if isinstance(whole, dict) and "id" not in whole:  # else one JSON-lines record
        records = [(str(k), {"id": str(k), "sentence": v}) for k, v in whole.items()]
        if not records:
            raise DataError(path, "holds no sentences")
    else:
        records = [(f"line {n}", r) for n, r in checked_records(path, AUGMENT_SCHEMA)]
    out: dict[str, str] = {}
    for name, record in records:
        AUGMENT_SCHEMA.check(path, name, record)
        if record["id"] in out:
            raise DataError(path, "a second sentence for this id", record=name, field="id")
        out[record["id"]] = record["sentence"]
    return out


def sentence_for(sentences: Mapping[str, str], example: QAExample) -> str | None:
    """The sentence for ``example``: by its example id, else by the data file's id (the
    example id without its source prefix, ``hotpot-``); None if the file has none."""
    found = sentences.get(example.id)
    if found is None and "-" in example.id:
        found = sentences.get(example.id.split("-", 1)[1])
    return found
