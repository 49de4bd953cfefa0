"""What the training recipes share: settings, the output folder, the Trainer, evaluation.

A recipe (``train mc``, ``train nli``) reads its data, then runs through a
:class:`Session` (its settings and run options): ``start`` claims the output folder and
loads the base, the recipe encodes its data, ``fit`` trains, ``summary`` and ``finish``
evaluate and record. The pieces:

* :class:`TrainSettings` -- the hyper-parameters every recipe has, checked, and recorded in
  ``training.json`` and in the checkpoints' run file;
* :func:`prepare_out` -- claims ``<out>``: a finished model is only trained into again with
  ``overwrite``, a foreign folder never, and checkpoints of a run with other settings are
  not resumed from (``restart`` discards them);
* :func:`load_base` -- the base encoder with a fresh task head, seeded;
* :meth:`Session.fit` -- transformers' ``Trainer`` (AdamW, linear decay after a linear warm-up,
  gradient clipping, checkpoints, resumption) with two things of our own:

  - a length-grouped sampler whose order depends only on (seed, epoch), so batches hold
    rows of similar length (Social IQA rows are 34 MiniLM tokens on average; random
    batches of 16 items pad to 48 on average, length-grouped ones to 36) and a resumed run
    sees the same order as an uninterrupted one;
  - a collator that pads every batch to its own longest row (:func:`collate`);
  - with ``patience``, early stopping on a held-out split of the training rows
    (:func:`validation_split`): a ``validation`` share of them (whole groups: a question
    with its windows and variants, an item with its choices), drawn by a seeded hash, is
    not trained on; its loss is computed at every checkpoint (``save_steps``), training
    stops once it has not improved for ``patience`` checkpoints in a row, and the
    checkpoint with the lowest held-out loss is the model saved (``training.json``:
    ``early_stopping``).

  The optimizer is PyTorch's fused AdamW: on CPU its step over MiniLM's 22.7M parameters
  is 5-10x faster than the default per-tensor AdamW (which took about a third of a step).
  Training seconds are summed over interrupted sessions.
* :func:`load_trained`, :func:`score`, :func:`accuracy` -- evaluation through
  ``load_subject(<out>)``, the path the suites take, with a 95% Wilson interval;
* :meth:`Session.finish` -- writes ``training.json`` atomically and drops the checkpoints.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from faithprobe.atomic import write_json
from faithprobe.datasets.splits import SUMMARY
from faithprobe.errors import ModelError, UsageError

CHECKPOINTS = "checkpoints"
PAD_TARGET = -100  # a per-token target of a padding position: none (cross-entropy's ignore index)
RUN_FILE = "faithprobe-run.json"
TIME_FILE = "faithprobe-time.json"

Log = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class TrainSettings:
    """The settings every recipe has; a recipe's config adds its data and own settings."""

    out: Path
    base: Path | None = None  # None: the embedded all-MiniLM-L6-v2
    epochs: float = 1.0
    learning_rate: float = 5e-5
    batch_size: int = 16
    max_length: int = 128
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    seed: int = 0
    max_steps: int | None = None  # stop after this many optimizer steps (smoke tests)
    save_steps: int = 100
    # early stopping: checkpoints without a lower held-out loss before training stops (None:
    # train to the end), and the share of the training rows held out for that loss
    patience: int | None = None
    validation: float = 0.1
    eval_batch_size: int = 32
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    # the recipe's own fields that belong among the hyper-parameters
    recipe_hyperparameters: ClassVar[tuple[str, ...]] = ()

    def check(self) -> None:
        positive = {
            "epochs": self.epochs,
            "learning_rate": self.learning_rate,
            "batch_size": self.batch_size,
            "save_steps": self.save_steps,
            "eval_batch_size": self.eval_batch_size,
        }
        for name, value in positive.items():
            if not value > 0:
                raise UsageError(f"{name} must be positive, got {value}")
        if self.max_steps is not None and self.max_steps < 1:
            raise UsageError(f"max_steps must be at least 1, got {self.max_steps}")
        if not 16 <= self.max_length <= 4096:
            raise UsageError(f"max_length must be in 16..4096, got {self.max_length}")
        if not 0 <= self.warmup_ratio < 1:
            raise UsageError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if self.weight_decay < 0:
            raise UsageError(f"weight_decay must be >= 0, got {self.weight_decay}")
        if self.patience is not None and self.patience < 1:
            raise UsageError(f"patience must be at least 1, got {self.patience}")
        if not 0 < self.validation < 1:
            raise UsageError(f"validation must be in (0, 1), got {self.validation}")

    def hyperparameters(self) -> dict[str, Any]:
        keys = (
            "epochs",
            "learning_rate",
            "batch_size",
            "max_length",
            "warmup_ratio",
            "weight_decay",
            "max_steps",
            "patience",
            "validation",
            *self.recipe_hyperparameters,
        )
        # a recipe's hyper-parameter may be a property (derived from its fields); tuples
        # become lists, as the run file's JSON gives them back
        values = {k: getattr(self, k) for k in keys}
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
        out.update(
            optimizer="adamw_torch_fused",
            lr_schedule="linear decay after linear warm-up",
            max_grad_norm=1.0,
            sampler="length-grouped (mega-batches of 50 batches), seeded per epoch",
        )
        return out


def ids_digest(ids: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Base:
    """The encoder a recipe starts from."""

    path: Path
    name: str
    fingerprint: str


def resolve_base(base: Path | None) -> Base:
    """``base`` (a local folder), or the embedded MiniLM when None."""
    from faithprobe.subjects.fingerprint import fingerprint_path

    if base is None:
        from faithprobe.subjects.hf.minilm import DISPLAY_NAME, minilm_path

        path, name = minilm_path(), DISPLAY_NAME
    else:
        path = Path(base).expanduser()
        if not (path / "config.json").is_file():
            raise ModelError(f"--base {path} is not a model folder (no config.json there)")
        name = str(path)
    return Base(path, name, fingerprint_path(path))


# -- the run's folder ---------------------------------------------------------------------


def prepare_out(
    out: Path, run: dict[str, Any], *, overwrite: bool, restart: bool, write: bool
) -> Path:
    """Check ``out`` (``write=False``: only raise), then claim it (``write=True``) and
    return its checkpoint folder. Never deletes anything but our own checkpoints and
    summary, and only when told to."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder")
    ckpt = out / CHECKPOINTS
    finished = (out / SUMMARY).exists()
    if finished and not overwrite:
        raise UsageError(
            f"{out} already holds a trained model ({SUMMARY}); pass --overwrite to train "
            "again into it, or choose another --out"
        )
    if not finished and out.is_dir() and any(out.iterdir()) and not (ckpt / RUN_FILE).is_file():
        raise UsageError(
            f"{out} is not empty and holds no faithprobe training run; choose a new or empty "
            "--out folder"
        )
    fresh = finished or restart  # the old checkpoints go
    if not fresh and (ckpt / RUN_FILE).is_file():
        before = json.loads((ckpt / RUN_FILE).read_text())
        if before != run:
            changed = sorted(k for k in set(before) | set(run) if before.get(k) != run.get(k))
            raise UsageError(
                f"{ckpt} holds checkpoints of a run with different settings "
                f"({', '.join(changed)}); pass --restart to discard them, or choose another --out"
            )
    if write:
        if finished:
            (out / SUMMARY).unlink()
        if fresh:
            shutil.rmtree(ckpt, ignore_errors=True)
        ckpt.mkdir(parents=True, exist_ok=True)
        (ckpt / RUN_FILE).write_text(json.dumps(run, indent=2))
    return ckpt


def load_base(auto_class: str, base: Base, seed: int, what: str, **kwargs):
    """(model, tokenizer): ``base`` loaded with transformers' ``auto_class`` (a fresh task
    head, initialised under ``seed``); a ModelError if it does not load as ``what``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers

    transformers.set_seed(seed)  # before the head is initialised
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(base.path)
        model = getattr(transformers, auto_class).from_pretrained(
            base.path, dtype=torch.float32, **kwargs
        )
    except (OSError, ValueError, KeyError) as err:
        raise ModelError(f"cannot load {base.path} as {what}: {err}") from err
    return model, tokenizer


# -- training -----------------------------------------------------------------------------


class EncodedDataset:
    """Encoded examples for the Trainer: per example either ``rows`` (one encoded row per
    choice) or one ``row``, and its label (an integer, or a dict of named integer targets);
    ``lengths`` drive the sampler. ``groups`` name what must stay on one side of a
    validation split (:func:`validation_split`): by default each example is its own."""

    def __init__(
        self,
        encoded: Sequence,
        labels: Sequence,
        *,
        grouped: bool,
        groups: Sequence[str] | None = None,
    ) -> None:
        self.key = "rows" if grouped else "row"
        self.encoded, self.labels = list(encoded), list(labels)
        self.groups = [str(i) for i in range(len(self.encoded))] if groups is None else list(groups)
        if len(self.groups) != len(self.encoded):
            raise ValueError(f"{len(self.groups)} groups for {len(self.encoded)} examples")
        self.lengths = [
            max(len(ids) for ids, _ in e) if grouped else len(e[0]) for e in self.encoded
        ]

    def __len__(self) -> int:
        return len(self.encoded)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {self.key: self.encoded[i], "labels": self.labels[i]}

    def subset(self, indices: Sequence[int]) -> EncodedDataset:
        """The examples at ``indices``, in that order."""
        part = EncodedDataset.__new__(EncodedDataset)
        part.key = self.key
        part.encoded = [self.encoded[i] for i in indices]
        part.labels = [self.labels[i] for i in indices]
        part.groups = [self.groups[i] for i in indices]
        part.lengths = [self.lengths[i] for i in indices]
        return part


def validation_split(
    dataset: EncodedDataset, share: float, seed: int
) -> tuple[EncodedDataset, EncodedDataset]:
    """(train, validation): the groups first in a seeded hash order of their names, up to
    ``share`` of the groups (at least one, and at least one left to train on), held out
    whole; each part keeps the dataset's order."""
    from faithprobe.seeding import hash_rank

    names = sorted(set(dataset.groups), key=lambda g: hash_rank(seed, g))
    if len(names) < 2:
        raise UsageError("early stopping needs at least two groups of training rows to split")
    held = set(names[: min(len(names) - 1, max(1, round(share * len(names))))])
    inside = [i for i, g in enumerate(dataset.groups) if g in held]
    outside = [i for i, g in enumerate(dataset.groups) if g not in held]
    return dataset.subset(outside), dataset.subset(inside)


def collate(features: list[dict[str, Any]], pad_id: int) -> dict[str, Any]:
    """Pad a batch to its longest row: [batch, choices, length] for items with ``rows``,
    [batch, length] for items with one ``row``; a per-token target (a list) is padded with
    :data:`PAD_TARGET`."""
    import torch

    from faithprobe.subjects.hf.encoder import pad_rows

    grouped = "rows" in features[0]
    rows = [r for f in features for r in f["rows"]] if grouped else [f["row"] for f in features]
    batch = pad_rows(rows, pad_id)
    if grouped:
        batch = {k: v.view(len(features), -1, v.shape[-1]) for k, v in batch.items()}
    labels = [f["labels"] for f in features]
    if isinstance(labels[0], dict):  # several named targets (QA: start and end positions)
        width = batch["input_ids"].shape[-1]
        for key in labels[0]:
            values = [lab[key] for lab in labels]
            if isinstance(values[0], list):  # one target per token: padded with "no target"
                values = [v + [PAD_TARGET] * (width - len(v)) for v in values]
            batch[key] = torch.tensor(values)
    else:
        batch["labels"] = torch.tensor(labels)
    return batch


def make_trainer(
    model,
    tokenizer,
    dataset,
    args,
    lengths: list[int],
    seed: int,
    ckpt: Path,
    *,
    eval_dataset=None,
    callbacks: Sequence = (),
):
    """A Trainer with the seeded length-grouped sampler, our collator, and a time keeper;
    ``eval_dataset`` and ``callbacks`` (early stopping) as the Trainer takes them."""
    import torch
    from transformers import Trainer, TrainerCallback
    from transformers.trainer_pt_utils import get_length_grouped_indices

    class LengthGroupedSampler(torch.utils.data.Sampler):
        """Shuffle, sort by length within mega-batches; the order is a function of
        (seed, epoch) only, so resuming mid-epoch replays the same batches."""

        def __init__(self, batch_size: int) -> None:
            self.batch_size = batch_size
            self.epoch = 0

        def set_epoch(self, epoch: int) -> None:
            self.epoch = epoch

        def __len__(self) -> int:
            return len(lengths)

        def __iter__(self):
            g = torch.Generator()
            g.manual_seed(seed * 1_000_003 + self.epoch)
            return iter(get_length_grouped_indices(lengths, self.batch_size, generator=g))

    class RecipeTrainer(Trainer):
        def _get_train_sampler(self, train_dataset=None):
            return LengthGroupedSampler(
                self.args.train_batch_size * self.args.gradient_accumulation_steps
            )

    class TimeKeeper(TrainerCallback):
        """Training seconds summed over sessions, stored with each checkpoint."""

        def __init__(self) -> None:
            self.before = 0.0
            self.start = time.monotonic()

        def elapsed(self) -> float:
            return self.before + time.monotonic() - self.start

        def on_save(self, args, state, control, **kwargs):
            folder = ckpt / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                (folder / TIME_FILE).write_text(json.dumps({"seconds": self.elapsed()}))

    keeper = TimeKeeper()
    pad = tokenizer.pad_token_id
    trainer = RecipeTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=lambda features: collate(features, pad if pad is not None else 0),
        processing_class=tokenizer,
        eval_dataset=eval_dataset,
        callbacks=[keeper, *callbacks],
    )
    return trainer, keeper


@dataclass
class Fitted:
    """A finished training: the trainer (holding the model) and what training.json keeps."""

    trainer: Any
    train_loss: float
    seconds: float
    resumed_from_step: int
    validation_rows: int = 0  # rows held out for early stopping (0: none)

    def early_stopping(self) -> dict[str, Any] | None:
        """What early stopping did: the held-out loss at each checkpoint, the best step
        (the model saved) and the step training stopped at; None without it."""
        if not self.validation_rows:
            return None
        state, args = self.trainer.state, self.trainer.args
        evaluated = [
            {"step": e["step"], "eval_loss": e["eval_loss"]}
            for e in state.log_history
            if "eval_loss" in e
        ]
        best = state.best_model_checkpoint
        return {
            "patience": self.patience,
            "validation_rows": self.validation_rows,
            "metric": "loss on the held-out training rows (lower is better)",
            "evaluated_every_steps": args.eval_steps,
            "best_step": int(Path(best).name.rsplit("-", 1)[1]) if best else None,
            "best_eval_loss": state.best_metric,
            "stopped_at_step": state.global_step,
            "stopped_early": state.global_step < state.max_steps,
            "eval_log": evaluated,
        }

    @property
    def patience(self) -> int | None:
        callbacks = self.trainer.callback_handler.callbacks
        found = [c for c in callbacks if hasattr(c, "early_stopping_patience")]
        return found[0].early_stopping_patience if found else None

    def record(self) -> dict[str, Any]:
        import torch

        return {
            "model_class": type(self.trainer.model).__name__,
            "steps": self.trainer.state.global_step,
            "epochs_done": self.trainer.state.epoch,
            "train_loss": self.train_loss,
            "train_seconds": round(self.seconds, 1),
            "resumed_from_step": self.resumed_from_step,
            "torch_threads": torch.get_num_threads(),
            "loss_log": [
                {
                    "step": e["step"],
                    "epoch": e.get("epoch"),
                    "loss": e["loss"],
                    "learning_rate": e.get("learning_rate"),
                }
                for e in self.trainer.state.log_history
                if "loss" in e
            ],  # fmt: skip
            "early_stopping": self.early_stopping(),
        }


# -- evaluation and the summary -----------------------------------------------------------


def load_trained(out: Path, cls: type, backend: str, batch_size: int):
    """The trained model as the suites load it: ``load_subject(out)``, which must pick
    ``cls`` (the ``backend`` a recipe is for)."""
    from faithprobe.subjects import load_subject

    subject = load_subject(str(out), batch_size=batch_size)
    if not isinstance(subject, cls):
        raise ModelError(f"{out} did not load as a {backend} model ({type(subject).__name__})")
    return subject


def score(subject, requests: list, desc: str, progress: bool) -> list:
    """``subject``'s answers to ``requests``, with a progress bar."""
    from tqdm.auto import tqdm

    with tqdm(total=len(requests), desc=desc, unit="item", disable=not progress) as bar:
        return subject.answer(requests, progress=bar.update)


def argmax(values: Sequence[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def accuracy(correct: int, n: int, **extra: Any) -> dict[str, Any]:
    """Accuracy with its 95% Wilson interval, as training.json records it."""
    from faithprobe.metrics.intervals import wilson

    lo, hi = wilson(correct, n)
    return {
        "value": correct / n if n else None,
        "ci_low": lo,
        "ci_high": hi,
        "correct": correct,
        "n": n,
        "method": "Wilson score interval, 95%",
        **extra,
    }


def describe_accuracy(acc: dict[str, Any]) -> str:
    return (
        f"{acc['value']:.4f} [95% CI {acc['ci_low']:.4f}, {acc['ci_high']:.4f}] "
        f"({acc['correct']}/{acc['n']})"
    )


class Session:
    """One run of a recipe: its settings, the run options, the base and output folder.

    ``overwrite``: train again into an ``out`` holding a finished model; ``restart``:
    discard checkpoints instead of resuming; ``keep_checkpoints``: keep them after success;
    ``progress``: progress bars; ``log``: where messages go (default: stderr)."""

    def __init__(
        self,
        cfg: TrainSettings,
        *,
        overwrite: bool = False,
        restart: bool = False,
        keep_checkpoints: bool = False,
        progress: bool = True,
        log: Log | None = None,
    ) -> None:
        cfg.check()
        self.cfg, self.out = cfg, Path(cfg.out)
        self.overwrite, self.restart = overwrite, restart
        self.keep_checkpoints, self.progress = keep_checkpoints, progress
        self.say: Log = log or (lambda msg: print(msg, file=sys.stderr))
        self.base: Base | None = None
        self.run: dict[str, Any] = {}
        self.ckpt = self.out / CHECKPOINTS
        self.labels: dict[str, str] = {}  # a classifier's classes, for training.json

    def start(self, data: dict[str, Any], auto_class: str, what: str, **model_kwargs):
        """Resolve the base, check ``out`` (before the slow load), load the base with a
        fresh head, claim ``out``; return (model, tokenizer). ``data`` identifies the
        training data in the run file, so a resumed run must train on the same."""
        cfg = self.cfg
        self.base = resolve_base(cfg.base)
        self.run = {
            "base": str(self.base.path),
            "base_fingerprint": self.base.fingerprint,
            **data,
            "seed": cfg.seed,
            **cfg.hyperparameters(),
        }
        claim = dict(overwrite=self.overwrite, restart=self.restart)
        prepare_out(self.out, self.run, **claim, write=False)
        model, tokenizer = load_base(auto_class, self.base, cfg.seed, what, **model_kwargs)
        self.ckpt = prepare_out(self.out, self.run, **claim, write=True)
        return model, tokenizer

    def start_classifier(self, data: dict[str, Any], id2label: dict[int, str]):
        """:meth:`start` with a sequence-classification head over ``id2label``'s classes (a
        base with another head gets a fresh one); training.json records the classes."""
        self.labels = {str(i): label for i, label in id2label.items()}
        return self.start(
            data,
            "AutoModelForSequenceClassification",
            "a sequence classifier",
            num_labels=len(id2label),
            id2label=id2label,
            label2id={label: i for i, label in id2label.items()},
            ignore_mismatched_sizes=True,
        )

    def fit(
        self, model, tokenizer, dataset: EncodedDataset, make_trainer: Callable = make_trainer
    ) -> Fitted:
        """Train (resuming from the last checkpoint if there is one), then save the model
        (safetensors) and tokenizer in ``out``. With ``patience``, early stopping on a
        held-out split of ``dataset`` (module docstring)."""
        from transformers import EarlyStoppingCallback, TrainingArguments
        from transformers.trainer_utils import get_last_checkpoint

        cfg = self.cfg
        validation, stopping = None, {}
        if cfg.patience is not None:
            dataset, validation = validation_split(dataset, cfg.validation, cfg.seed)
            self.say(
                f"Early stopping: {len(validation)} of {len(dataset) + len(validation)} "
                f"training rows held out, patience {cfg.patience} checkpoints"
            )
            label_names = (
                list(validation.labels[0]) if isinstance(validation.labels[0], dict) else ["labels"]
            )
            stopping = dict(
                eval_strategy="steps",
                eval_steps=cfg.save_steps,
                per_device_eval_batch_size=cfg.eval_batch_size,
                load_best_model_at_end=True,
                metric_for_best_model="eval_loss",
                greater_is_better=False,
                prediction_loss_only=True,
                label_names=label_names,
            )
        args = TrainingArguments(
            output_dir=str(self.ckpt),
            num_train_epochs=cfg.epochs,
            max_steps=cfg.max_steps or -1,
            per_device_train_batch_size=cfg.batch_size,
            learning_rate=cfg.learning_rate,
            weight_decay=cfg.weight_decay,
            warmup_steps=cfg.warmup_ratio,  # below 1: a fraction of the training steps
            lr_scheduler_type="linear",
            optim="adamw_torch_fused",  # see the module docstring
            max_grad_norm=1.0,
            seed=cfg.seed,
            data_seed=cfg.seed,
            logging_steps=50,
            save_strategy="steps",
            save_steps=cfg.save_steps,
            save_total_limit=1,
            report_to="none",
            dataloader_num_workers=0,
            dataloader_pin_memory=False,
            remove_unused_columns=False,
            disable_tqdm=not self.progress,
            **stopping,
        )
        callbacks = [EarlyStoppingCallback(cfg.patience)] if validation is not None else []
        trainer, keeper = make_trainer(
            model, tokenizer, dataset, args, dataset.lengths, cfg.seed, self.ckpt,
            eval_dataset=validation, callbacks=callbacks,
        )  # fmt: skip
        last = get_last_checkpoint(str(self.ckpt)) if self.ckpt.is_dir() else None
        resumed_step = 0
        if last:
            resumed_step = int(Path(last).name.rsplit("-", 1)[1])
            time_file = Path(last) / TIME_FILE
            if time_file.is_file():
                keeper.before = json.loads(time_file.read_text())["seconds"]
            self.say(f"Resuming from {last}")
        result = trainer.train(resume_from_checkpoint=last)
        seconds = keeper.elapsed()
        trainer.model.save_pretrained(cfg.out, safe_serialization=True)
        tokenizer.save_pretrained(cfg.out)
        held = len(validation) if validation is not None else 0
        return Fitted(trainer, result.training_loss, seconds, resumed_step, held)

    def summary(self, task: str, recipe: str, fitted: Fitted, **sections: Any) -> dict[str, Any]:
        """training.json: what every recipe records, around the recipe's ``sections``."""
        import torch
        import transformers

        import faithprobe

        base, cfg = self.base, self.cfg
        assert base is not None, "start() first"
        return {
            "task": task,
            "recipe": recipe,
            "base_model": base.name,
            "base_path": str(base.path),
            "base_fingerprint": base.fingerprint,
            **fitted.record(),
            **({"labels": self.labels} if self.labels else {}),
            **sections,
            "hyperparameters": cfg.hyperparameters(),
            "seed": cfg.seed,
            "versions": {
                "faithprobe": getattr(faithprobe, "__version__", "unknown"),
                "torch": torch.__version__,
                "transformers": transformers.__version__,
            },
            **({"extra": cfg.extra} if cfg.extra else {}),
        }

    def finish(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Write training.json and, unless kept, drop the checkpoints."""
        write_json(self.out / SUMMARY, summary)
        if not self.keep_checkpoints:
            shutil.rmtree(self.ckpt, ignore_errors=True)
        return summary
