"""Hugging Face sequence-pair classifiers as NLI subjects (``AutoModelForSequenceClassification``:
an encoder with one logit per class, e.g. a BERT or RoBERTa fine-tuned on MNLI, or the model
``faithprobe train nli`` writes).

It answers :class:`~faithprobe.requests.TextPairRequest`: (``first``, ``second``) --
(premise, hypothesis) -- is encoded as a tokenizer text pair (``[CLS] premise [SEP]
hypothesis [SEP]`` for BERT, token type ids whenever the model has segment embeddings),
truncated ``longest_first`` to the model's maximum length (the longer text loses its last
tokens first; both keep their starts), by the same :func:`encode_pair` the training recipe
uses. The answer to a pair that was cut is ``truncated``.

**Grouping classes into labels.** The model's own classes are read from
``config.id2label`` and grouped into the two NLI labels: a class named ``entailment`` (or
``entails``) is *entailment*; ``neutral``, ``contradiction``, ``non-entailment``,
``not_entailment`` (and spellings with ``-``/``_``/space) are *non-entailment*. Names are
compared case-insensitively, without surrounding quotes or spaces. The log-probability of a
requested label is the logsumexp of its classes' log-softmax, so a three-class MNLI model's
neutral and contradiction add up to non-entailment and ``exp`` of the answers sums to one.
A requested label that is not one of the two groups but names one of the model's classes
exactly (``"neutral"``) gets that class alone. The grouping is :attr:`label_groups` and is
part of the fingerprint. A model whose classes cannot be grouped (``LABEL_0``/``LABEL_1``,
the default when ``id2label`` was never set) is refused with a :class:`ModelError` that says
how to fix its ``config.json``.

The answer is a :class:`~faithprobe.requests.CandidateScores` with one log-probability per
requested label and ``n_tokens`` all 1 (a request with ``grouping="max"`` gets each label's
most probable class's log-probability instead of the logsumexp: the argmax decision).
Batches are right-padded under an attention mask, so the batch size changes nothing but
rounding (tested).
"""

from __future__ import annotations

import json

import torch

from faithprobe.errors import ModelError, UsageError
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT
from faithprobe.requests import CandidateScores, TextPairRequest
from faithprobe.subjects.hf.encoder import HFEncoderClassifier, Row, encode_choice, pad_rows
from faithprobe.subjects.identity import HF_NLI

# class names (normalised by _normalise) -> the two-class NLI label they belong to
CLASS_GROUPS = {
    "entailment": ENTAILMENT,
    "entails": ENTAILMENT,
    "neutral": NON_ENTAILMENT,
    "contradiction": NON_ENTAILMENT,
    "non entailment": NON_ENTAILMENT,
    "not entailment": NON_ENTAILMENT,
}


def _normalise(name: str) -> str:
    return " ".join(
        str(name).strip().strip("\"'").lower().replace("-", " ").replace("_", " ").split()
    )


def group_classes(id2label: dict) -> dict[str, tuple[int, ...]]:
    """Two-class NLI label -> the model's class indices in it; ModelError if a class name
    is unknown or a label gets no class."""
    classes = {int(i): str(name) for i, name in id2label.items()}
    groups: dict[str, list[int]] = {ENTAILMENT: [], NON_ENTAILMENT: []}
    unknown = []
    for i, name in sorted(classes.items()):
        label = CLASS_GROUPS.get(_normalise(name))
        if label is None:
            unknown.append(name)
        else:
            groups[label].append(i)
    empty = [label for label, members in groups.items() if not members]
    if unknown or empty:
        found = json.dumps({str(i): n for i, n in sorted(classes.items())})
        problem = (
            f"class names {', '.join(map(repr, unknown))} are not NLI labels"
            if unknown
            else f"no class stands for {' or '.join(empty)}"
        )
        raise ModelError(
            f"cannot read this classifier's classes as NLI labels: {problem} (id2label = "
            f"{found}). faithprobe needs each class named entailment, neutral, contradiction "
            'or non-entailment (not_entailment). Set "id2label" (and "label2id") in the '
            'model\'s config.json to the order it was trained with, e.g. {"0": "entailment", '
            '"1": "non-entailment"} or {"0": "entailment", "1": "neutral", "2": "contradiction"}'
        )
    return {label: tuple(members) for label, members in groups.items()}


def encode_pair(tokenizer, first: str, second: str, max_length: int, token_types: bool) -> Row:
    """Token ids (and type ids) of a (premise, hypothesis) pair, cut ``longest_first``."""
    return encode_pair_cut(tokenizer, first, second, max_length, token_types)[0]


def encode_pair_cut(
    tokenizer, first: str, second: str, max_length: int, token_types: bool
) -> tuple[Row, bool]:
    """:func:`encode_pair`'s row and whether it was truncated."""
    return encode_choice(tokenizer, first, second, max_length, token_types, "longest_first")


class HFNLI(HFEncoderClassifier):
    identity = HF_NLI
    auto_class = "AutoModelForSequenceClassification"

    def __init__(self, model, tokenizer, **kwargs) -> None:
        super().__init__(model, tokenizer, **kwargs)
        try:
            self.label_groups = group_classes(model.config.id2label)
        except ModelError as err:
            raise ModelError(f"model {self.name}: {err}") from None
        self.classes = {int(i): str(n) for i, n in model.config.id2label.items()}

    def _fingerprint_extras(self) -> str:
        # the grouping of classes changes the answers too
        return f"\x1flabel_groups={json.dumps(self.label_groups, sort_keys=True)}"

    def _members(self, label: str) -> tuple[int, ...]:
        if label in self.label_groups:
            return self.label_groups[label]
        exact = [i for i, name in self.classes.items() if _normalise(name) == _normalise(label)]
        if not exact:
            known = sorted(set(self.label_groups) | set(self.classes.values()))
            raise UsageError(
                f"model {self.name} has no class for the label {label!r}; it answers "
                f"{', '.join(known)}"
            )
        return tuple(exact)

    def _encode(self, request: TextPairRequest) -> tuple[tuple, bool]:
        row, cut = encode_pair_cut(
            self.tokenizer, request.first, request.second, self.max_length, self._token_types
        )
        groups = tuple(self._members(label) for label in request.labels)
        return (row, (groups, request.grouping == "max")), cut

    def _cost(self, encoded) -> tuple[int, int]:
        return len(encoded[0][0]), 1

    def _score_batch(self, batch) -> list[CandidateScores]:
        inputs = pad_rows([row for row, _ in batch], self._pad_id)
        logits = self.model(**{k: v.to(self.device) for k, v in inputs.items()}).logits
        logp = torch.log_softmax(logits.float(), dim=-1).cpu()
        out = []
        for row_logp, (_, (groups, by_max)) in zip(logp, batch, strict=True):
            reduce = torch.amax if by_max else torch.logsumexp
            scores = [reduce(row_logp[list(members)], dim=0).item() for members in groups]
            out.append(CandidateScores(tuple(scores), (1,) * len(scores)))
        return out
