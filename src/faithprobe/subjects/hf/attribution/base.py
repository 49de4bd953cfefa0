"""Token saliency: the common base of the methods, and the extractive QA model's side.

The request and the result (:class:`~faithprobe.requests.SaliencyRequest`,
:class:`~faithprobe.requests.TokenSaliency`) live with the other typed requests, so the
answer cache can store saliency like any answer; an attributor reads only the request's
question and context (its own settings decide the rest: the extractive QA subject picks the
attributor that matches ``method`` and ``n_steps``).

Every method answers the same question -- how much does each input token matter to the
model's predicted answer start? -- through one verb, :meth:`Attributor.attribute` (the
Captum style), so the ``right-reasons`` suite can swap methods without changing its code.

**Encoding** is the extractive QA backend's
(:func:`~faithprobe.subjects.hf.qa_windows.encode_windows`): the tokenizer text pair
(question, context), the question cut from the left to half of ``max_length``, only the
context truncated. Saliency is computed on the **first window only** (a long context is
cut; the result says so with ``truncated``): the method scores one input, and a window
boundary would split the evidence.

**Target.** The attributed quantity is the start logit at the predicted answer start: the
argmax of the start logits over the window's *context* tokens (a predicted answer can only
start there) on the actual input. This is the argmax of the start logits alone, not the
start of the backend's best (start + end) span.

**Baseline / occluder.** Every non-special token is replaced by the tokenizer's mask
token; special tokens (``[CLS]``, ``[SEP]``) are kept, so they get exactly zero saliency
and have no offset in the result.

Models run in eval mode and float32, on one input at a time (no padding), so a result
depends on neither the batch size nor the other inputs beyond float rounding.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import torch

from faithprobe.errors import ModelError
from faithprobe.requests import (
    CONTEXT,
    QUESTION,
    Offset,
    PromptSaliencyRequest,
    SaliencyRequest,
    TokenSaliency,
)
from faithprobe.subjects.bounds import model_max_length
from faithprobe.subjects.hf.encoder import uses_token_types
from faithprobe.subjects.hf.qa_windows import (
    DEFAULT_DOC_STRIDE,
    DEFAULT_MAX_LENGTH,
    cut_question,
    encode_windows,
)


@dataclass(frozen=True)
class EncodedInput:
    """The first window of a request: ids and token types of shape [1, length] (types None
    if the model takes none), per token its offset, and whether the context was cut."""

    request: SaliencyRequest | PromptSaliencyRequest
    ids: torch.Tensor
    types: torch.Tensor | None
    offsets: tuple[Offset, ...]
    truncated: bool


class Attributor(ABC):
    """Token saliency of one model (float32, with a fast tokenizer for character offsets).

    The method (Integrated Gradients, Occlusion) is one mixin, the model's side -- how a
    request is encoded, the token a baseline puts in place of the attributed ones, the
    attributed function and its target -- another: :class:`ExtractiveQAInput` here, a
    causal LM's in :mod:`faithprobe.subjects.hf.attribution.causal`."""

    method: str

    def __init__(self, model, tokenizer, *, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(
                f"saliency needs a fast (Rust) tokenizer for character offsets, but "
                f"{type(tokenizer).__name__} is a slow one"
            )
        dtype = next(model.parameters()).dtype
        if dtype != torch.float32:
            raise ModelError(f"saliency runs in float32, but the model's weights are {dtype}")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_length = model_max_length(model, tokenizer, max_length)
        self.baseline_id = self._baseline_id()

    @property
    @abstractmethod
    def settings(self) -> dict[str, Any]:
        """The method's settings that can change its results (batch sizes cannot)."""

    @abstractmethod
    def _saliency(
        self, enc: EncodedInput, target: int
    ) -> tuple[torch.Tensor, float | None, dict[str, torch.Tensor]]:
        """Per-token saliency of shape [length], the convergence delta (or None) and the
        saliency under each summary the method has (empty if it has none)."""

    @abstractmethod
    def _baseline_id(self) -> int:
        """The token a baseline puts in place of every attributed token."""

    @abstractmethod
    def encode(self, request) -> EncodedInput:
        """The input a request is attributed on."""

    @abstractmethod
    def pick_target(self, enc: EncodedInput) -> tuple[int, float]:
        """What is attributed on the actual input, and its value there."""

    @abstractmethod
    def target_logit(
        self, ids: torch.Tensor, types: torch.Tensor | None, target: int
    ) -> torch.Tensor:
        """The attributed function: one value per row of ``ids``."""

    def input_settings(self) -> dict[str, Any]:
        """The model side's settings that can change its results."""
        return {"max_length": self.max_length}

    def attribute(self, inputs: Sequence) -> list[TokenSaliency]:
        """One :class:`TokenSaliency` per request, in order."""
        results = []
        for request in inputs:
            enc = self.encode(request)
            target, value = self.pick_target(enc)
            saliency, delta, summaries = self._saliency(enc, target)
            results.append(
                TokenSaliency(
                    request=request,
                    tokens=tuple(self.tokenizer.convert_ids_to_tokens(enc.ids[0].tolist())),
                    offsets=enc.offsets,
                    saliency=tuple(saliency.tolist()),
                    target=target,
                    target_logit=value,
                    method=self.method,
                    settings={**self.input_settings(), **self.settings},
                    truncated=enc.truncated,
                    delta=delta,
                    summaries={k: tuple(v.tolist()) for k, v in summaries.items()},
                )
            )
        return results

    def baseline_ids(self, enc: EncodedInput) -> torch.Tensor:
        """The input ids with every attributed token (one with an offset) replaced by
        :attr:`baseline_id`; the others (special tokens, a prompt's template) kept."""
        keep = torch.tensor([[o is None for o in enc.offsets]])
        return enc.ids.masked_fill(~keep, self.baseline_id)


class ExtractiveQAInput(Attributor):
    """The extractive QA model's side (``AutoModelForQuestionAnswering``, a tokenizer with
    a mask token): the first window, the mask-token baseline, the predicted start's logit
    (module docstring)."""

    def _baseline_id(self) -> int:
        if self.tokenizer.mask_token_id is None:
            raise ModelError(
                f"saliency replaces tokens by the mask token, but "
                f"{type(self.tokenizer).__name__} has none"
            )
        return self.tokenizer.mask_token_id

    @cached_property
    def _token_types(self) -> bool:
        return uses_token_types(self.model)

    def pick_target(self, enc: EncodedInput) -> tuple[int, float]:
        with torch.no_grad():
            logits = self.start_logits(enc.ids, enc.types)[0]
        target = self.target(enc, logits)
        return target, float(logits[target])

    def encode(self, request: SaliencyRequest) -> EncodedInput:
        """The request's first window (see the module docstring)."""
        tok = self.tokenizer
        windows = encode_windows(
            tok,
            request.question,
            request.context,
            max_length=self.max_length,
            doc_stride=DEFAULT_DOC_STRIDE,  # the first window does not depend on it
            token_types=self._token_types,
        ).windows
        (ids, types), offsets = windows[0].row, windows[0].offsets
        # the window keeps context offsets only: question offsets from the same pair encoding
        question = cut_question(tok, request.question, self.max_length // 2)
        shift = len(request.question) - len(question)
        pair = tok(
            question,
            request.context,
            truncation="only_second",
            max_length=self.max_length,
            return_offsets_mapping=True,
        )
        if tuple(pair["input_ids"]) != ids:
            raise ModelError("the tokenizer encodes the first window in two different ways")
        merged: list[Offset] = []
        for seq, (start, end), context in zip(
            pair.sequence_ids(0), pair["offset_mapping"], offsets, strict=True
        ):
            if seq == QUESTION:
                merged.append((QUESTION, start + shift, end + shift))
            else:
                merged.append(None if context is None else (CONTEXT, *context))
        return EncodedInput(
            request,
            torch.tensor([ids]),
            None if types is None else torch.tensor([types]),
            tuple(merged),
            len(windows) > 1,
        )

    def start_logits(self, ids: torch.Tensor, types: torch.Tensor | None) -> torch.Tensor:
        """Start logits [rows, length] of unpadded rows (so no attention mask is needed)."""
        extra = {} if types is None else {"token_type_ids": types.expand(len(ids), -1)}
        return self.model(input_ids=ids, **extra).start_logits

    def target_logit(
        self, ids: torch.Tensor, types: torch.Tensor | None, target: int
    ) -> torch.Tensor:
        """The start logit at token ``target`` per row: the attributed function."""
        return self.start_logits(ids, types)[:, target]

    @staticmethod
    def target(enc: EncodedInput, logits: torch.Tensor) -> int:
        """The predicted answer start: the argmax of ``logits`` over the context tokens."""
        context = torch.tensor([o is not None and o[0] == CONTEXT for o in enc.offsets])
        if not context.any():
            raise ValueError(
                f"no context token fits the first window of {enc.request!r}; nothing to attribute"
            )
        return int(torch.argmax(logits.masked_fill(~context, -torch.inf)))
