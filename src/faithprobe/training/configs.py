"""What each training recipe is asked to do: its config (the settings every recipe has,
:class:`~faithprobe.training.common.TrainSettings`, plus its data and own settings) and
defaults. Kept apart from the recipes, which import the data readers and the models, so the
command line declares its options from these without importing them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from faithprobe.errors import UsageError
from faithprobe.multiple_choice_prompts import DEFAULT_TEMPLATE, ChoicePrompt
from faithprobe.sentences import DEFAULT_SPLITTER, SPLITTERS
from faithprobe.training.common import TrainSettings

DEFAULT_MC_LIMIT = 20000  # multiple-choice examples trained on unless --full
DEFAULT_QA_LIMIT = 2500  # QA questions trained on unless --full
DEFAULT_ANSWER_TYPE_LIMIT = 2000  # questions the answer-type classifier trains on
# QA training strategies: the deletion variants each trains on (Chaturvedi et al.'s OT is OS
# only; ``ot-ts`` is what ``ot`` meant before; TS-R / OS-R rows have the null answer, their
# +Aug forms a generated sentence in place of the bare re-inserted answer, their
# NOREINSERT forms no answer put back at all). See faithprobe.training.extractive_qa for the table.
NOREINSERT = "-noreinsert"
STRATEGY_VARIANTS: dict[str, tuple[str, ...]] = {
    "ot": ("OS",),
    "ot-ts": ("OS", "TS"),
    "ibt": ("OS", "TS", "TS-R", "OS-R"),
    "ibt-aug": ("OS", "TS", "TS-R+Aug", "OS-R+Aug"),
    "ibt-noreinsert": ("OS", "TS", f"TS-R{NOREINSERT}", f"OS-R{NOREINSERT}"),
}
STRATEGIES = tuple(STRATEGY_VARIANTS)
AUGMENTED = ("ibt-aug",)  # strategies whose rows need generated sentences (--augment)
DEFAULT_AUGMENT = "embedded"


@dataclass(frozen=True, kw_only=True)
class MCTrainConfig(TrainSettings):
    """Everything that decides the trained model. ``limit=None`` trains on all of ``train``."""

    train: Path
    dev: Path
    limit: int | None = DEFAULT_MC_LIMIT
    template: str = DEFAULT_TEMPLATE

    recipe_hyperparameters = ("template",)

    def check(self) -> None:
        super().check()
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"limit must be at least 1, got {self.limit}")
        ChoicePrompt(self.template)  # a template without its {prompt} slot: UsageError


@dataclass(frozen=True, kw_only=True)
class NLITrainConfig(TrainSettings):
    """Everything that decides the trained model."""

    train: tuple[Path, ...]
    # --extra: added training data (HELP), not excluded as a challenge set
    extra_train: tuple[Path, ...] = ()
    exclude: tuple[Path, ...] = ()
    dev: tuple[Path, ...] = ()
    heldout: float = 0.1
    epochs: float = 3.0

    recipe_hyperparameters = ("heldout",)

    def check(self) -> None:
        super().check()
        if not self.train:
            raise UsageError("give at least one --train file")
        if not 0 <= self.heldout < 1:
            raise UsageError(f"heldout must be in [0, 1), got {self.heldout}")


@dataclass(frozen=True, kw_only=True)
class QATrainConfig(TrainSettings):
    """Everything that decides the trained model."""

    train: Path
    strategy: str
    dev: Path | None = None
    heldout: float = 0.25
    limit: int | None = DEFAULT_QA_LIMIT
    splitter: str = DEFAULT_SPLITTER
    doc_stride: int = 128
    eval_limit: int | None = 500
    epochs: float = 2.0
    learning_rate: float = 1e-4
    max_length: int = 256
    mix: tuple[tuple[Path, int | None], ...] = ()  # (file, questions or None for all)
    mix_heldout: float | None = None  # held-out fraction of the --mix files (None: heldout)
    augment: str = ""  # the model writing the +Aug sentences (ibt-aug)
    answer_kind: bool = False  # train an answer-kind (span/yes/no/unknown) head too
    rationale_tagging: bool = False  # train a rationale-tagging head too (Ju et al.)
    predicate_argument: int = 0  # stories per schema of the generator's training part

    recipe_hyperparameters = (
        "strategy",
        "strategy_variants",
        "heldout",
        "limit",
        "splitter",
        "doc_stride",
        "mix_heldout",
        "augment",
        "answer_kind",
        "rationale_tagging",
        "predicate_argument",
    )

    @property
    def strategy_variants(self) -> tuple[str, ...]:
        """The deletion variants the strategy trains on (recorded, so a model trained
        under another meaning of a strategy's name is not misread)."""
        return STRATEGY_VARIANTS[self.strategy]

    def check(self) -> None:
        super().check()
        if self.strategy not in STRATEGIES:
            raise UsageError(
                f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}"
            )
        if self.strategy in AUGMENTED and not self.augment:
            raise UsageError(f"strategy {self.strategy} needs the model writing its sentences")
        if self.augment and self.strategy not in AUGMENTED:
            raise UsageError(
                f"augment is for the strategies {', '.join(AUGMENTED)}, not {self.strategy}"
            )
        if self.mix_heldout is not None and not 0 < self.mix_heldout < 1:
            raise UsageError(f"mix_heldout must be in (0, 1), got {self.mix_heldout}")
        if self.predicate_argument < 0:
            raise UsageError(f"predicate_argument must be 0 or more, got {self.predicate_argument}")
        if self.predicate_argument and not self.answer_kind:
            raise UsageError(
                "the predicate-argument stories are yes/no questions: they need the "
                "answer-kind head (answer_kind)"
            )
        if self.splitter not in SPLITTERS:
            raise UsageError(
                f"splitter must be one of {', '.join(SPLITTERS)}, got {self.splitter!r}"
            )
        if (self.dev is None or self.mix) and not 0 < self.heldout < 1:
            raise UsageError(
                f"heldout must be in (0, 1) to split --train (without --dev) and --mix files, "
                f"got {self.heldout}"
            )
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"limit must be at least 1, got {self.limit}")
        if self.eval_limit is not None and self.eval_limit < 1:
            raise UsageError(f"eval_limit must be at least 1, got {self.eval_limit}")
        if self.doc_stride < 0:  # encode_windows caps it at half a window's context room
            raise UsageError(f"doc_stride must be 0 or more, got {self.doc_stride}")
        for path, n in self.mix:
            if n is not None and n < 1:
                raise UsageError(f"--mix {path}: the question count must be at least 1, got {n}")


@dataclass(frozen=True, kw_only=True)
class AnswerTypeTrainConfig(TrainSettings):
    """Everything that decides the trained answer-type classifier
    (:mod:`faithprobe.training.answer_types`)."""

    train: tuple[Path, ...]
    heldout: float = 0.2
    limit: int | None = DEFAULT_ANSWER_TYPE_LIMIT
    eval_limit: int | None = 1000
    min_count: int = 20
    freeze_layers: int = 4
    class_weights: bool = False  # each class's loss weighted by its inverse frequency
    epochs: float = 3.0
    learning_rate: float = 5e-4
    batch_size: int = 32
    max_length: int = 64

    recipe_hyperparameters = ("heldout", "limit", "min_count", "freeze_layers", "class_weights")

    def check(self) -> None:
        super().check()
        if not self.train:
            raise UsageError("give at least one --train file")
        if not 0 < self.heldout < 1:
            raise UsageError(f"heldout must be in (0, 1), got {self.heldout}")
        for name in ("limit", "eval_limit"):
            if (value := getattr(self, name)) is not None and value < 1:
                raise UsageError(f"{name} must be at least 1, got {value}")
        if self.min_count < 1:
            raise UsageError(f"min_count must be at least 1, got {self.min_count}")
        if self.freeze_layers < 0:
            raise UsageError(f"freeze_layers must be 0 or more, got {self.freeze_layers}")


def parse_mix(value: str) -> tuple[Path, int | None]:
    """``FILE`` or ``FILE:N`` (N questions of it) -> (path, N or None)."""
    head, sep, tail = value.rpartition(":")
    if sep and tail.isdigit():
        return Path(head), int(tail)
    return Path(value), None
