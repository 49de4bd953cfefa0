"""``faithprobe train``: training recipes on the command line.

Every recipe takes the same settings (:class:`~faithprobe.training.common.TrainSettings`:
``--out``, ``--base``, ``--epochs``, ``--lr``, ``--patience`` ...), the same run flags
(``--overwrite``, ``--restart``, ``--keep-checkpoints``) and ``--seeds`` (several seeds,
averaged: :mod:`faithprobe.training.seeds`), and reports errors and interruptions the same
way; :func:`recipe_command` adds those options to a command, so a recipe's command declares
only its data options.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from faithprobe.console import command_line, log, print_rows, user_errors
from faithprobe.errors import DataError, UsageError
from faithprobe.multiple_choice_prompts import DEFAULT_TEMPLATE
from faithprobe.numbers import SEEDS, ranged
from faithprobe.output_folders import check_creatable
from faithprobe.paths import Kind, argument, path_option
from faithprobe.subcommands import command_group
from faithprobe.training.common import TrainSettings, describe_accuracy, prepare_out, resolve_base
from faithprobe.training.configs import (
    AUGMENTED,
    DEFAULT_ANSWER_TYPE_LIMIT,
    DEFAULT_AUGMENT,
    DEFAULT_MC_LIMIT,
    DEFAULT_QA_LIMIT,
    STRATEGIES,
    AnswerTypeTrainConfig,
    MCTrainConfig,
    NLITrainConfig,
    QATrainConfig,
    parse_mix,
)

train_app = command_group("Fine-tune small task models for the suites to probe.")


# (option's parameter, TrainSettings field, type, typer options); help can be overridden
SETTINGS_OPTIONS: list[tuple[str, str, Any, dict[str, Any]]] = [
    (
        "out",
        "out",
        Path,
        {
            "parser": argument(Kind.WRITE_FOLDER),
            "help": "folder for the model, checkpoints, training.json",
        },
    ),
    (
        "base",
        "base",
        Path | None,
        {
            "parser": argument(Kind.READ_FOLDER),
            "help": "local encoder folder (default: the embedded all-MiniLM-L6-v2)",
        },
    ),
    ("epochs", "epochs", float, ranged(0.01, 1000)),
    ("lr", "learning_rate", float, {**ranged(1e-12, 10), "help": "peak learning rate"}),
    ("batch_size", "batch_size", int, {"min": 1}),
    ("max_length", "max_length", int, {"min": 16}),
    (
        "warmup",
        "warmup_ratio",
        float,
        {**ranged(0, 1), "help": "warm-up, as a fraction of the steps"},
    ),
    ("weight_decay", "weight_decay", float, ranged(0, 10)),
    ("seed", "seed", int, {"min": SEEDS[0], "max": SEEDS[1]}),
    ("max_steps", "max_steps", int | None, {"min": 1, "help": "stop after N optimizer steps"}),
    ("save_steps", "save_steps", int, {"min": 1, "help": "checkpoint every N steps"}),
    (
        "patience",
        "patience",
        int | None,
        {
            "min": 1,
            "help": "early stopping: stop once the loss on held-out training rows has not "
            "improved for N checkpoints (--save-steps apart); keep the best checkpoint",
        },
    ),
    (
        "validation",
        "validation",
        float,
        {**ranged(0.01, 0.5), "help": "with --patience: share of the training rows held out"},
    ),
]
RUN_FLAGS: list[tuple[str, str]] = [
    ("overwrite", "train again into an --out holding a model"),
    ("restart", "discard checkpoints instead of resuming"),
    ("keep_checkpoints", "keep <out>/checkpoints after success"),
]


def recipe_command(name: str, config: type[TrainSettings], help: dict[str, str] | None = None):
    """Register ``func`` as ``faithprobe train <name>`` with the shared options added.

    ``func`` declares its own options and two keyword-only parameters, ``settings`` (the
    TrainSettings fields, ready for ``config(**settings)``) and ``flags`` (keyword arguments
    for the recipe's train function: the run flags and a log). Defaults come from
    ``config``; ``help`` overrides an option's help text."""

    def register(func: Callable[..., None]) -> Callable[..., None]:
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in inspect.signature(func, eval_str=True).parameters.values()
            if p.name not in ("settings", "flags")
        ]
        shared = []
        for param, fieldname, kind, options in SETTINGS_OPTIONS:
            options = {**options, **({"help": help[param]} if help and param in help else {})}
            default = config.__dataclass_fields__[fieldname].default
            shared.append(
                inspect.Parameter(
                    param,
                    inspect.Parameter.KEYWORD_ONLY,
                    annotation=Annotated[kind, typer.Option(**options)],
                    default=inspect.Parameter.empty if fieldname == "out" else default,
                )
            )
        for flag, text in RUN_FLAGS:
            option = typer.Option("--" + flag.replace("_", "-"), help=text)
            shared.append(
                inspect.Parameter(
                    flag,
                    inspect.Parameter.KEYWORD_ONLY,
                    annotation=Annotated[bool, option],
                    default=False,
                )
            )
        shared.append(
            inspect.Parameter(
                "seeds",
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[str | None, SEEDS_OPTION],
                default=None,
            )
        )

        @functools.wraps(func)
        def command(**kwargs: Any) -> None:
            settings = {f: kwargs.pop(p) for p, f, _, _ in SETTINGS_OPTIONS}
            settings["extra"] = {"command": command_line()}
            flags = {flag: kwargs.pop(flag) for flag, _ in RUN_FLAGS}
            flags["log"] = log
            seeds = kwargs.pop("seeds")
            resume = f"checkpoints are in {settings['out']}; run the same command again to resume"
            with user_errors(resume):
                if seeds is None:
                    func(**kwargs, settings=settings, flags=flags)
                else:
                    _train_seeds(func, kwargs, settings, flags, seeds)

        params = own + shared
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        train_app.command(name)(command)
        return func

    return register


SEEDS_OPTION = typer.Option(
    metavar="N,N,...",
    help="train once per seed into <out>/seed-<N> and write the scores' mean ± sd over the "
    "seeds to <out>/seeds.json and seeds.md (instead of --seed)",
)


def _train_seeds(
    func: Callable[..., None],
    kwargs: dict[str, Any],
    settings: dict[str, Any],
    flags: dict[str, Any],
    text: str,
) -> None:
    """``func`` once per seed of ``text`` (:mod:`faithprobe.training.seeds`), each into
    its own folder; a seed this command already trained is kept; then the aggregate."""
    from faithprobe.training import seeds as s

    chosen = s.parse_seeds(text)
    if settings["seed"] != TrainSettings.seed:
        raise UsageError("give --seed or --seeds, not both")
    out, command = Path(settings["out"]), settings["extra"]["command"]
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder")
    folders = []
    for seed in chosen:
        folder = s.seed_folder(out, seed)
        folders.append(folder)
        if s.trained_by(folder, command, seed) and not flags["overwrite"]:
            log(f"seed {seed}: {folder} holds the model this command trained; kept")
            continue
        log(f"seed {seed}: training into {folder}")
        func(**kwargs, settings={**settings, "seed": seed, "out": folder}, flags=flags)
    record = s.write_seeds(out, folders, command)
    print_rows(*s.table_rows(record), f"Mean ± sd over seeds {', '.join(map(str, chosen))}")
    log(f"written to {out / s.SEEDS_FILE} and {out / s.SEEDS_TABLE}")


FOLDER_INPUTS = ("--exclude",)  # input options that take a folder too (an NLI-XY grid)


def check_first(
    cfg: TrainSettings, flags: dict[str, Any], inputs: list[tuple[str, Path | None]]
) -> None:
    """What can be told before any data is read or progress line printed: the settings, that
    every input (``inputs``: option, path; None for one not given) exists, that ``--base``
    is a model folder, and that ``--out`` may be claimed. (Whether checkpoints in ``--out``
    were made with the same settings is known only once the data is read.)"""
    cfg.check()
    for option, path in inputs:
        if path is None:
            continue
        if not path.exists():
            what = "path" if option in FOLDER_INPUTS else "file"
            raise DataError(path, f"{option} {what} not found")
        if option not in FOLDER_INPUTS and not path.is_file():
            raise DataError(path, f"{option} path is not a file")
    resolve_base(cfg.base)
    check_creatable(cfg.out, "--out")
    # restart=True: the checkpoints' settings are not compared here (see above)
    prepare_out(Path(cfg.out), {}, overwrite=flags["overwrite"], restart=True, write=False)


def _report(summary: dict[str, Any], what: str, acc: dict[str, Any] | None, used: int, out) -> None:
    minutes = summary["train_seconds"] / 60
    scored = f"{what} {describe_accuracy(acc)}; " if acc else ""
    print(
        f"{scored}{used} training examples, {summary['steps']} steps, {minutes:.1f} min; "
        f"model in {out}"
    )


def chosen_limit(limit: int | None, full: bool, default: int) -> int | None:
    """The questions (or examples) to train on: all with ``--full`` (None), else ``--limit``
    or the recipe's ``default``."""
    if full and limit is not None:
        raise UsageError("give --limit or --full, not both")
    return None if full else (limit or default)


# `faithprobe train mc`'s own options
MCTrain = Annotated[
    Path,
    path_option(Kind.READ_FILE, "training set: Social IQA jsonl (labels .lst beside) or other"),
]
MCDev = Annotated[Path, path_option(Kind.READ_FILE, "dev set, same formats; scored at the end")]
MCLimit = Annotated[
    int | None,
    typer.Option(
        min=1, help=f"train on a seeded random subset of N examples (default {DEFAULT_MC_LIMIT})"
    ),
]
MCFull = Annotated[bool, typer.Option("--full", help="train on the whole training set")]
Template = Annotated[
    str, typer.Option(help="prompt template (first segment); must match evaluation")
]


@recipe_command(
    "mc",
    MCTrainConfig,
    help={
        "max_length": "tokens per (prompt, choice); the prompt is truncated",
        "seed": "seeds the subset, the head, dropout, order",
    },
)
def train_mc_command(
    train: MCTrain,
    dev: MCDev,
    limit: MCLimit = None,
    full: MCFull = False,
    template: Template = DEFAULT_TEMPLATE,
    *,
    settings: dict[str, Any],
    flags: dict[str, Any],
) -> None:
    """Fine-tune an encoder as a multiple-choice classifier (loadable by the hf-mc backend).

    Runs resume from <out>/checkpoints after an interruption: run the same command again.
    """
    from faithprobe.training.multiple_choice import train_mc

    limit = chosen_limit(limit, full, DEFAULT_MC_LIMIT)
    cfg = MCTrainConfig(train=train, dev=dev, limit=limit, template=template, **settings)
    check_first(cfg, flags, [("--train", train), ("--dev", dev)])
    summary = train_mc(cfg, **flags)
    used = summary["train"]["examples_used"]
    _report(summary, "dev accuracy", summary["dev_accuracy"], used, cfg.out)


# `faithprobe train nli`'s own options
NLITrain = Annotated[
    list[Path],
    path_option(Kind.READ_FILE, "NLI training file (MNLI-style or HELP TSV, jsonl); repeatable"),
]
NLIExtra = Annotated[
    list[Path] | None,
    path_option(
        Kind.READ_FILE,
        "added training file, e.g. HELP's TSVs (the method's HELP contrast): trained "
        "on like --train and not excluded as a challenge set of an --exclude folder, but "
        "its pairs in the rest of the excluded data are removed and counted; repeatable",
    ),
]
NLIExclude = Annotated[
    list[Path] | None,
    path_option(
        Kind.READ_ANY,
        "NLI file or NLI-XY folder (grid + challenge sets beside it) whose "
        "(premise, hypothesis) pairs are removed from training; repeatable",
    ),
]
NLIHeldout = Annotated[
    float,
    typer.Option(
        min=0.0, max=0.9, help="seeded fraction of the training pairs held out and scored"
    ),
]
NLIDev = Annotated[
    list[Path] | None,
    path_option(Kind.READ_FILE, "extra NLI file scored at the end; repeatable"),
]


@recipe_command(
    "nli",
    NLITrainConfig,
    help={
        "max_length": "tokens per (premise, hypothesis); the longer one is cut first",
        "seed": "seeds the held-out split, the head, dropout, order",
    },
)
def train_nli_command(
    train: NLITrain,
    extra: NLIExtra = None,
    exclude: NLIExclude = None,
    heldout: NLIHeldout = NLITrainConfig.heldout,
    dev: NLIDev = None,
    *,
    settings: dict[str, Any],
    flags: dict[str, Any],
) -> None:
    """Fine-tune an encoder as a two-class NLI classifier (loadable by the hf-nli backend).

    Runs resume from <out>/checkpoints after an interruption: run the same command again.
    """
    from faithprobe.training.nli import train_nli

    cfg = NLITrainConfig(
        train=tuple(train),
        extra_train=tuple(extra or ()),
        exclude=tuple(exclude or ()),
        dev=tuple(dev or ()),
        heldout=heldout,
        **settings,
    )
    inputs = [("--train", p) for p in cfg.train] + [("--extra", p) for p in cfg.extra_train]
    inputs += [("--dev", p) for p in cfg.dev] + [("--exclude", p) for p in cfg.exclude]
    check_first(cfg, flags, inputs)
    summary = train_nli(cfg, **flags)
    for record in summary["dev"]:
        print(f"{Path(record['path']).name}: accuracy {describe_accuracy(record['accuracy'])}")
    t = summary["train"]
    _report(summary, "held-out accuracy", summary["heldout_accuracy"], t["used"], cfg.out)
    print(
        f"({t['read']} read, {t['removed_overlapping']} removed as overlapping the excluded "
        f"data ({t['extra_removed_overlapping']} of them from --extra), {t['held_out']} held out)"
    )


# `faithprobe train qa`'s own options
Strategy = Annotated[
    Literal[STRATEGIES],
    typer.Option(
        help="ot: the original stories (the method's OT); ot-ts: and the truncated "
        "ones (TS), what ot was before; ibt: and TS-R, the truncated story without the "
        "rationale (bare answer re-inserted), answer unknown; ibt-aug: as ibt with a "
        "generated sentence in place of the bare answer (TS-R+Aug); ibt-noreinsert: as "
        "ibt with nothing put back"
    ),
]
QATrain = Annotated[
    Path, path_option(Kind.READ_FILE, "SQuAD/Quoref, CoQA or HotpotQA JSON file to train on")
]
QADev = Annotated[
    Path | None,
    path_option(
        Kind.READ_FILE, "separate evaluation file (default: hold out documents of --train)"
    ),
]
QAHeldout = Annotated[
    float, typer.Option(min=0.01, max=0.9, help="fraction of --train's documents held out")
]
QALimit = Annotated[
    int | None,
    typer.Option(
        min=1, help=f"train on a seeded subset of N questions (default {DEFAULT_QA_LIMIT})"
    ),
]
QAFull = Annotated[bool, typer.Option("--full", help="train on every training question")]
DocStride = Annotated[int, typer.Option(min=0, help="tokens shared by neighbouring windows")]
Splitter = Annotated[str, typer.Option(help="sentence splitter for the deletions: spacy or pysbd")]
QAEvalLimit = Annotated[
    int, typer.Option(min=1, help="held-out questions scored at the end (per file)")
]
Mix = Annotated[
    list[str] | None,
    typer.Option(
        metavar="FILE[:N]",
        help="another QA file to train on too (N of its questions; all without N), split "
        "by document like --train; repeatable",
    ),
]
MixHeldout = Annotated[
    float | None,
    typer.Option(
        min=0.01,
        max=0.9,
        help="fraction of each --mix file's documents held out (default: --heldout)",
    ),
]
Augment = Annotated[
    str | None,
    typer.Option(
        help="ibt-aug: the model writing the TS-R+Aug sentences, as the suite's -o "
        f"augment= (default {DEFAULT_AUGMENT})"
    ),
]
AnswerKind = Annotated[
    bool,
    typer.Option(
        "--answer-kind",
        help="add a yes/no/unknown (answer-kind) head and train on yes/no questions too",
    ),
]
RationaleTagging = Annotated[
    bool,
    typer.Option(
        "--rationale-tagging",
        help="train a rationale-tagging head beside the span head (Ju et al.'s multitask "
        "model, the method's architecture): each context token tagged as in the rationale",
    ),
]
PredicateArgument = Annotated[
    int,
    typer.Option(
        min=0,
        metavar="N",
        help="with --answer-kind: also N stories per schema of the predicate-argument "
        "generator's training part (colours the probe never asks about)",
    ),
]


@recipe_command(
    "qa",
    QATrainConfig,
    help={
        "max_length": "tokens per window of (question, context); longer contexts get windows",
        "seed": "seeds the document split, the question subset, the head, dropout, order",
    },
)
def train_qa_command(
    strategy: Strategy,
    train: QATrain,
    dev: QADev = None,
    heldout: QAHeldout = QATrainConfig.heldout,
    limit: QALimit = None,
    full: QAFull = False,
    doc_stride: DocStride = QATrainConfig.doc_stride,
    splitter: Splitter = QATrainConfig.splitter,
    eval_limit: QAEvalLimit = 500,
    mix: Mix = None,
    mix_heldout: MixHeldout = None,
    augment: Augment = None,
    answer_kind: AnswerKind = False,
    rationale_tagging: RationaleTagging = False,
    predicate_argument: PredicateArgument = 0,
    *,
    settings: dict[str, Any],
    flags: dict[str, Any],
) -> None:
    """Fine-tune an encoder for extractive QA with a null answer, by original (ot, ot-ts)
    or intervention-based (ibt, ibt-aug, ibt-noreinsert) training (loadable by the hf-qa
    backend).

    Runs resume from <out>/checkpoints after an interruption: run the same command again.
    """
    from faithprobe.generators.predicate_argument import check_stories
    from faithprobe.subjects import parse_model
    from faithprobe.training.extractive_qa import train_qa

    cfg = QATrainConfig(
        strategy=strategy,
        train=train,
        dev=dev,
        heldout=heldout,
        limit=chosen_limit(limit, full, DEFAULT_QA_LIMIT),
        doc_stride=doc_stride,
        splitter=splitter,
        eval_limit=eval_limit,
        mix=tuple(parse_mix(m) for m in mix or ()),
        mix_heldout=mix_heldout,
        augment=augment or (DEFAULT_AUGMENT if strategy in AUGMENTED else ""),
        answer_kind=answer_kind,
        rationale_tagging=rationale_tagging,
        predicate_argument=predicate_argument,
        **settings,
    )
    mixed = [("--mix", path) for path, _ in cfg.mix]
    check_first(cfg, flags, [("--train", train), ("--dev", dev), *mixed])
    if cfg.predicate_argument:
        check_stories(cfg.predicate_argument, "train", "--predicate-argument")
    if cfg.augment:
        parse_model(cfg.augment)
    _report_qa(train_qa(cfg, **flags), cfg)


def _report_qa(summary: dict[str, Any], cfg: QATrainConfig) -> None:
    """What ``train qa`` prints: the rows trained on, then each evaluated file's scores."""
    t = summary["train"]
    generated = summary["predicate_argument"]
    questions = t["questions_used"] + sum(m["questions_used"] for m in summary["mix"])
    questions += generated["questions_used"] if generated else 0
    print(
        f"{cfg.strategy.upper()}: {t['rows_with_mix']} rows from {questions} questions, "
        f"{summary['steps']} steps, {summary['train_seconds'] / 60:.1f} min; model in {cfg.out}"
    )
    for name, evaluation in (
        (Path(t["file"]).name, summary["evaluation"]),
        *((Path(m["file"]).name, m["evaluation"]) for m in summary["mix"]),
    ):
        print(f"{name}:")
        for score in evaluation["scores"]:
            print(
                f"  {score['questions']:6} {score['variant']:5} {score['metric']:4} "
                f"{score['value']:.3f} [{score['ci_low']:.3f}, {score['ci_high']:.3f}] "
                f"(n={score['n']})"
            )


# `faithprobe train answer-types`' own options
ATTrain = Annotated[
    list[Path],
    path_option(
        Kind.READ_FILE,
        "SQuAD-format file (SQuAD, Quoref) whose gold answers give the types; repeatable",
    ),
]
ATHeldout = Annotated[
    float, typer.Option(min=0.01, max=0.9, help="fraction of each file's documents held out")
]
ATLimit = Annotated[
    int, typer.Option(min=1, help="questions trained on, drawn from every file's training part")
]
ATEvalLimit = Annotated[int, typer.Option(min=1, help="held-out questions scored at the end")]
MinCount = Annotated[
    int, typer.Option(min=1, help="entity labels with fewer training questions become OTHER")
]
FreezeLayers = Annotated[
    int, typer.Option(min=0, help="lowest encoder layers frozen, with the word embeddings")
]
ClassWeights = Annotated[
    bool,
    typer.Option(
        "--class-weights",
        help="weight each class's loss by the inverse of its training frequency (the "
        "method's weighted variant), so rare entity types count as much as common ones",
    ),
]


@recipe_command(
    "answer-types",
    AnswerTypeTrainConfig,
    help={
        "max_length": "tokens per question",
        "seed": "seeds the document split, the question subset, the head, dropout, order",
    },
)
def train_answer_types_command(
    train: ATTrain,
    heldout: ATHeldout = AnswerTypeTrainConfig.heldout,
    limit: ATLimit = DEFAULT_ANSWER_TYPE_LIMIT,
    eval_limit: ATEvalLimit = 1000,
    min_count: MinCount = AnswerTypeTrainConfig.min_count,
    freeze_layers: FreezeLayers = AnswerTypeTrainConfig.freeze_layers,
    class_weights: ClassWeights = False,
    *,
    settings: dict[str, Any],
    flags: dict[str, Any],
) -> None:
    """Train the answer-type classifier of the heuristic baselines: the spaCy entity label
    of the answer (or OTHER) from the question (heuristic:...,answer_types=<out>).

    Runs resume from <out>/checkpoints after an interruption: run the same command again.
    """
    from faithprobe.training.answer_types import train_answer_types

    cfg = AnswerTypeTrainConfig(
        train=tuple(train),
        heldout=heldout,
        limit=limit,
        eval_limit=eval_limit,
        min_count=min_count,
        freeze_layers=freeze_layers,
        class_weights=class_weights,
        **settings,
    )
    check_first(cfg, flags, [("--train", p) for p in cfg.train])
    summary = train_answer_types(cfg, **flags)
    held = summary["heldout"]["accuracy"]
    _report(summary, "held-out accuracy", held, summary["train"]["questions_used"], cfg.out)
    if held:
        majority = held["majority_label"]
        print(f"  macro-F1 {held['macro_f1']:.4f}")
        print(f"  majority label {majority['label']}: {describe_accuracy(majority)}")
        for label, acc in held["by_label"].items():
            print(f"  {label:12} {describe_accuracy(acc)}")
