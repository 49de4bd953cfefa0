"""A trained answer-type classifier as an answer-type predictor
(:data:`~faithprobe.heuristics.answer_types.AnswerTypePredictor`).

The classifier is a sequence classifier over the question alone, trained by ``faithprobe
train answer-types`` (:mod:`faithprobe.training.answer_types`): its classes
(``config.id2label``) are spaCy entity labels (``PERSON``, ``DATE``, ...) and
:data:`NO_ENTITY`, for answers that are no named entity (a noun phrase, a clause). A question
whose predicted class is an entity label asks for that label alone; one predicted
:data:`NO_ENTITY` asks for no entity at all (the empty set), so the typed-entity extractor
falls back to a noun chunk, where the wh-word map would have accepted any entity.

Questions are classified one at a time (no padding, so an answer never depends on what else
was asked) and each class is remembered per question text.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from faithprobe.errors import ModelError

NO_ENTITY = "OTHER"  # the class of answers that are no named entity


class AnswerTypeClassifier:
    """``question -> frozenset`` of the entity label the classifier in ``folder`` predicts
    (the empty set for :data:`NO_ENTITY`), lazily loaded."""

    def __init__(self, folder: str | Path, max_length: int = 64) -> None:
        self.folder = Path(folder)
        self.max_length = max_length
        self._seen: dict[str, str] = {}

    @cached_property
    def _model(self):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(self.folder)
            model = AutoModelForSequenceClassification.from_pretrained(
                self.folder, dtype=torch.float32
            )
        except (OSError, ValueError, KeyError) as err:
            raise ModelError(
                f"answer-type classifier {self.folder}: cannot load it: {err}"
            ) from err
        return tokenizer, model.eval()

    @cached_property
    def labels(self) -> list[str]:
        """The classes, in the classifier's order."""
        config = self._model[1].config
        return [str(config.id2label[i]) for i in range(config.num_labels)]

    def label(self, question: str) -> str:
        """The predicted class of ``question``."""
        if question not in self._seen:
            import torch

            tokenizer, model = self._model
            batch = tokenizer(
                question, truncation=True, max_length=self.max_length, return_tensors="pt"
            )
            with torch.inference_mode():
                logits = model(**batch).logits[0]
            self._seen[question] = self.labels[int(logits.argmax())]
        return self._seen[question]

    def __call__(self, question: str) -> frozenset[str]:
        label = self.label(question)
        return frozenset() if label == NO_ENTITY else frozenset({label})
