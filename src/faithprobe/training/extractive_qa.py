"""Fine-tune an encoder for extractive QA with a null (*unknown*) answer, normally (OT) or
with intervention-based training (IBT) (``faithprobe train qa``).

Method: Chaturvedi et al., "Analyzing semantic faithfulness of language models via input
intervention on question answering", section 5.1. A QA model that still answers once the
sentences supporting the answer are deleted is not faithful to the deletion; IBT teaches it
to say *unknown* there and asks whether it can, without losing accuracy on the original
data. The training rows (:func:`training_items`) are made by the very deletions the
``faithfulness`` suite evaluates (:func:`faithprobe.interventions.deletion_variants.deletion_pair`), per
strategy (:data:`~faithprobe.training.configs.STRATEGY_VARIANTS`):

=====================  =======================  ============================================
variant                strategies               target
=====================  =======================  ============================================
``OS``                 all                      the first gold answer's span
``TS``                 all but ``ot``           the same span (skipped where TS is the whole
                                                story)
``TS-R``               ``ibt``                  null: the sentences holding the rationale are
                                                gone (the bare answer re-inserted at the end,
                                                as the suite does)
``TS-R+Aug``           ``ibt-aug``              null: as TS-R, with a generated sentence
                                                holding the answer in place of the bare answer
``TS-R-noreinsert``    ``ibt-noreinsert``       null: as TS-R, with nothing put back
``OS-R`` (HotpotQA)    ``ibt`` (and the other   null, instead of TS and TS-R (``OS-R+Aug``,
                       two in their forms)      ``OS-R-noreinsert``)
=====================  =======================  ============================================

``ot`` is the method's OT (the original stories only). ``ot-ts`` adds TS, the positive
control IBT trains beside TS-R (same truncated text, rationale kept): it is what ``ot``
meant before, and ``training.json`` records the variants a strategy trained on
(``strategy_variants``, and the rows per variant), so a model trained under the old
meaning is not taken for the new one (its ``train.rows_by_variant`` holds TS).

``ibt-aug`` and ``ibt-noreinsert`` are IBT without the appended-answer cue: an IBT model
can learn "the answer alone at the end of the text -> unknown" rather than "no sentence
supports it". ``ibt-aug``'s TS-R rows carry a sentence the ``augment`` model writes
(:func:`~faithprobe.suites.faithfulness.suite.augmented_pairs`, the suite's ``-o augment=``
code, through the answer cache, so the sentences the suite evaluates and the ones trained
on come from one prompt and one model and are computed once); an item whose sentence lacks
the answer is skipped and counted. ``ibt-noreinsert`` puts nothing back: its TS-R rows hold
no answer at all.

Only questions with a span answer are trained on (yes/no and free-form CoQA answers have
no span), unless ``answer_kind`` (below); every skip and every variant a deletion cannot
make is counted in ``training.json``. Every strategy sees the same questions, epochs and
seed; the ones with more variants see more rows, hence more steps.

**Yes/no and unknown (``answer_kind``).** An answer-kind head (span / yes / no / unknown,
:mod:`faithprobe.training.joint_qa`) is trained beside the span head, and questions
whose gold is yes or no are trained on too (OS and TS: their answer; TS-R: unknown), so the
model answers the ``faithfulness`` suite's yes/no questions (negation, the predicate--
argument probe) instead of pointing at a span. Yes/no questions come from the ``--mix``
files (e.g. ``examples/negation/stories.coqa.json``, split by story as every mix file) and,
with ``predicate_argument=N``, from N stories per schema of the predicate--argument
generator's training part (:mod:`faithprobe.generators.predicate_argument`: other colour
terms than the probe's, so no story the probe asks about is trained on), original stories,
in the original and paraphrase question forms. The negated stories and the ungrammatical
control form stay unseen.

**Rationale tagging (``rationale_tagging``).** The multitask model of Ju et al. that the
method's models are built on: a head beside the span head tags every context token as in
the rationale or not (:mod:`faithprobe.training.joint_qa`), trained jointly on every row.
A row's rationale is its variant's: the example's rationale spans in OS and TS (SQuAD: the
sentence holding the answer; CoQA: the annotated spans; HotpotQA: the supporting facts),
none in TS-R / OS-R and their forms. The head is a training signal only; the saved model is
an ordinary ``hf-qa`` folder.

**Data and split.** ``train`` is a SQuAD/Quoref, CoQA or HotpotQA file. Without ``dev``
the file is split by document (:mod:`faithprobe.datasets.splits`: no article on both
sides) and the held-out documents are never trained on; ``training.json`` records the
split, and ``faithprobe run faithfulness -o heldout_of=<out>`` evaluates on exactly those
documents. ``limit`` trains on a seeded subset of the training questions (the default
scale, which fits the CPU budget); ``limit=None`` on all.

``mix`` adds more QA files to the training data (``--mix FILE[:N]``, e.g. Quoref or
generated comparison items beside SQuAD): each is split by document the same way (held-out
fraction ``mix_heldout``, by default ``heldout``, and the same seed, whatever ``dev`` is),
N of its training questions are drawn (all without N), its held-out questions are scored at
the end, and its split is recorded, so ``heldout_of=<out>`` works for it as for ``train``.

**Encoding.** The backend's own windows (:func:`~faithprobe.subjects.hf.extractive_qa.
encode_windows`: ``[CLS] question [SEP] context [SEP]``, overlapping windows of the
context); a window's target is the answer's first and last token when the whole answer lies
in it, else the ``[CLS]`` token (null), the ``run_qa`` convention. The loss is the model's
(cross-entropy of the start and of the end position, averaged), plus the head's with
``answer_kind``.

**Evaluation.** The saved folder is loaded through ``load_subject`` (the ``hf-qa`` backend,
as the suites load it) and scored on the held-out (or ``dev``) questions: EM and F1 on
``OS`` and the unknown rate on ``TS-R`` / ``OS-R``, with 95% intervals, for span questions
and (with the head) yes/no questions apart.

Training, checkpoints and resumption are those of every recipe
(:mod:`faithprobe.training.common`).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe.asking.yes_no_head import answer_kind_request, asks_answer_kind, yes_no_prediction
from faithprobe.datasets.qa_formats import detect_qa_format, read_qa
from faithprobe.datasets.splits import SPLIT_KEY, DocumentSplit, split_documents
from faithprobe.errors import DataError, UsageError
from faithprobe.interventions import Pair
from faithprobe.interventions.deletion_variants import (
    DELETIONS,
    HOTPOT_DELETIONS,
    ORIGINAL,
    deletion_pair,
)
from faithprobe.qa.questions import YES_NO, history_question, is_hotpot, is_yes_no, passage_id
from faithprobe.records import UNKNOWN, QAExample
from faithprobe.requests import SpanAnswerRequest
from faithprobe.sentences import DEFAULT_SPLITTER
from faithprobe.training import common
from faithprobe.training.configs import (
    AUGMENTED,
    NOREINSERT,
    STRATEGIES,
    STRATEGY_VARIANTS,
    QATrainConfig,
)

NOT_A_SPAN = "the gold answer is not a span of the text (yes/no, free-form or unknown)"
NO_TARGET = "the gold answer is neither a span of the text nor yes/no (free-form or unknown)"
WHOLE_STORY = "TS is the whole story (the rationale is in the last sentence)"
PA_VARIANTS = ("original",)  # the predicate-argument training part's stories ...
PA_FORMS = ("original", "paraphrase")  # ... and question forms trained on

# the Trainer factory (a module attribute, so tests can wrap it)
_make_trainer = common.make_trainer

# answers generation requests in one batch (the suite's augmentation sentences)
Generate = Callable[[list], list]


@dataclass(frozen=True)
class QATrainItem:
    """One training question in one variant. ``kind``: ``span`` (``answer`` is the span's
    text, at ``start``), ``yes``/``no`` (a yes/no question) or ``unknown`` (the null
    answer); ``answer`` is None but for a span."""

    id: str
    variant: str
    question: str
    context: str
    answer: str | None
    start: int = -1
    kind: str = "span"
    rationale: tuple[tuple[int, int], ...] = ()  # character spans in ``context``
    passage: str = ""  # the story's passage id: kept on one side of a validation split


def _answer_kind(example: QAExample, yes_no: bool) -> str | None:
    """``span`` or (with ``yes_no``) ``yes``/``no``: what ``example`` is trained on as;
    None for an answer neither is (free-form, unknown)."""
    if example.answer_type == "span" and example.answer_starts and example.answer_starts[0] >= 0:
        return "span"
    return example.answer_type if yes_no and is_yes_no(example) else None


def _deletion_pairs(
    examples: Sequence[QAExample], strategy: str, splitter: str, generate: Generate | None
) -> dict[str, list[Pair]]:
    """Per example id its pairs for the strategy's variants but OS (the +Aug ones made by
    the suite's augmentation, with ``generate``), in the order of the table."""
    wanted = STRATEGY_VARIANTS[strategy]
    plain, removals = [], []
    for ex in examples:
        for variant, name in (HOTPOT_DELETIONS if is_hotpot(ex) else DELETIONS).items():
            if variant in wanted:
                plain.append(deletion_pair(ex, variant, name, splitter=splitter))
            elif variant + NOREINSERT in wanted:
                plain.append(deletion_pair(ex, variant + NOREINSERT, name, splitter=splitter,
                                           reinsert=False))  # fmt: skip
            elif f"{variant}+Aug" in wanted:
                removals.append(deletion_pair(ex, variant, name, splitter=splitter))
    if removals:
        from faithprobe.suites.faithfulness.suite import augmented_pairs

        if generate is None:
            raise UsageError(f"strategy {strategy} needs a model writing its sentences")
        plain += augmented_pairs(removals, generate, splitter=splitter)
    out: dict[str, list[Pair]] = defaultdict(list)
    for pair in plain:
        out[pair.original.id].append(pair)
    return out


def training_items(
    examples: Sequence[QAExample],
    strategy: str,
    *,
    splitter: str = DEFAULT_SPLITTER,
    yes_no: bool = False,
    generate: Generate | None = None,
) -> tuple[list[QATrainItem], Counter]:
    """The rows a ``strategy`` trains on (see the module docstring), and per
    ``(variant, reason)`` how many were skipped. ``yes_no``: yes/no questions are trained
    on too (the answer-kind head); ``generate``: answers the generation requests of the
    ``+Aug`` variants."""
    if strategy not in STRATEGIES:
        raise UsageError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    kinds = {ex.id: _answer_kind(ex, yes_no) for ex in examples}
    skipped = Counter()
    skipped[(ORIGINAL, NO_TARGET if yes_no else NOT_A_SPAN)] = sum(
        k is None for k in kinds.values()
    )
    kept = [ex for ex in examples if kinds[ex.id] is not None]
    pairs = _deletion_pairs(kept, strategy, splitter, generate)
    items = []
    for ex in kept:
        kind, question = kinds[ex.id], history_question(ex)
        span = (ex.answers[0], ex.answer_starts[0]) if kind == "span" else (None, -1)
        shared = {"passage": passage_id(ex)}
        items.append(QATrainItem(ex.id, ORIGINAL, question, ex.context, *span, kind=kind,
                                 rationale=ex.rationale, **shared))  # fmt: skip
        for pair in pairs[ex.id]:
            variant, changed = pair.pair_id.split(":", 1)[0], pair.intervened
            mine = {**shared, "rationale": changed.rationale}
            if reason := changed.features.get("dropped"):
                skipped[(variant, reason)] += 1
            elif changed.features["expected"] == UNKNOWN:
                items.append(QATrainItem(changed.id, variant, question, changed.context, None,
                                         kind=UNKNOWN, **mine))  # fmt: skip
            elif changed.context == ex.context:
                skipped[(variant, WHOLE_STORY)] += 1
            elif kind != "span":  # yes/no: the support is still there
                items.append(QATrainItem(changed.id, variant, question, changed.context, None,
                                         kind=kind, **mine))  # fmt: skip
            elif changed.answer_starts[0] < 0:  # CoQA: an answer found past the rationale
                skipped[(variant, NOT_A_SPAN)] += 1
            else:
                start = changed.answer_starts[0]
                items.append(QATrainItem(changed.id, variant, question, changed.context,
                                         ex.answers[0], start, **mine))  # fmt: skip
    return items, +skipped  # (+: without zero counts)


def window_target(
    offsets: Sequence[tuple[int, int] | None], start: int, end: int
) -> tuple[int, int] | None:
    """The (first, last) token of the character span ``[start, end)`` in a window whose
    context tokens have character ``offsets`` (None outside the context), or None when the
    span is not wholly inside the window."""
    inside = [(i, o) for i, o in enumerate(offsets) if o is not None]
    if not inside or not (inside[0][1][0] <= start and end <= inside[-1][1][1]):
        return None
    first = next(i for i, (_, e) in inside if e > start)
    last = next(i for i, (s, _) in reversed(inside) if s < end)
    return (first, last) if first <= last else None


def encode_items(tokenizer, items: Sequence[QATrainItem], cfg: QATrainConfig, token_types: bool):
    """(rows, labels, windows per item, null targets): one row per window, labelled with
    its target tokens (``[CLS]`` for null; none for a yes/no question), with
    ``cfg.answer_kind`` the head's target and the ``[CLS]`` index, and with
    ``cfg.rationale_tagging`` each token's rationale target; see the module docstring."""
    from faithprobe.subjects.hf.qa_windows import encode_windows
    from faithprobe.training.joint_qa import IGNORE, rationale_targets, window_kind

    rows, labels, per_item, nulls = [], [], [], 0
    for item in items:
        encoded = encode_windows(
            tokenizer,
            item.question,
            item.context,
            max_length=cfg.max_length,
            doc_stride=cfg.doc_stride,
            token_types=token_types,
        )
        for w in encoded.windows:
            target = None
            if item.answer is not None:
                target = window_target(w.offsets, item.start, item.start + len(item.answer))
            if item.kind in YES_NO:
                s = e = IGNORE
            else:
                s, e = target if target else (w.cls_index, w.cls_index)
                nulls += target is None
            label = {"start_positions": s, "end_positions": e}
            if cfg.answer_kind:
                label.update(kind_labels=window_kind(item.kind, target is not None),
                             cls_index=w.cls_index)  # fmt: skip
            if cfg.rationale_tagging:
                label["rationale_labels"] = rationale_targets(w.offsets, item.rationale)
            rows.append(w.row)
            labels.append(label)
        per_item.append(len(encoded.windows))
    return rows, labels, per_item, nulls


def _read(path: Path, role: str, splitter: str) -> list[QAExample]:
    path = Path(path)
    if not path.is_file():
        raise DataError(path, f"{role} file not found" if not path.exists() else "not a file")
    format = detect_qa_format(path)
    return read_qa(path, format, **({"splitter": splitter} if format == "squad" else {}))


def _subset(examples: list[QAExample], limit: int | None, seed: int) -> list[QAExample]:
    if limit is None or limit >= len(examples):
        return examples
    keep = set(random.Random(seed).sample(range(len(examples)), limit))
    return [ex for i, ex in enumerate(examples) if i in keep]


def evaluate(
    subject, examples: Sequence[QAExample], cfg: QATrainConfig, progress: bool
) -> dict[str, Any]:
    """EM and F1 on the original questions and the unknown rate once the rationale is
    deleted (TS-R, or OS-R for HotpotQA), with 95% intervals over passages, per kind of
    question (``questions``): span answers, and yes/no ones when ``subject`` has an
    answer-kind head (answered through it, :mod:`faithprobe.asking.yes_no_head`); at most
    ``eval_limit`` questions (a seeded sample)."""
    import pandas as pd

    from faithprobe.metrics.qa_scores import qa_scores

    def by_head(ex: QAExample) -> bool:
        return asks_answer_kind(ex, subject.accepts)

    eligible = [ex for ex in examples if ex.answer_type == "span" or by_head(ex)]
    chosen = _subset(eligible, cfg.eval_limit, cfg.seed)
    asked = []  # (variant, original, asked example)
    for ex in chosen:
        asked.append((ORIGINAL, ex, ex))
        variant, name = (
            ("OS-R", HOTPOT_DELETIONS["OS-R"]) if is_hotpot(ex) else ("TS-R", DELETIONS["TS-R"])
        )
        changed = deletion_pair(ex, variant, name, splitter=cfg.splitter).intervened
        if not changed.features.get("dropped"):
            asked.append((variant, ex, changed))
    requests = [
        answer_kind_request(x) if by_head(o) else SpanAnswerRequest(history_question(x), x.context)
        for _, o, x in asked
    ]
    answers = common.score(subject, requests, "held-out", progress)
    rows = []
    for (v, o, _), a in zip(asked, answers, strict=True):
        read = yes_no_prediction(a) if by_head(o) else {"prediction": a.text,
                                                         "predicted_unknown": a.start < 0}  # fmt: skip
        rows.append({
            "subject": "yes/no" if by_head(o) else "span",  # qa_scores groups by it
            "variant": v,
            "answers": list(o.answers),
            "prediction": read["prediction"],
            "predicted_unknown": read["predicted_unknown"],
            "passage_id": passage_id(o),
        })  # fmt: skip
    scores = qa_scores(pd.DataFrame(rows), cluster="passage_id", seed=cfg.seed)
    table = scores[scores["metric"].isin(("em", "f1", "unk"))].rename(
        columns={"subject": "questions"}
    )
    return {
        "questions": len(chosen),
        "questions_by_kind": dict(Counter("yes/no" if by_head(ex) else "span" for ex in chosen)),
        "scores": table.to_dict("records"),
        "cluster": "passage",
    }


def named_scores(evaluation: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """The scores of :func:`evaluate`, each named by its questions, variant and metric
    (``span OS f1``), for ``training.json``'s ``scores``."""
    return {
        f"{prefix}{row['questions']} {row['variant']} {row['metric']}": row
        for row in evaluation["scores"]
    }


@dataclass
class _Source:
    """Where training questions come from -- a file with its split (None with ``dev``),
    or the predicate-argument generator (``path`` None) -- its training pool, the questions
    drawn, and the questions to evaluate on."""

    path: Path | None
    split: DocumentSplit | None
    pool: list[QAExample]
    chosen: list[QAExample]
    evaluated: list[QAExample]

    def record(self, items: Sequence[QATrainItem], skipped: Counter) -> dict[str, Any]:
        return {
            **({"file": str(Path(self.path).resolve())} if self.path else {}),
            "questions_available": len(self.pool),
            "questions_used": len(self.chosen),
            "rows": len(items),
            "rows_by_variant": dict(Counter(item.variant for item in items)),
            "rows_by_kind": dict(Counter(item.kind for item in items)),
            "skipped": [
                {"variant": v, "reason": r, "count": n} for (v, r), n in sorted(skipped.items())
            ],
        }


def _source(
    path: Path, limit: int | None, cfg: QATrainConfig, say, split: bool, heldout: float
) -> _Source:
    examples = _read(path, "training", cfg.splitter)
    if not split:
        chosen = _subset(examples, limit, cfg.seed)
        return _Source(path, None, examples, chosen, _read(cfg.dev, "dev", cfg.splitter))
    parts = split_documents(examples, path, heldout, cfg.seed)
    pool, evaluated = parts.part(examples, "train"), parts.part(examples, "heldout")
    say(
        f"Split {path} by document: {len(parts.train)} documents ({len(pool)} questions) to "
        f"train on, {len(parts.heldout)} ({len(evaluated)}) held out"
    )
    return _Source(path, parts, pool, _subset(pool, limit, cfg.seed), evaluated)


def _predicate_argument(cfg: QATrainConfig) -> _Source:
    """The predicate-argument generator's training part (module docstring): every
    question of ``cfg.predicate_argument`` stories per schema."""
    from faithprobe.generators import predicate_argument as pa

    config = pa.PredicateArgumentConfig(forms=PA_FORMS, variants=PA_VARIANTS, part="train",
                                        stories_per_schema=cfg.predicate_argument)  # fmt: skip
    examples = pa.generate(config, seed=cfg.seed)
    return _Source(None, None, examples, examples, [])


def _predicate_argument_record(source: _Source, cfg: QATrainConfig, rows) -> dict[str, Any]:
    from faithprobe.generators.predicate_argument import TRAIN_COLOURS

    return {
        **source.record(*rows),
        "part": "train",
        "colours": list(TRAIN_COLOURS),
        "stories_per_schema": cfg.predicate_argument,
        "stories": len({ex.features["story_id"] for ex in source.pool}),
        "variants": list(PA_VARIANTS),
        "forms": list(PA_FORMS),
        "seed": cfg.seed,
    }


def _rows(
    source: _Source, cfg: QATrainConfig, generate: Generate | None
) -> tuple[list[QATrainItem], Counter]:
    items, skipped = training_items(source.chosen, cfg.strategy, splitter=cfg.splitter,
                                    yes_no=cfg.answer_kind, generate=generate)  # fmt: skip
    if not items:
        what = "a span or yes/no answer" if cfg.answer_kind else "a span answer"
        raise DataError(
            source.path or Path("predicate-argument"), f"no question with {what} to train on"
        )
    return items, skipped


def _sentence_writer(cfg: QATrainConfig, stack: ExitStack, progress: bool):
    """(generate, the pool): ``cfg.augment`` writing the +Aug sentences through the answer
    cache the suites use (:func:`~faithprobe.subjects.answer_cache.answers_file`)."""
    from faithprobe.console import progress_bars
    from faithprobe.runner import ModelPool
    from faithprobe.subjects.answer_cache import AnswerCache, answers_file

    cache = AnswerCache(answers_file())
    stack.callback(cache.close)
    bars = stack.enter_context(progress_bars()) if progress else None
    pool = ModelPool(cache, cfg.eval_batch_size, bars)
    return (lambda requests: pool.ask(cfg.augment, requests, "augment")), pool


def _training_rows(
    cfg: QATrainConfig, session: common.Session, sources: Sequence[_Source]
) -> tuple[list[tuple[list[QATrainItem], Counter]], dict[str, Any] | None]:
    """Each source's rows and skipped counts, in order, with the +Aug sentences written by
    ``cfg.augment`` where the strategy needs them; and the record of that writer (None
    without one)."""
    with ExitStack() as stack:
        generate, pool = None, None
        if cfg.strategy in AUGMENTED:
            session.say(
                f"Writing the +Aug sentences with {cfg.augment} (through the answer cache)..."
            )
            generate, pool = _sentence_writer(cfg, stack, session.progress)
        rows = [_rows(source, cfg, generate) for source in sources]
        return rows, ({"model": cfg.augment, "subjects": pool.info()} if pool else None)


def _encoded(model, tokenizer, every: list[QATrainItem], cfg: QATrainConfig, session):
    """(the model to train, the encoded rows, a record of the windows): the rows in the
    hf-qa backend's windows, grouped by passage for a validation split; the model gets the
    answer-kind head with ``--answer-kind`` and the rationale head with
    ``--rationale-tagging``."""
    from faithprobe.subjects.hf.encoder import uses_token_types

    if not getattr(tokenizer, "is_fast", False):
        raise UsageError(f"{session.base.path}: extractive QA needs a fast (Rust) tokenizer")
    session.say(
        f"Encoding {len(every)} rows (max_length {cfg.max_length}, doc_stride {cfg.doc_stride})..."
    )
    rows, labels, windows, nulls = encode_items(tokenizer, every, cfg, uses_token_types(model))
    if cfg.answer_kind or cfg.rationale_tagging:
        from faithprobe.training.joint_qa import JointQA

        model = JointQA(model, answer_kind=cfg.answer_kind, rationale=cfg.rationale_tagging)
    record = {
        "windows": len(rows),
        "items_with_several_windows": sum(n > 1 for n in windows),
        "null_target_windows": nulls,
    }
    if cfg.rationale_tagging:
        tagged = [t for lab in labels for t in lab["rationale_labels"] if t >= 0]
        record["rationale_token_share"] = sum(tagged) / len(tagged) if tagged else None
    groups = [item.passage for item, n in zip(every, windows, strict=True) for _ in range(n)]
    dataset = common.EncodedDataset(rows, labels, grouped=False, groups=groups)
    return model, dataset, record


def train_qa(cfg: QATrainConfig, **options: Any) -> dict[str, Any]:
    """Split, build the strategy's rows, train, save, evaluate; return what
    ``training.json`` holds. ``options`` are those of
    :class:`~faithprobe.training.common.Session`."""
    session = common.Session(cfg, **options)
    say = session.say
    main = _source(cfg.train, cfg.limit, cfg, say, split=cfg.dev is None, heldout=cfg.heldout)
    mix_heldout = cfg.heldout if cfg.mix_heldout is None else cfg.mix_heldout
    mixed = [_source(path, n, cfg, say, split=True, heldout=mix_heldout) for path, n in cfg.mix]
    generated = [_predicate_argument(cfg)] if cfg.predicate_argument else []
    sources = [main, *mixed, *generated]
    rows, augment = _training_rows(cfg, session, sources)
    every = [item for items, _ in rows for item in items]
    variants = Counter(item.variant for item in every)
    questions = sum(len(source.chosen) for source in sources)
    say(
        f"{cfg.strategy.upper()}: {len(every)} training rows from {questions} questions "
        f"({', '.join(f'{v} {n}' for v, n in variants.items())})"
    )
    data = {
        "train": str(Path(cfg.train).resolve()),
        "dev": str(Path(cfg.dev).resolve()) if cfg.dev else None,
        "mix": [[str(Path(p).resolve()), n] for p, n in cfg.mix],
        "train_ids": common.ids_digest(item.id for item in every),
        "n_train": len(every),
    }
    model, tokenizer = session.start(
        data, "AutoModelForQuestionAnswering", "an extractive QA model"
    )
    model, dataset, windows = _encoded(model, tokenizer, every, cfg, session)
    fitted = session.fit(model, tokenizer, dataset, _make_trainer)

    from faithprobe.subjects.hf.extractive_qa import HFQA
    from faithprobe.training.joint_qa import RATIONALE_WEIGHT

    say("Scoring the held-out questions through the hf-qa backend...")
    subject = common.load_trained(cfg.out, HFQA, "hf-qa", cfg.eval_batch_size)
    evaluation = evaluate(subject, main.evaluated, cfg, session.progress)
    mixed_rows = rows[1 : 1 + len(mixed)]
    mix_records = [
        {
            **source.record(*source_rows),
            SPLIT_KEY: source.split.record(),
            "evaluation": evaluate(subject, source.evaluated, cfg, session.progress),
        }
        for source, source_rows in zip(mixed, mixed_rows, strict=True)
    ]
    scores = named_scores(evaluation)
    for record in mix_records:
        scores.update(named_scores(record["evaluation"], Path(record["file"]).name + ": "))
    return session.finish(
        session.summary(
            "extractive-qa",
            "faithprobe train qa",
            fitted,
            strategy=cfg.strategy,
            strategy_variants=list(cfg.strategy_variants),
            answer_kind_head=cfg.answer_kind,
            rationale_tagging=(
                {"weight": RATIONALE_WEIGHT, "head": "trained jointly, not saved"}
                if cfg.rationale_tagging
                else None
            ),
            train={
                **main.record(*rows[0]),
                "rows_with_mix": len(every),
                "rows_by_variant_with_mix": dict(variants),
                **windows,
                "ids_sha256_16": data["train_ids"],
            },
            **{SPLIT_KEY: main.split.record() if main.split else None},
            evaluation={"on": "dev file" if cfg.dev else "held-out documents", **evaluation},
            mix=mix_records,
            predicate_argument=(
                _predicate_argument_record(generated[0], cfg, rows[-1]) if generated else None
            ),
            augment=augment,
            scores=scores,
        )
    )
