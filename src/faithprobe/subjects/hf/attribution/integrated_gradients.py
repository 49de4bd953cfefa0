"""Integrated Gradients on the word-embedding layer (Captum's ``LayerIntegratedGradients``).

Token ids are discrete, so the path from baseline to input runs through the output of the
word-embedding layer: the input's word embeddings and the baseline's (every attributed
token replaced by the baseline token, see :mod:`faithprobe.subjects.hf.attribution.base`) are
interpolated at ``n_steps`` points (Gauss-Legendre, Captum's default), positions and token
types are added by the model as usual, and the gradient of the target is integrated along
the path. Tokens kept in the baseline (special tokens, a prompt's template) have the same
embedding in input and baseline, so their attribution is exactly zero.

**Summaries.** The attribution of a token is a vector over the embedding dimensions
(the embedding difference times the path-averaged gradient, dimension by dimension). How
that vector becomes one number per token is a choice the method compares (Ray Choudhury,
Rogers & Augenstein), so every summary is kept (``TokenSaliency.summaries``):

* ``l2`` -- its Euclidean norm: sign-free, the default (``saliency`` holds it);
* ``l1`` -- the sum of its absolute values: sign-free, less dominated by a few dimensions;
* ``dot`` -- the sum of its values, i.e. the dot product of the embedding difference
  (input minus baseline) with the path-averaged gradient: signed (negative: the token
  argued against the target), and over all tokens it sums to F(input) - F(baseline) up to
  Captum's convergence delta, which the result keeps.

The ``n_steps`` interpolated inputs are run ``internal_batch_size`` at a time, which bounds
memory and changes nothing but rounding.
"""

from __future__ import annotations

from typing import Any

import torch
from captum.attr import LayerIntegratedGradients

from faithprobe.requests import IG_SUMMARIES
from faithprobe.subjects.hf.attribution.base import Attributor, EncodedInput, ExtractiveQAInput

SUMMARIES = {
    "l2": lambda a: a.norm(dim=-1),
    "l1": lambda a: a.abs().sum(dim=-1),
    "dot": lambda a: a.sum(dim=-1),
}
assert tuple(SUMMARIES) == IG_SUMMARIES  # the names requests and options know
PRIMARY = IG_SUMMARIES[0]


class IntegratedGradientsMethod(Attributor):
    """Integrated Gradients, for any model side (module docstring)."""

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
            "baseline": self.tokenizer.convert_ids_to_tokens(self.baseline_id),
            "layer": "word_embeddings",
            "summary": PRIMARY,
        }

    def token_attributions(self, enc: EncodedInput, target: int) -> tuple[torch.Tensor, float]:
        """The raw attributions [length, embedding dim] before a summary, and the
        convergence delta."""
        attributions, delta = self._ig.attribute(
            enc.ids,
            baselines=self.baseline_ids(enc),
            additional_forward_args=(enc.types, target),
            n_steps=self.n_steps,
            internal_batch_size=self.internal_batch_size,
            return_convergence_delta=True,
        )
        return attributions[0].detach().float(), float(delta[0])

    def _saliency(self, enc: EncodedInput, target: int):
        attributions, delta = self.token_attributions(enc, target)
        summaries = {name: summary(attributions) for name, summary in SUMMARIES.items()}
        return summaries[PRIMARY], delta, summaries


class IntegratedGradients(IntegratedGradientsMethod, ExtractiveQAInput):
    """Integrated Gradients of an extractive QA model's predicted start logit."""
