"""Fine-tune an encoder into a two-class NLI classifier (``faithprobe train nli``).

The base is the embedded all-MiniLM-L6-v2 or any local encoder folder;
``AutoModelForSequenceClassification`` puts a fresh two-class head on it with
``id2label = {0: "entailment", 1: "non-entailment"}``, so the saved folder
(``architectures: [*ForSequenceClassification]``, safetensors) loads through
:func:`faithprobe.subjects.load_subject` as an
:class:`~faithprobe.subjects.hf.nli.HFNLI`. (premise, hypothesis)
is encoded by the backend's own :func:`~faithprobe.subjects.hf.nli.encode_pair`.

**Data.** ``train`` files are anything :func:`faithprobe.datasets.nli.read_nli` reads
(MNLI-style or HELP TSV, jsonl), labels collapsed to two classes. ``--extra`` files
(``extra_train``) are read and trained on the same way; they name added training data (the
method's HELP contrast: the same recipe with and without HELP's TSVs), which an NLI-XY
folder given to ``exclude`` would otherwise remove whole, since HELP's files are among the
challenge sets found beside it. An ``--extra`` file is therefore never itself excluded as a challenge set; every pair of it that
occurs in the rest of the excluded data (the grid, the other challenge sets) still is, and
is counted per file.

**Keeping evaluation data out.** Every ``exclude`` path is an NLI file or an NLI-XY folder
(its :func:`~faithprobe.datasets.nli_xy.read_nli_xy` grid plus the challenge sets
:func:`~faithprobe.datasets.nli_xy.challenge_files` finds beside it). A training example
whose (premise, hypothesis), lowercased with white space collapsed, occurs in the excluded
data is dropped; the count is logged and recorded. Without ``exclude`` a warning says that
nothing keeps the evaluated data out of training.

**Held-out split.** A ``heldout`` fraction of the distinct (premise, hypothesis) pairs left
after exclusion is drawn with ``random.Random(seed)``; their examples are never trained on
(a pair never lands on both sides). At the end the held-out examples, and any ``dev`` files,
are scored by loading ``<out>`` through ``load_subject`` -- the path the suites take -- and
``training.json`` records the accuracy with a 95% Wilson interval.

Training, checkpoints and resumption are those of every recipe
(:mod:`faithprobe.training.common`).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from faithprobe.errors import DataError, UsageError
from faithprobe.records import ENTAILMENT, NLI_LABELS, NON_ENTAILMENT, NLIExample
from faithprobe.training import common
from faithprobe.training.configs import NLITrainConfig

ID2LABEL = {0: ENTAILMENT, 1: NON_ENTAILMENT}
LABEL2ID = {label: i for i, label in ID2LABEL.items()}
NO_EXCLUDE_WARNING = (
    "no --exclude given: nothing keeps the data the natural-logic suite evaluates out of "
    "training (pass --exclude <NLI-XY folder> and any other evaluation files)"
)

# the Trainer factory (a module attribute, so tests can wrap it)
_make_trainer = common.make_trainer

Key = tuple[str, str]


def pair_key(premise: str, hypothesis: str) -> Key:
    """How pairs are compared: lowercased, white space collapsed."""
    return " ".join(premise.lower().split()), " ".join(hypothesis.lower().split())


def _key(ex: NLIExample) -> Key:
    return pair_key(ex.premise, ex.hypothesis)


def _read(path: Path, role: str) -> list[NLIExample]:
    from faithprobe.datasets.nli import read_nli

    path = Path(path)
    if not path.exists():
        raise DataError(path, f"{role} file not found")
    if not path.is_file():
        raise DataError(path, f"{role} path is not a file")
    return read_nli(path)


def excluded_pairs(
    paths: tuple[Path, ...], trained_on: tuple[Path, ...] = ()
) -> tuple[set[Key], list[dict[str, Any]]]:
    """The pairs of every ``--exclude`` path, and a record of where they came from. A
    challenge set found beside an NLI-XY folder that is one of ``trained_on`` (the
    ``--extra`` files) is not excluded whole; the record names it."""
    from faithprobe.datasets.nli_xy import challenge_files, read_nli_xy

    exempt = {Path(p).resolve() for p in trained_on}
    keys: set[Key] = set()
    sources = []
    for path in map(Path, paths):
        kept_in: list[Path] = []
        if path.is_dir():
            found = challenge_files(path)
            files = [f for f in found if f not in exempt]
            kept_in = [f for f in found if f in exempt]
            examples = read_nli_xy(path).examples
            examples += [ex for f in files for ex in _read(f, "challenge")]
            kind = "NLI-XY folder: its grid and the challenge sets beside it"
        elif path.exists():
            files, examples, kind = [path], _read(path, "--exclude"), "NLI file"
        else:
            raise DataError(path, "--exclude path not found (give an NLI file or NLI-XY folder)")
        own = {_key(ex) for ex in examples}
        keys |= own
        sources.append(
            {
                "path": str(path.resolve()),
                "kind": kind,
                "files": [str(f.resolve()) for f in files],
                "examples": len(examples),
                "pairs": len(own),
                **({"not_excluded_trained_on": [str(f) for f in kept_in]} if kept_in else {}),
            }
        )
    return keys, sources


def heldout_split(
    items: list[NLIExample], fraction: float, seed: int
) -> tuple[list[NLIExample], list[NLIExample]]:
    """(train, held out): a seeded ``fraction`` of the distinct pairs, all their examples."""
    pairs = list(dict.fromkeys(_key(ex) for ex in items))
    k = round(fraction * len(pairs))
    if fraction > 0 and k == 0:
        k = 1
    if k >= len(pairs):
        raise UsageError(
            f"--heldout {fraction} of {len(pairs)} distinct pairs leaves nothing to train on"
        )
    held = set(random.Random(seed).sample(pairs, k))
    return [ex for ex in items if _key(ex) not in held], [ex for ex in items if _key(ex) in held]


def _balance(items: list[NLIExample]) -> dict[str, int]:
    counts = Counter(ex.label for ex in items)
    return {label: counts.get(label, 0) for label in NLI_LABELS}


def _evaluate(subject, items: list[NLIExample], desc: str, progress: bool) -> dict[str, Any]:
    from faithprobe.requests import TextPairRequest

    requests = [TextPairRequest(ex.premise, ex.hypothesis, NLI_LABELS) for ex in items]
    scores = common.score(subject, requests, desc, progress)
    right = [
        NLI_LABELS[common.argmax(s.logprobs)] == ex.label
        for ex, s in zip(items, scores, strict=True)
    ]
    by_label = {
        label: {
            "correct": sum(r for r, ex in zip(right, items, strict=True) if ex.label == label),
            "n": sum(ex.label == label for ex in items),
        }
        for label in NLI_LABELS
    }
    return common.accuracy(
        sum(right),
        len(items),
        by_label=by_label,
        scored_with={"backend": "hf-nli", "max_length": subject.max_length},
    )


def _drop_excluded(
    train_files: list[tuple[Path, str, list[NLIExample]]], excluded: set[Key], say
) -> tuple[list[NLIExample], list[dict[str, Any]]]:
    """The training examples whose pair is not ``excluded``, and a record per file of how
    many it read and removed."""
    kept, file_records = [], []
    for path, role, items in train_files:
        own = [ex for ex in items if _key(ex) not in excluded]
        kept += own
        file_records.append(
            {
                "path": str(path.resolve()),
                "role": role,
                "read": len(items),
                "removed_overlapping": len(items) - len(own),
            }
        )
        if role == "extra":
            say(f"--extra {path.name}: {len(own)} of {len(items)} examples kept")
    return kept, file_records


def _encoded(model, tokenizer, train: list[NLIExample], max_length: int):
    """The training pairs as the hf-nli backend encodes them, with their label ids."""
    from faithprobe.subjects.hf.encoder import uses_token_types
    from faithprobe.subjects.hf.nli import encode_pair

    types = uses_token_types(model)
    encoded = [encode_pair(tokenizer, ex.premise, ex.hypothesis, max_length, types) for ex in train]
    return common.EncodedDataset(encoded, [LABEL2ID[ex.label] for ex in train], grouped=False)


def _train_record(
    file_records: list[dict[str, Any]], train: list[NLIExample], held: int, ids: str
) -> dict[str, Any]:
    """training.json's ``train``: the files, what was read, removed, held out and used."""
    n_read = sum(r["read"] for r in file_records)
    return {
        "files": file_records,
        "read": n_read,
        "removed_overlapping": sum(r["removed_overlapping"] for r in file_records),
        "extra_removed_overlapping": sum(
            r["removed_overlapping"] for r in file_records if r["role"] == "extra"
        ),
        "held_out": held,
        "used": len(train),
        "label_balance": _balance(train),
        "ids_sha256_16": ids,
    }


def _exclude_record(cfg: NLITrainConfig, sources: list[dict[str, Any]], pairs: int):
    """training.json's ``exclude``: where the excluded pairs came from, and how compared."""
    return {
        "sources": sources,
        "pairs": pairs,
        "compared": "(premise, hypothesis), lowercased, white space collapsed",
        **({} if cfg.exclude else {"warning": NO_EXCLUDE_WARNING}),
    }


def _heldout_record(cfg: NLITrainConfig, held: list[NLIExample]) -> dict[str, Any]:
    """training.json's ``heldout``: the held-out pairs and how they were drawn."""
    return {
        "fraction": cfg.heldout,
        "examples": len(held),
        "pairs": len({_key(ex) for ex in held}),
        "label_balance": _balance(held),
        "split": f"random.Random({cfg.seed}).sample over the distinct (premise, hypothesis) "
        "pairs left after exclusion; never trained on",
    }


def _dev_records(subject, dev_files, train: list[NLIExample], progress: bool):
    """training.json's ``dev``: each dev file scored, with its pairs also trained on."""
    train_keys = {_key(ex) for ex in train}
    return [
        {
            "path": str(path.resolve()),
            "examples": len(items),
            "also_in_training": sum(_key(ex) in train_keys for ex in items),
            "accuracy": _evaluate(subject, items, path.name, progress),
        }
        for path, items in dev_files
    ]


def train_nli(cfg: NLITrainConfig, **options: Any) -> dict[str, Any]:
    """Filter, split, train, save, evaluate; return what ``training.json`` holds.
    ``options`` are those of :class:`~faithprobe.training.common.Session` (``overwrite``,
    ``restart``, ``keep_checkpoints``, ``progress``, ``log``)."""
    session = common.Session(cfg, **options)
    say = session.say
    train_files = [(Path(p), "train", _read(Path(p), "training")) for p in cfg.train]
    train_files += [(Path(p), "extra", _read(Path(p), "--extra")) for p in cfg.extra_train]
    dev_files = [(Path(p), _read(Path(p), "dev")) for p in cfg.dev]

    excluded, sources = excluded_pairs(cfg.exclude, trained_on=cfg.extra_train)
    if not cfg.exclude:
        say(f"warning: {NO_EXCLUDE_WARNING}")
    kept, file_records = _drop_excluded(train_files, excluded, say)
    n_read = sum(len(items) for _, _, items in train_files)
    say(
        f"Removed {n_read - len(kept)} of {n_read} training examples whose (premise, "
        f"hypothesis) occurs in the excluded data ({len(excluded)} distinct pairs)"
    )
    if not kept:
        raise DataError(cfg.train[0], "no training examples left after --exclude")
    train, held = heldout_split(kept, cfg.heldout, cfg.seed)
    if not held and not dev_files:
        say("warning: --heldout 0 and no --dev: the trained model will not be scored")

    data = {
        "train": [r["path"] for r in file_records if r["role"] == "train"],
        "extra": [r["path"] for r in file_records if r["role"] == "extra"],
        "exclude": [s["path"] for s in sources],
        "train_ids": common.ids_digest(ex.id for ex in train),
        "n_train": len(train),
    }
    model, tokenizer = session.start_classifier(data, ID2LABEL)
    say(f"Encoding {len(train)} training examples ({len(held)} held out)...")
    dataset = _encoded(model, tokenizer, train, cfg.max_length)
    fitted = session.fit(model, tokenizer, dataset, _make_trainer)

    from faithprobe.subjects.hf.nli import HFNLI

    say("Scoring the held-out and dev examples through the hf-nli backend...")
    subject = common.load_trained(cfg.out, HFNLI, "hf-nli", cfg.eval_batch_size)
    progress = session.progress
    dev_records = _dev_records(subject, dev_files, train, progress)
    held_accuracy = _evaluate(subject, held, "held-out", progress) if held else None
    scores = {"held-out accuracy": held_accuracy} if held_accuracy else {}
    scores.update({f"{Path(r['path']).name} accuracy": r["accuracy"] for r in dev_records})
    summary = session.summary(
        "nli",
        "faithprobe train nli",
        fitted,
        train=_train_record(file_records, train, len(held), data["train_ids"]),
        exclude=_exclude_record(cfg, sources, len(excluded)),
        heldout=_heldout_record(cfg, held),
        heldout_accuracy=held_accuracy,
        dev=dev_records,
        scores=scores,
    )
    return session.finish(summary)
