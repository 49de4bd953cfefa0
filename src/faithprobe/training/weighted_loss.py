"""A sequence classifier whose loss weights each class (``faithprobe train answer-types
--class-weights``): the cross-entropy of class c counts ``weights[c]`` times, so that a
rare class is not drowned by a common one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
import torch.nn.functional as F


def inverse_frequency(labels: Sequence[int], classes: int) -> list[float]:
    """``n / (classes x count)`` per class (a class no example has counts once): every
    class then weighs as much in the loss as it would with balanced data."""
    counts = Counter(labels)
    return [len(labels) / (classes * max(1, counts[c])) for c in range(classes)]


class WeightedClassifier(torch.nn.Module):
    """A transformers ``*ForSequenceClassification`` model with each class's cross-entropy
    weighted by ``weights``; saved as the plain model."""

    def __init__(self, model, weights: Sequence[float]) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("weights", torch.tensor(list(weights), dtype=torch.float))

    def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None) -> dict:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        logits = self.model(**inputs).logits
        loss = None if labels is None else F.cross_entropy(logits, labels, self.weights)
        return {"loss": loss, "logits": logits}

    def save_pretrained(self, folder, **kwargs) -> None:
        self.model.save_pretrained(folder, **kwargs)
