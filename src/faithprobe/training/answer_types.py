"""Train the answer-type classifier of the heuristic baselines (``faithprobe train
answer-types``).

Ray Choudhury, Rogers & Augenstein's heuristic QA baselines answer with a phrase of the
*type* the question expects; a small trained model predicts that type from the question.
Here the model is the embedded all-MiniLM-L6-v2 (or any local encoder folder) with a fresh
sequence-classification head over the question alone, and its classes come from the gold
answers of SQuAD-format files (SQuAD, Quoref):

* **Labels** (:func:`answer_label`): each context is run through spaCy's NER
  (``en_core_web_sm``, NER only); a question's label is the entity label of the entity that
  matches its first gold answer's span -- they overlap by at least half of the longer of the
  two (so "the 1960s" matches the DATE "1960s", and a long answer holding a short entity
  does not) -- else :data:`~faithprobe.heuristics.type_classifier.NO_ENTITY` (a noun phrase,
  a clause). Labels with fewer than ``min_count`` training questions are merged into
  ``NO_ENTITY`` (counted in ``training.json``).
* **Split**: each file by document (:func:`~faithprobe.datasets.splits.split_documents`, the
  split of ``faithprobe train qa``, recorded the same way: the first file's as its
  ``--train``, the others' as its ``--mix``, so ``-o heldout_of=<out>`` works); ``limit`` questions are drawn
  from the training documents of all files together and ``eval_limit`` from the held-out
  ones, each by a seeded hash order of the question ids; only their contexts are parsed.
* **Speed**: the word embeddings and the lowest ``freeze_layers`` encoder layers are frozen
  (default 4 of MiniLM's 6), so a few thousand questions train in minutes on 2 CPU cores.

* **Class weights** (``class_weights``, the method's weighted variant): each class's loss
  is weighted by ``n / (classes x its count)`` over the training questions, so a rare
  entity type counts as much as ``NO_ENTITY`` (:mod:`faithprobe.training.weighted_loss`;
  the method weights a binary cross-entropy, here the classes' cross-entropy).

The folder loads as :class:`~faithprobe.heuristics.type_classifier.AnswerTypeClassifier`
(``--model heuristic:encoder+entity,answer_types=<out>``), the path by which the held-out
questions are scored at the end: accuracy overall and per gold label (recall, Wilson 95%
intervals), each label's F1 and their unweighted mean, the macro-F1 the method reports
(over the labels that are gold or predicted), beside the majority label's accuracy on the
same questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from faithprobe.datasets.splits import SPLIT_KEY, split_documents
from faithprobe.errors import DataError
from faithprobe.heuristics.type_classifier import NO_ENTITY, AnswerTypeClassifier
from faithprobe.records import QAExample
from faithprobe.seeding import hash_rank
from faithprobe.training import common
from faithprobe.training.configs import AnswerTypeTrainConfig

# the Trainer factory (a module attribute, so tests can wrap it)
_make_trainer = common.make_trainer


def answer_label(entities: Sequence[tuple[int, int, str]], start: int, end: int) -> str:
    """The label of the answer at characters ``[start, end)`` among ``entities`` ((start,
    end, label) of the context's entities): that of the entity overlapping it most, if the
    overlap is at least half of the longer of the two, else :data:`NO_ENTITY`."""
    best, label = 0, NO_ENTITY
    for s, e, name in entities:
        overlap = min(e, end) - max(s, start)
        if overlap > best and 2 * overlap >= max(e - s, end - start):
            best, label = overlap, name
    return label


def _answered(examples: Sequence[QAExample]) -> list[QAExample]:
    """The questions with a located span answer (SQuAD 2.0's unanswerable ones have none)."""
    return [
        ex
        for ex in examples
        if ex.answer_type == "span" and ex.answer_starts and ex.answer_starts[0] >= 0
    ]


def _first(examples: Sequence[QAExample], n: int | None, seed: int) -> list[QAExample]:
    """``n`` examples, the first in a seeded hash order of their ids (all for ``None``)."""
    ranked = sorted(examples, key=lambda ex: hash_rank(seed, ex.id))
    return ranked if n is None else ranked[:n]


def label_examples(examples: Sequence[QAExample], batch_size: int = 32) -> list[str]:
    """:func:`answer_label` of each example's first gold answer; each distinct context is
    parsed once (spaCy, NER only)."""
    import spacy

    from faithprobe.sentences import SPACY_MODEL

    nlp = spacy.load(SPACY_MODEL, enable=["tok2vec", "ner"])
    contexts = list(dict.fromkeys(ex.context for ex in examples))
    entities = {
        context: [(e.start_char, e.end_char, e.label_) for e in doc.ents]
        for context, doc in zip(contexts, nlp.pipe(contexts, batch_size=batch_size), strict=True)
    }
    out = []
    for ex in examples:
        start = ex.answer_starts[0]
        out.append(answer_label(entities[ex.context], start, start + len(ex.answers[0])))
    return out


def _merge_rare(labels: list[str], min_count: int) -> tuple[list[str], dict[str, int]]:
    """The classes: labels with at least ``min_count`` questions, then :data:`NO_ENTITY`;
    and the merged labels with their counts."""
    counts = Counter(labels)
    merged = {k: n for k, n in sorted(counts.items()) if n < min_count and k != NO_ENTITY}
    kept = sorted(k for k in counts if k not in merged and k != NO_ENTITY)
    return [*kept, NO_ENTITY], merged


def _read(path: Path) -> list[QAExample]:
    from faithprobe.datasets.qa_formats import detect_qa_format, read_qa

    if detect_qa_format(path) != "squad":
        raise DataError(path, "answer types are learnt from SQuAD-format files (SQuAD, Quoref)")
    return _answered(read_qa(path, "squad"))


def freeze_lower(model, layers: int) -> int:
    """Freeze the word embeddings and the lowest ``layers`` encoder layers of a BERT-like
    ``model``; the number of parameters left to train."""
    base = model.base_model
    frozen = [base.embeddings, *base.encoder.layer[:layers]]
    for module in frozen:
        module.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def f1(true_positives: int, predicted: int, gold: int) -> float:
    """F1 of one label: the harmonic mean of its precision and recall (0 where both are 0
    or undefined)."""
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / gold if gold else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def per_label_accuracy(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Accuracy overall and per gold label (recall, with the label's F1), the macro-F1 over
    every label gold or predicted, and the majority label's accuracy."""
    right = [g == p for g, p in zip(gold, predicted, strict=True)]
    majority, n_majority = Counter(gold).most_common(1)[0]
    hits = Counter(g for g, r in zip(gold, right, strict=True) if r)
    golds, predictions = Counter(gold), Counter(predicted)
    scores = {label: f1(hits[label], predictions[label], golds[label])
              for label in sorted(set(gold) | set(predicted))}  # fmt: skip
    return {
        **common.accuracy(sum(right), len(gold)),
        "macro_f1": sum(scores.values()) / len(scores),
        "by_label": {
            label: common.accuracy(
                hits[label], golds[label], predicted=predictions[label], f1=scores[label]
            )
            for label in sorted(golds)
        },
        "majority_label": {"label": majority, **common.accuracy(n_majority, len(gold))},
    }


def train_answer_types(cfg: AnswerTypeTrainConfig, **options: Any) -> dict[str, Any]:
    """Read, split, label, train, save, evaluate; return what ``training.json`` holds.
    ``options`` are those of :class:`~faithprobe.training.common.Session`."""
    session = common.Session(cfg, **options)
    say = session.say
    pool, held, splits = [], [], []
    for path in map(Path, cfg.train):
        examples = _read(path)
        split = split_documents(examples, path, cfg.heldout, cfg.seed)
        pool += split.part(examples, "train")
        held += split.part(examples, "heldout")
        splits.append(split.record())
    train, evaluated = _first(pool, cfg.limit, cfg.seed), _first(held, cfg.eval_limit, cfg.seed)
    say(f"Labelling {len(train)} training and {len(evaluated)} held-out answers (spaCy NER)...")
    raw = label_examples(train + evaluated)
    classes, merged = _merge_rare(raw[: len(train)], cfg.min_count)
    labels = [label if label in classes else NO_ENTITY for label in raw]
    train_labels, held_labels = labels[: len(train)], labels[len(train) :]

    id2label = dict(enumerate(classes))
    label2id = {label: i for i, label in id2label.items()}
    data = {"train": [str(Path(p).resolve()) for p in cfg.train],
            "train_ids": common.ids_digest(ex.id for ex in train), "n_train": len(train)}  # fmt: skip
    model, tokenizer = session.start_classifier(data, id2label)
    trainable = freeze_lower(model, cfg.freeze_layers)
    rows = [
        (tokenizer(ex.question, truncation=True, max_length=cfg.max_length)["input_ids"], None)
        for ex in train
    ]
    targets = [label2id[lab] for lab in train_labels]
    dataset = common.EncodedDataset(rows, targets, grouped=False)
    weights = None
    if cfg.class_weights:
        from faithprobe.training.weighted_loss import WeightedClassifier, inverse_frequency

        weights = inverse_frequency(targets, len(classes))
        model = WeightedClassifier(model, weights)
    say(f"Training on {len(train)} questions, {len(classes)} classes, {trainable} parameters")
    fitted = session.fit(model, tokenizer, dataset, _make_trainer)

    say(f"Scoring {len(evaluated)} held-out questions through the heuristics' classifier...")
    classifier = AnswerTypeClassifier(cfg.out, max_length=cfg.max_length)
    predicted = [classifier.label(ex.question) for ex in evaluated]
    scored = per_label_accuracy(held_labels, predicted) if evaluated else None
    return session.finish(
        session.summary(
            "answer-types",
            "faithprobe train answer-types",
            fitted,
            labelling="spaCy NER (en_core_web_sm) on the context; the entity overlapping "
            "the first gold answer by at least half of the longer of the two, else "
            f"{NO_ENTITY}",
            train={
                "questions_used": len(train),
                "documents_pool": len(pool),
                "label_counts": dict(sorted(Counter(train_labels).items())),
                "merged_into_other": merged,
                "trainable_parameters": trainable,
                "class_weights": (
                    dict(zip(classes, weights, strict=True)) if weights is not None else None
                ),
                "frozen": f"word embeddings and the lowest {cfg.freeze_layers} layers",
                "ids_sha256_16": data["train_ids"],
            },
            # as `train qa` records its --train and --mix files, so heldout_of reads both
            **{SPLIT_KEY: splits[0]},
            mix=[{"file": s["data"], SPLIT_KEY: s} for s in splits[1:]],
            heldout={
                "questions": len(evaluated),
                "label_counts": dict(sorted(Counter(held_labels).items())),
                "accuracy": scored,
            },
            scores=(
                {"held-out accuracy": scored, "held-out macro-F1": {"value": scored["macro_f1"]}}
                if scored
                else {}
            ),
        )
    )
