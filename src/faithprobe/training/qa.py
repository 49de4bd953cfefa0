"""Fine-tune an encoder for extractive QA with a null (*unknown*) answer, normally (OT) or
with intervention-based training (IBT) (``faithprobe train qa``).

Method: Chaturvedi et al., "Analyzing semantic faithfulness of language models via input
intervention on question answering", section 5.1. A QA model that still answers once the
sentences supporting the answer are deleted is not faithful to the deletion; IBT teaches it
to say *unknown* there and asks whether it can, without losing accuracy on the original
data. The training rows (:func:`training_items`) are made by the very deletions the
``faithfulness`` suite evaluates (:func:`faithprobe.qa.deletions.deletion_pair`):

=========  ======  ======  ==========================================================
variant    ``ot``  ``ibt``  target
=========  ======  ======  ==========================================================
``OS``     yes     yes     the first gold answer's span
``TS``     yes     yes     the same span (skipped where TS is the whole story)
``TS-R``   --      yes     null: the sentences holding the rationale are gone (the bare
                           answer re-inserted at the end, as the suite does)
``OS-R``   --      yes     null (HotpotQA, instead of TS and TS-R)
=========  ======  ======  ==========================================================

Only questions with a span answer are trained on (yes/no and free-form CoQA answers have
no span); every skip and every variant a deletion cannot make is counted in
``training.json``. Both strategies see the same questions, epochs and seed; IBT sees more
rows, hence more steps.

**Data and split.** ``train`` is a SQuAD/Quoref, CoQA or HotpotQA file. Without ``dev``
the file is split by document (:mod:`faithprobe.datasets.splits`: no article on both
sides) and the held-out documents are never trained on; ``training.json`` records the
split, and ``faithprobe run faithfulness -o heldout_of=<out>`` evaluates on exactly those
documents. ``limit`` trains on a seeded subset of the training questions (the default
scale, which fits the CPU budget); ``limit=None`` on all.

``mix`` adds more QA files to the training data (``--mix FILE[:N]``, e.g. Quoref or
generated comparison items beside SQuAD): each is split by document the same way (same
held-out fraction and seed, whatever ``dev`` is), N of its training questions are drawn (all
without N), its held-out questions are scored at the end, and its split is recorded, so
``heldout_of=<out>`` works for it as for ``train``.

**Encoding.** The backend's own windows (:func:`~faithprobe.subjects.hf_extractive_qa.
encode_windows`: ``[CLS] question [SEP] context [SEP]``, overlapping windows of the
context); a window's target is the answer's first and last token when the whole answer lies
in it, else the ``[CLS]`` token (null), the ``run_qa`` convention. The loss is the model's
(cross-entropy of the start and of the end position, averaged).

**Evaluation.** The saved folder is loaded through ``load_subject`` (the ``hf-qa`` backend,
as the suites load it) and scored on the held-out (or ``dev``) questions: EM and F1 on
``OS`` and the unknown rate on ``TS-R`` / ``OS-R``, with 95% intervals.

Training, checkpoints and resumption are those of every recipe
(:mod:`faithprobe.training.common`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe.datasets.qa import detect_qa_format, read_qa
from faithprobe.datasets.splits import SPLIT_KEY, DocumentSplit, split_documents
from faithprobe.errors import DataError, UsageError
from faithprobe.examples import QAExample
from faithprobe.qa.deletions import DELETIONS, HOTPOT_DELETIONS, ORIGINAL, deletion_pair
from faithprobe.qa.questions import history_question, is_hotpot, passage_id
from faithprobe.requests import SpanAnswerRequest
from faithprobe.sentences import DEFAULT_SPLITTER
from faithprobe.training import common
from faithprobe.training.configs import STRATEGIES, QATrainConfig

NOT_A_SPAN = "the gold answer is not a span of the text (yes/no, free-form or unknown)"
WHOLE_STORY = "TS is the whole story (the rationale is in the last sentence)"

# the Trainer factory (a module attribute, so tests can wrap it)
_make_trainer = common.make_trainer


@dataclass(frozen=True)
class QATrainItem:
    """One training question in one variant: answer ``None`` means the null answer."""

    id: str
    variant: str
    question: str
    context: str
    answer: str | None
    start: int = -1


def _deletions(example: QAExample, strategy: str) -> dict[str, str]:
    if is_hotpot(example):
        return dict(HOTPOT_DELETIONS) if strategy == "ibt" else {}
    return dict(DELETIONS) if strategy == "ibt" else {"TS": DELETIONS["TS"]}


def training_items(
    examples: Sequence[QAExample], strategy: str, *, splitter: str = DEFAULT_SPLITTER
) -> tuple[list[QATrainItem], Counter]:
    """The rows a ``strategy`` trains on (see the module docstring), and per
    ``(variant, reason)`` how many were skipped."""
    if strategy not in STRATEGIES:
        raise UsageError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    items, skipped = [], Counter()
    for ex in examples:
        if ex.answer_type != "span" or not ex.answer_starts or ex.answer_starts[0] < 0:
            skipped[(ORIGINAL, NOT_A_SPAN)] += 1
            continue
        question = history_question(ex)
        items.append(
            QATrainItem(ex.id, ORIGINAL, question, ex.context, ex.answers[0], ex.answer_starts[0])
        )
        for variant, name in _deletions(ex, strategy).items():
            changed = deletion_pair(ex, variant, name, splitter=splitter).intervened
            if reason := changed.features.get("dropped"):
                skipped[(variant, reason)] += 1
            elif changed.features["expected"] == "answer":
                if changed.context == ex.context:
                    skipped[(variant, WHOLE_STORY)] += 1
                elif changed.answer_starts[0] < 0:  # CoQA: an answer found past the rationale
                    skipped[(variant, NOT_A_SPAN)] += 1
                else:
                    start = changed.answer_starts[0]
                    items.append(
                        QATrainItem(
                            changed.id, variant, question, changed.context, ex.answers[0], start
                        )
                    )
            else:
                items.append(QATrainItem(changed.id, variant, question, changed.context, None))
    return items, skipped


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
    its target tokens (``[CLS]`` for null); see the module docstring."""
    from faithprobe.subjects.qa_windows import encode_windows

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
            s, e = target if target else (w.cls_index, w.cls_index)
            nulls += target is None
            rows.append(w.row)
            labels.append({"start_positions": s, "end_positions": e})
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
    deleted (TS-R, or OS-R for HotpotQA), with 95% intervals over passages; at most
    ``eval_limit`` questions (a seeded sample)."""
    import pandas as pd

    from faithprobe.metrics.qa import qa_scores

    chosen = _subset([ex for ex in examples if ex.answer_type == "span"], cfg.eval_limit, cfg.seed)
    asked = []  # (variant, original, asked example)
    for ex in chosen:
        asked.append((ORIGINAL, ex, ex))
        variant, name = (
            ("OS-R", HOTPOT_DELETIONS["OS-R"]) if is_hotpot(ex) else ("TS-R", DELETIONS["TS-R"])
        )
        changed = deletion_pair(ex, variant, name, splitter=cfg.splitter).intervened
        if not changed.features.get("dropped"):
            asked.append((variant, ex, changed))
    requests = [SpanAnswerRequest(history_question(x), x.context) for _, _, x in asked]
    answers = common.score(subject, requests, "held-out", progress)
    frame = pd.DataFrame(
        {
            "subject": "trained",
            "variant": v,
            "answers": list(o.answers),
            "prediction": a.text,
            "predicted_unknown": a.start < 0,
            "yes_no": False,
            "passage_id": passage_id(o),
        }
        for (v, o, _), a in zip(asked, answers, strict=True)
    )
    scores = qa_scores(frame, cluster="passage_id", seed=cfg.seed)
    table = scores[scores["metric"].isin(("em", "f1", "unk"))].drop(columns="subject")
    return {
        "questions": len(chosen),
        "scores": table.to_dict("records"),
        "cluster": "passage",
    }


@dataclass
class _Source:
    """One training file: its split (None with ``dev``), training pool, questions drawn,
    and the questions to evaluate on."""

    path: Path
    split: DocumentSplit | None
    pool: list[QAExample]
    chosen: list[QAExample]
    evaluated: list[QAExample]

    def record(self, items: Sequence[QATrainItem], skipped: Counter) -> dict[str, Any]:
        return {
            "file": str(Path(self.path).resolve()),
            "questions_available": len(self.pool),
            "questions_used": len(self.chosen),
            "rows": len(items),
            "rows_by_variant": dict(Counter(item.variant for item in items)),
            "skipped": [
                {"variant": v, "reason": r, "count": n} for (v, r), n in sorted(skipped.items())
            ],
        }


def _source(path: Path, limit: int | None, cfg: QATrainConfig, say, split: bool) -> _Source:
    examples = _read(path, "training", cfg.splitter)
    if not split:
        chosen = _subset(examples, limit, cfg.seed)
        return _Source(path, None, examples, chosen, _read(cfg.dev, "dev", cfg.splitter))
    parts = split_documents(examples, path, cfg.heldout, cfg.seed)
    pool, evaluated = parts.part(examples, "train"), parts.part(examples, "heldout")
    say(
        f"Split {path} by document: {len(parts.train)} documents ({len(pool)} questions) to "
        f"train on, {len(parts.heldout)} ({len(evaluated)}) held out"
    )
    return _Source(path, parts, pool, _subset(pool, limit, cfg.seed), evaluated)


def _rows(source: _Source, cfg: QATrainConfig) -> tuple[list[QATrainItem], Counter]:
    items, skipped = training_items(source.chosen, cfg.strategy, splitter=cfg.splitter)
    if not items:
        raise DataError(source.path, "no question with a span answer to train on")
    return items, skipped


def train_qa(cfg: QATrainConfig, **options: Any) -> dict[str, Any]:
    """Split, build the strategy's rows, train, save, evaluate; return what
    ``training.json`` holds. ``options`` are those of
    :class:`~faithprobe.training.common.Session`."""
    session = common.Session(cfg, **options)
    say = session.say
    main = _source(cfg.train, cfg.limit, cfg, say, split=cfg.dev is None)
    mixed = [_source(path, n, cfg, say, split=True) for path, n in cfg.mix]
    items, skipped = _rows(main, cfg)
    mixed_rows = [_rows(source, cfg) for source in mixed]
    every = [*items, *(item for rows, _ in mixed_rows for item in rows)]
    variants = Counter(item.variant for item in every)
    say(
        f"{cfg.strategy.upper()}: {len(every)} training rows from "
        f"{len(main.chosen) + sum(len(s.chosen) for s in mixed)} questions "
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

    from faithprobe.subjects.hf_encoder import uses_token_types
    from faithprobe.subjects.hf_extractive_qa import HFExtractiveQA

    if not getattr(tokenizer, "is_fast", False):
        raise UsageError(f"{session.base.path}: extractive QA needs a fast (Rust) tokenizer")
    say(f"Encoding {len(every)} rows (max_length {cfg.max_length}, doc_stride {cfg.doc_stride})...")
    rows, labels, windows, nulls = encode_items(tokenizer, every, cfg, uses_token_types(model))
    dataset = common.EncodedDataset(rows, labels, grouped=False)
    fitted = session.fit(model, tokenizer, dataset, _make_trainer)

    say("Scoring the held-out questions through the hf-qa backend...")
    subject = common.load_trained(cfg.out, HFExtractiveQA, "hf-qa", cfg.eval_batch_size)
    evaluation = evaluate(subject, main.evaluated, cfg, session.progress)
    return session.finish(
        session.summary(
            "extractive-qa",
            "faithprobe train qa",
            fitted,
            strategy=cfg.strategy,
            train={
                **main.record(items, skipped),
                "rows_with_mix": len(every),
                "rows_by_variant_with_mix": dict(variants),
                "windows": len(rows),
                "items_with_several_windows": sum(n > 1 for n in windows),
                "null_target_windows": nulls,
                "ids_sha256_16": data["train_ids"],
            },
            **{SPLIT_KEY: main.split.record() if main.split else None},
            evaluation={"on": "dev file" if cfg.dev else "held-out documents", **evaluation},
            mix=[
                {
                    **source.record(*rows),
                    SPLIT_KEY: source.split.record(),
                    "evaluation": evaluate(subject, source.evaluated, cfg, session.progress),
                }
                for source, rows in zip(mixed, mixed_rows, strict=True)
            ],
        )
    )
