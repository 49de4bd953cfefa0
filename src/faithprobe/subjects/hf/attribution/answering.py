"""Saliency requests answered for a subject: one attributor per (method, ``n_steps``),
built on first use, its interpolated or occluded copies run ``batch_size`` at a time.
Shared by the extractive QA backend (``saliency`` requests) and causal LMs
(``prompt-saliency``), each with its own pair of attributor classes."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from faithprobe.requests import PromptSaliencyRequest, SaliencyRequest, TokenSaliency
from faithprobe.subjects.hf.attribution.base import Attributor


class SaliencyAnswerer:
    """``ig`` and ``occlusion``: the attributor classes of the model's side."""

    def __init__(
        self, model, tokenizer, *, ig: type, occlusion: type, batch_size: int, max_length: int
    ) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.classes = {"ig": ig, "occlusion": occlusion}
        self.batch_size, self.max_length = batch_size, max_length
        self._attributors: dict[tuple[str, int], Attributor] = {}

    def attributor(self, request: SaliencyRequest | PromptSaliencyRequest) -> Attributor:
        ig = request.method == "ig"
        key = (request.method, request.n_steps if ig else 0)
        if key not in self._attributors:
            settings = (
                {"n_steps": request.n_steps, "internal_batch_size": self.batch_size}
                if ig
                else {"batch_size": self.batch_size}
            )
            self._attributors[key] = self.classes[request.method](
                self.model, self.tokenizer, max_length=self.max_length, **settings
            )
        return self._attributors[key]

    def __call__(
        self, batch: Sequence[SaliencyRequest | PromptSaliencyRequest]
    ) -> list[TokenSaliency]:
        # subjects answer under inference mode; Integrated Gradients needs gradients
        with torch.inference_mode(False), torch.enable_grad():
            return [self.attributor(r).attribute([r])[0] for r in batch]
