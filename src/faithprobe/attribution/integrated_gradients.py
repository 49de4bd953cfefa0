"""Integrated Gradients on the word-embedding layer (Captum's ``LayerIntegratedGradients``).

Token ids are discrete, so the path from baseline to input runs through the output of the
word-embedding layer: the input's word embeddings and the baseline's (every non-special
token replaced by the mask token, see :mod:`faithprobe.attribution.base`) are interpolated
at ``n_steps`` points (Gauss-Legendre, Captum's default), positions and token types are
added by the model as usual, and the gradient of the target start logit is integrated
along the path. Special tokens have the same embedding in input and baseline, so their
attribution is exactly zero.

The attribution of a token is a vector over the embedding dimensions; its saliency is the
L2 norm of that vector (the usual summary for embeddings, sign-free). The raw vectors sum to
F(input) - F(baseline) up to Captum's convergence delta, which the result keeps.

The ``n_steps`` interpolated inputs are run ``internal_batch_size`` at a time, which bounds
memory and changes nothing but rounding.
"""

from __future__ import annotations

from typing import Any

import torch
from captum.attr import LayerIntegratedGradients

from faithprobe.attribution.base import Attributor, EncodedInput


class IntegratedGradients(Attributor):
    method = "integrated-gradients"

    def __init__(
        self, model, tokenizer, *, n_steps: int = 50, internal_batch_size: int = 16, **kwargs
    ) -> None:
        if n_steps < 1 or internal_batch_size < 1:
            raise ValueError(
                f"n_steps and internal_batch_size must be >= 1, got {n_steps} and "
                f"{internal_batch_size}"
            )
        super().__init__(model, tokenizer, **kwargs)
        self.n_steps = n_steps
        self.internal_batch_size = internal_batch_size
        self._ig = LayerIntegratedGradients(self.target_logit, model.get_input_embeddings())

    @property
    def settings(self) -> dict[str, Any]:
        return {
            "n_steps": self.n_steps,
            "integration": "gausslegendre",
            "baseline": "mask",
            "layer": "word_embeddings",
            "summary": "l2",
        }

    def token_attributions(self, enc: EncodedInput, target: int) -> tuple[torch.Tensor, float]:
        """The raw attributions [length, embedding dim] before the L2 summary, and the
        convergence delta."""
        attributions, delta = self._ig.attribute(
            enc.ids,
            baselines=self.baseline_ids(enc),
            additional_forward_args=(enc.types, target),
            n_steps=self.n_steps,
            internal_batch_size=self.internal_batch_size,
            return_convergence_delta=True,
        )
        return attributions[0].detach(), float(delta[0])

    def _saliency(self, enc: EncodedInput, target: int) -> tuple[torch.Tensor, float]:
        attributions, delta = self.token_attributions(enc, target)
        return attributions.norm(dim=-1), delta
