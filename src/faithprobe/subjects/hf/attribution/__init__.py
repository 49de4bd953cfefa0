"""Token saliency for extractive QA models (for the ``right-reasons`` suite): Integrated
Gradients and Occlusion behind one verb, ``attribute``, and helpers that map words to
subword tokens and aggregate saliency over them."""

from faithprobe.subjects.hf.attribution.base import Attributor, SaliencyRequest, TokenSaliency
from faithprobe.subjects.hf.attribution.integrated_gradients import IntegratedGradients
from faithprobe.subjects.hf.attribution.occlusion import Occlusion

__all__ = ["Attributor", "IntegratedGradients", "Occlusion", "SaliencyRequest", "TokenSaliency"]
