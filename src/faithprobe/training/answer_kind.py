"""An extractive QA model trained with an answer-kind head beside its span head
(``faithprobe train qa --answer-kind``).

The head (:class:`~faithprobe.subjects.hf.answer_kind_head.AnswerKindHead`) reads the
``[CLS]`` state of every window; each window is labelled with one of
:data:`~faithprobe.requests.ANSWER_KINDS`: a yes/no question's gold (``yes``/``no``), a
variant whose answer is gone (TS-R, OS-R, +Aug) ``unknown``, a span answer ``span`` in a
window that holds it and ``unknown`` in one that does not (the span head's own null target
there, the ``run_qa`` convention).

The loss is the span loss (cross-entropy of the start and of the end position, averaged)
plus the head's cross-entropy. Rows of yes/no questions have no span target
(:data:`IGNORE`) and do not count in the span loss; a batch of only such rows has no span
loss (not NaN, as transformers' own loss would give). The model is saved as the plain QA
model (``save_pretrained``) with the head's files beside it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from faithprobe.requests import ANSWER_KINDS
from faithprobe.subjects.hf.answer_kind_head import AnswerKindHead, cls_states

IGNORE = -100  # no target: a yes/no question's rows in the span loss


def window_kind(item_kind: str, holds_answer: bool) -> int:
    """The head's target in one window of an item whose answer is of ``item_kind``."""
    kind = "unknown" if item_kind == "span" and not holds_answer else item_kind
    return ANSWER_KINDS.index(kind)


def _mean_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy averaged over the rows with a target (0 when none has one)."""
    counted = (targets != IGNORE).sum().clamp(min=1)
    return F.cross_entropy(logits, targets, ignore_index=IGNORE, reduction="sum") / counted


class QAWithAnswerKind(torch.nn.Module):
    """A transformers ``*ForQuestionAnswering`` model and an answer-kind head, trained
    together (module docstring)."""

    def __init__(self, qa_model) -> None:
        super().__init__()
        self.qa = qa_model
        config = qa_model.config
        self.head = AnswerKindHead(config.hidden_size, getattr(config, "hidden_dropout_prob", 0.1))

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        cls_index: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        start_positions: torch.Tensor | None = None,
        end_positions: torch.Tensor | None = None,
        kind_labels: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor | None]:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        out = self.qa(**inputs, output_hidden_states=True)
        kind_logits = self.head(cls_states(out, cls_index))
        loss = None
        if kind_labels is not None:
            span = (
                _mean_cross_entropy(out.start_logits, start_positions)
                + _mean_cross_entropy(out.end_logits, end_positions)
            ) / 2
            loss = span + F.cross_entropy(kind_logits, kind_labels)
        return {
            "loss": loss,
            "start_logits": out.start_logits,
            "end_logits": out.end_logits,
            "kind_logits": kind_logits,
        }

    def save_pretrained(self, folder, **kwargs) -> None:
        """The QA model as transformers saves it, and the head's files beside it."""
        self.qa.save_pretrained(folder, **kwargs)
        self.head.save(folder)
