"""Occlusion: how much the target drops when one token is replaced.

Each attributed token in turn is replaced by the baseline token (see
:mod:`faithprobe.subjects.hf.attribution.base`: the mask token of an extractive QA model); its saliency
is the target on the input minus the same target on the occluded copy (positive: the token
supported the target). Tokens that are not attributed (special tokens, a prompt's
template) get zero.

Captum's ``Occlusion`` with a window of one token over the token ids does exactly this:
the baseline it writes into the window is the baseline input, which equals the input at
the tokens not attributed, so occluding one changes nothing (up to rounding between batch
shapes, which is why they are set to zero afterwards). The occluded copies are run
``batch_size`` at a time (Captum's ``perturbations_per_eval``), without gradients, which
bounds memory and changes nothing but rounding.
"""

from __future__ import annotations

from typing import Any

import torch
from captum.attr import Occlusion as CaptumOcclusion

from faithprobe.subjects.hf.attribution.base import Attributor, EncodedInput, ExtractiveQAInput


class OcclusionMethod(Attributor):
    """Occlusion, for any model side (module docstring)."""

    method = "occlusion"

    def __init__(self, model, tokenizer, *, batch_size: int = 32, **kwargs) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        super().__init__(model, tokenizer, **kwargs)
        self.batch_size = batch_size
        self._occlusion = CaptumOcclusion(self.target_logit)

    @property
    def settings(self) -> dict[str, Any]:
        return {"occluder": self.tokenizer.convert_ids_to_tokens(self.baseline_id), "window": 1}

    def _saliency(self, enc: EncodedInput, target: int):
        with torch.no_grad():
            saliency = self._occlusion.attribute(
                enc.ids,
                sliding_window_shapes=(1,),
                baselines=self.baseline_ids(enc),
                additional_forward_args=(enc.types, target),
                perturbations_per_eval=self.batch_size,
            )
        kept = torch.tensor([o is None for o in enc.offsets])
        return saliency[0].float().masked_fill(kept, 0.0), None, {}


class Occlusion(OcclusionMethod, ExtractiveQAInput):
    """Occlusion of an extractive QA model's predicted start logit."""
