"""Train / held-out splits of a QA file by document, so that no document is on both sides.

Questions about one document share its text: a model trained on some of them has read
the passage the others ask about. The unit of a split is therefore the document
(:func:`document_key`): a SQuAD/Quoref article (its title), a CoQA story, or -- for data
without either -- the passage text itself (a HotpotQA question's own paragraphs).

A :class:`DocumentSplit` records the file it was made from (path and content digest), the
seeded draw, and both document lists. ``faithprobe train qa`` stores it in
``training.json`` under ``"split"``; the suites and analyses select the held-out part with
:func:`heldout_split_of` (``-o heldout_of=<model folder>``), which refuses a ``--data`` file
other than the one the split was made from.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from faithprobe.errors import DataError, UsageError
from faithprobe.paths import Kind, checked
from faithprobe.records import QAExample

# The file a trained model's folder records its training in (written by
# faithprobe.training.common, read here: the data layer owns the name so that reading a
# split needs nothing from training), and where in it the split is kept.
SUMMARY = "training.json"
SPLIT_KEY = "split"


def document_key(example: QAExample) -> str:
    """The document a question is about (see the module docstring)."""
    f = example.features
    source = f.get("source", "qa")
    if f.get("story_id") is not None:
        return f"{source}:story:{f['story_id']}"
    if f.get("title"):
        return f"{source}:title:{f['title']}"
    return f"{source}:passage:{hashlib.sha256(example.context.encode()).hexdigest()[:16]}"


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class DocumentSplit:
    """Which documents of ``data`` are trained on and which are held out."""

    data: str
    data_sha256_16: str
    heldout_fraction: float
    seed: int
    train: tuple[str, ...]
    heldout: tuple[str, ...]

    def part(self, examples: Iterable[QAExample], which: str) -> list[QAExample]:
        """The examples of the ``"train"`` or ``"heldout"`` documents."""
        if which not in ("train", "heldout"):
            raise ValueError(f"which must be 'train' or 'heldout', got {which!r}")
        keep = set(self.train if which == "train" else self.heldout)
        return [ex for ex in examples if document_key(ex) in keep]

    def check_data(self, path: str | Path) -> None:
        """Refuse a data file other than the one the split was made from."""
        if file_digest(path) != self.data_sha256_16:
            raise UsageError(
                f"{path} is not the file this split was made from ({self.data}, sha256 "
                f"{self.data_sha256_16}...): its held-out documents would mean nothing there"
            )

    def record(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "by": "document (SQuAD/Quoref article title, CoQA story, else the passage)",
            "draw": f"random.Random({self.seed}).sample over the sorted document keys",
            "train_documents": len(self.train),
            "heldout_documents": len(self.heldout),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> DocumentSplit:
        fields = ("data", "data_sha256_16", "heldout_fraction", "seed", "train", "heldout")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in
                      ((k, record[k]) for k in fields)})  # fmt: skip


def split_documents(
    examples: Sequence[QAExample], path: str | Path, heldout: float, seed: int
) -> DocumentSplit:
    """A seeded ``heldout`` fraction of the documents of ``examples`` (read from ``path``)."""
    if not 0 < heldout < 1:
        raise UsageError(f"the held-out fraction must be in (0, 1), got {heldout}")
    keys = sorted({document_key(ex) for ex in examples})
    k = max(1, round(heldout * len(keys)))
    if k >= len(keys):
        raise DataError(
            Path(path),
            f"{len(keys)} document(s): holding out {heldout:.0%} leaves none to train on",
        )
    held = set(random.Random(seed).sample(keys, k))
    return DocumentSplit(
        data=str(Path(path).resolve()),
        data_sha256_16=file_digest(path),
        heldout_fraction=heldout,
        seed=seed,
        train=tuple(key for key in keys if key not in held),
        heldout=tuple(sorted(held)),
    )


def heldout_split_of(model: str | Path, data: str | Path | None = None) -> DocumentSplit:
    """The split a ``faithprobe train qa`` model was trained under (its training.json): of
    ``data`` when given (its ``--train`` file or one of its ``--mix`` files; any other file
    is refused), else of its ``--train`` file."""
    path = checked(model, "heldout_of", Kind.READ_FOLDER) / SUMMARY
    if not path.is_file():
        raise UsageError(f"{model}: no {SUMMARY} there (is it a model `faithprobe train qa` made?)")
    try:
        summary = json.loads(path.read_text())
        record = summary[SPLIT_KEY]
        mixed = [m[SPLIT_KEY] for m in summary.get("mix", [])]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise DataError(path, f"no document split recorded ({err})", field=SPLIT_KEY) from err
    main = DocumentSplit.from_record(record) if record is not None else None
    if data is not None and mixed:
        digest = file_digest(data)
        splits = [s for s in (main, *map(DocumentSplit.from_record, mixed)) if s is not None]
        for split in splits:
            if split.data_sha256_16 == digest:
                return split
        files = ", ".join(s.data for s in splits)
        raise UsageError(f"{data} is none of the files {model} was split from ({files}): "
                         "its held-out documents would mean nothing there")  # fmt: skip
    if main is None:
        raise UsageError(f"{model} was trained on a separate file, not a split of one: pass that "
                         "evaluation file as --data instead")  # fmt: skip
    if data is not None:
        main.check_data(data)
    return main


def heldout_part(examples: Sequence[QAExample], data: str | Path, model: str | Path):
    """The ``examples`` (read from ``data``) of the documents ``model`` was not trained on."""
    return heldout_split_of(model, data).part(examples, "heldout")
