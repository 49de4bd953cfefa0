"""An extractive QA model trained with heads beside its span head (``faithprobe train qa
--answer-kind``, ``--rationale-tagging``).

**Answer kind** (``answer_kind``): the head
(:class:`~faithprobe.subjects.hf.answer_kind_head.AnswerKindHead`) reads the ``[CLS]``
state of every window; each window is labelled with one of
:data:`~faithprobe.requests.ANSWER_KINDS`: a yes/no question's gold (``yes``/``no``), a
variant whose answer is gone (TS-R, OS-R, +Aug) ``unknown``, a span answer ``span`` in a
window that holds it and ``unknown`` in one that does not (the span head's own null target
there, the ``run_qa`` convention). It is saved beside the model and answers the suites'
yes/no questions.

**Rationale tagging** (``rationale_tagging``): the multitask model of Ju et al. (2019) that
Chaturvedi et al.'s CoQA and HotpotQA models are built on: a head tells, for every context
token, whether it lies in the rationale (:class:`RationaleHead`, as the method's code has
it: a linear layer, ReLU, a linear layer to one logit, a sigmoid), trained with the binary
cross-entropy of those probabilities weighted by :data:`RATIONALE_WEIGHT` (the method's
``beta``). Only context tokens are counted (the method's code averages over every
position, question and padding included, whose target is 0). The head shapes the encoder
during training and is not saved: the method's models also multiply the token states by
the rationale probabilities before pooling them for their yes/no/unknown logits, which the
``hf-qa`` backend (a span head whose null answer is ``[CLS]``, and the answer-kind head)
does not reproduce.

The loss is the span loss (cross-entropy of the start and of the end position, averaged)
plus each head's. Rows of yes/no questions have no span target (:data:`IGNORE`) and do not
count in the span loss; a batch of only such rows has no span loss (not NaN, as
transformers' own loss would give). The model is saved as the plain QA model
(``save_pretrained``) with the answer-kind head's files beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from faithprobe.requests import ANSWER_KINDS
from faithprobe.subjects.hf.answer_kind_head import AnswerKindHead, cls_states
from faithprobe.training.common import PAD_TARGET

IGNORE = PAD_TARGET  # no target: a yes/no question's rows in the span loss, non-context tokens
RATIONALE_WEIGHT = 5.0  # the rationale loss's weight (the method's beta)


def window_kind(item_kind: str, holds_answer: bool) -> int:
    """The head's target in one window of an item whose answer is of ``item_kind``."""
    kind = "unknown" if item_kind == "span" and not holds_answer else item_kind
    return ANSWER_KINDS.index(kind)


def rationale_targets(
    offsets: Sequence[tuple[int, int] | None], spans: Sequence[tuple[int, int]]
) -> list[int]:
    """Per token of a window whose context tokens have character ``offsets`` (None outside
    the context): 1 if it overlaps a rationale span (``[start, end)`` characters), 0 if not,
    :data:`IGNORE` outside the context."""
    return [
        IGNORE if o is None else int(any(o[0] < e and s < o[1] for s, e in spans)) for o in offsets
    ]


class RationaleHead(torch.nn.Module):
    """Per token, the probability that it lies in the rationale (module docstring)."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.hidden = torch.nn.Linear(hidden_size, hidden_size, bias=False)
        self.logit = torch.nn.Linear(hidden_size, 1, bias=False)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.logit(torch.relu(self.hidden(states)))).squeeze(-1)


def _mean_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy averaged over the rows with a target (0 when none has one)."""
    counted = (targets != IGNORE).sum().clamp(min=1)
    return F.cross_entropy(logits, targets, ignore_index=IGNORE, reduction="sum") / counted


def rationale_loss(probabilities: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of the rationale probabilities, averaged over the tokens with a
    target (0 when none has one)."""
    counted = targets != IGNORE
    if not counted.any():
        return probabilities.sum() * 0.0
    p = probabilities[counted].clamp(1e-7, 1 - 1e-7)
    return F.binary_cross_entropy(p, targets[counted].to(p.dtype))


class JointQA(torch.nn.Module):
    """A transformers ``*ForQuestionAnswering`` model and the heads asked for, trained
    together (module docstring)."""

    def __init__(self, qa_model, *, answer_kind: bool = False, rationale: bool = False) -> None:
        super().__init__()
        self.qa = qa_model
        config = qa_model.config
        dropout = getattr(config, "hidden_dropout_prob", 0.1)
        self.head = AnswerKindHead(config.hidden_size, dropout) if answer_kind else None
        self.rationale = RationaleHead(config.hidden_size) if rationale else None

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        start_positions: torch.Tensor | None = None,
        end_positions: torch.Tensor | None = None,
        cls_index: torch.Tensor | None = None,
        kind_labels: torch.Tensor | None = None,
        rationale_labels: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor | None]:
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        out = self.qa(**inputs, output_hidden_states=True)
        kind_logits = self.head(cls_states(out, cls_index)) if self.head is not None else None
        rationale = self.rationale(out.hidden_states[-1]) if self.rationale is not None else None
        loss = None
        if start_positions is not None:
            loss = (
                _mean_cross_entropy(out.start_logits, start_positions)
                + _mean_cross_entropy(out.end_logits, end_positions)
            ) / 2
            if kind_logits is not None and kind_labels is not None:
                loss = loss + F.cross_entropy(kind_logits, kind_labels)
            if rationale is not None and rationale_labels is not None:
                loss = loss + RATIONALE_WEIGHT * rationale_loss(rationale, rationale_labels)
        return {
            "loss": loss,
            "start_logits": out.start_logits,
            "end_logits": out.end_logits,
            "kind_logits": kind_logits,
            "rationale_probabilities": rationale,
        }

    def save_pretrained(self, folder, **kwargs) -> None:
        """The QA model as transformers saves it, and the answer-kind head's files beside
        it (the rationale head is not saved: module docstring)."""
        self.qa.save_pretrained(folder, **kwargs)
        if self.head is not None:
            self.head.save(folder)
