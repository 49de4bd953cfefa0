"""Token saliency for causal LMs that answer QA questions by generation (the
``right-reasons`` suite on ``--model embedded`` and other ``hf-causal`` models).

A causal LM answers a question from a prompt (:class:`~faithprobe.qa.prompt.QAPrompt`): the
context, an instruction, the question. A
:class:`~faithprobe.requests.PromptSaliencyRequest` carries that prompt and where the
question and the context lie in it; the answer is a
:class:`~faithprobe.requests.TokenSaliency` whose offsets are into the question and the
context, exactly as an extractive QA model's, so the same word partitions and tests apply
(:mod:`faithprobe.saliency.partitions`, :mod:`faithprobe.metrics.alignment`).

**Encoding** is that of a :class:`~faithprobe.requests.GenerationRequest`: the prompt's
tokens with the tokenizer's special tokens (with ``chat``: the chat template around it, as
a user message). Tokens of the question and the context are *attributed*; the others (the
template's instruction, ``Q:``/``A:``, special tokens) get no offset and zero saliency. A
prompt longer than ``max_length`` tokens (default 1024, capped by the model) keeps its last
tokens (the question is at the end of the default template) and the result is
``truncated``.

**Target.** The log-probability of the first token of the model's greedy answer: the
argmax of the next-token distribution after the prompt -- the token a
:class:`~faithprobe.requests.GenerationRequest` for the same prompt begins with. A reply
that opens with white space (a newline, a lone space) is followed greedily to its first
token that is not white space, at most :data:`LEAD_TOKENS` tokens on: those white-space
tokens are appended to the input and kept in the baseline, and the target is that first
word-bearing token. ``target`` is its vocabulary id and ``target_logit`` its
log-probability on the actual input.

**Baseline / occluder.** Causal LMs have no mask token: every attributed token is replaced
by the padding token (else the end-of-sequence token), the usual "no information" token of
a causal LM; the rest of the prompt is kept. Integrated Gradients and Occlusion are then as
for extractive QA models (:mod:`faithprobe.subjects.hf.attribution.integrated_gradients`,
:mod:`faithprobe.subjects.hf.attribution.occlusion`): one input at a time, unpadded, in float32, so a
result depends on neither the batch size nor the other inputs beyond rounding.
"""

from __future__ import annotations

import inspect
from functools import cached_property

import torch

from faithprobe.errors import ModelError
from faithprobe.requests import (
    CONTEXT,
    QUESTION,
    Offset,
    PromptSaliencyRequest,
)
from faithprobe.subjects.hf.attribution.answering import SaliencyAnswerer
from faithprobe.subjects.hf.attribution.base import Attributor, EncodedInput
from faithprobe.subjects.hf.attribution.integrated_gradients import IntegratedGradientsMethod
from faithprobe.subjects.hf.attribution.occlusion import OcclusionMethod

CAUSAL_MAX_LENGTH = 1024
LEAD_TOKENS = 4  # white-space tokens a reply may open with before its first word


class CausalLMInput(Attributor):
    """The causal LM's side: the prompt as generation encodes it, the padding-token
    baseline, the log-probability of the greedy answer's first token (module docstring)."""

    def _baseline_id(self) -> int:
        tok = self.tokenizer
        found = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if found is None:
            raise ModelError(
                f"saliency of a causal LM replaces tokens by the padding or end-of-sequence "
                f"token, but {type(tok).__name__} has neither"
            )
        return found

    def input_settings(self) -> dict:
        return {**super().input_settings(), "target": "log-prob of the answer's first token"}

    def encode(self, request: PromptSaliencyRequest) -> EncodedInput:
        tok = self.tokenizer
        if request.chat:
            if not getattr(tok, "chat_template", None):
                raise ModelError(f"{type(tok).__name__} has no chat template for a chat request")
            message = [{"role": "user", "content": request.prompt}]
            text = tok.apply_chat_template(message, tokenize=False, add_generation_prompt=True)
            shift = text.rindex(request.prompt)
            encoded = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        else:
            shift = 0
            encoded = tok(request.prompt, return_offsets_mapping=True)
        ids = list(encoded["input_ids"])
        offsets = [_offset(request, start - shift, end - shift)
                   for start, end in encoded["offset_mapping"]]  # fmt: skip
        room = self.max_length - LEAD_TOKENS
        truncated = len(ids) > room
        if truncated:
            ids, offsets = ids[-room:], offsets[-room:]
        lead = self._white_space_lead(ids)
        return EncodedInput(
            request,
            torch.tensor([ids + lead]),
            None,
            tuple(offsets + [None] * len(lead)),
            truncated,
        )

    def _next_logprobs(self, ids: torch.Tensor) -> torch.Tensor:
        """Log-probabilities [rows, vocabulary] of the token after each row of ``ids`` (the
        vocabulary projection only at the last position, where the model can skip it)."""
        last = {"logits_to_keep": 1} if self._takes_logits_to_keep else {}
        logits = self.model(input_ids=ids.to(self._device), **last).logits[:, -1].float()
        return torch.log_softmax(logits, dim=-1)

    @cached_property
    def _takes_logits_to_keep(self) -> bool:
        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    @property
    def _device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _white_space_lead(self, ids: list[int]) -> list[int]:
        """The white-space tokens the greedy reply opens with (at most LEAD_TOKENS)."""
        lead: list[int] = []
        with torch.no_grad():
            while len(lead) < LEAD_TOKENS:
                token = int(self._next_logprobs(torch.tensor([ids + lead])).argmax(-1)[0])
                if self.tokenizer.decode([token]).strip() or token == self.tokenizer.eos_token_id:
                    return lead
                lead.append(token)
        return lead

    def pick_target(self, enc: EncodedInput) -> tuple[int, float]:
        with torch.no_grad():
            logprobs = self._next_logprobs(enc.ids)[0]
        target = int(logprobs.argmax())
        return target, float(logprobs[target])

    def target_logit(
        self, ids: torch.Tensor, types: torch.Tensor | None, target: int
    ) -> torch.Tensor:
        """The log-probability of token ``target`` after each row: the attributed function."""
        return self._next_logprobs(ids)[:, target]


def _offset(request: PromptSaliencyRequest, start: int, end: int) -> Offset:
    """A prompt token's place in the question or the context (the part of it inside), or
    None for a token of neither (the template, a special token with an empty span)."""
    for sequence, (begin, finish) in ((QUESTION, request.question), (CONTEXT, request.context)):
        if start < end and start < finish and begin < end:
            return (sequence, max(start, begin) - begin, min(end, finish) - begin)
    return None


class CausalIntegratedGradients(IntegratedGradientsMethod, CausalLMInput):
    """Integrated Gradients of a causal LM's first answer token."""


class CausalOcclusion(OcclusionMethod, CausalLMInput):
    """Occlusion of a causal LM's first answer token."""


def causal_saliency(model, tokenizer, *, batch_size: int) -> SaliencyAnswerer:
    """What answers a causal LM subject's prompt-saliency requests."""
    return SaliencyAnswerer(
        model, tokenizer, ig=CausalIntegratedGradients, occlusion=CausalOcclusion,
        batch_size=batch_size, max_length=CAUSAL_MAX_LENGTH,
    )  # fmt: skip
