"""The ``right-reasons`` suite (Ray Choudhury, Rogers & Augenstein): comparison and
coreference counterfactuals against saliency, for extractive QA models."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.options import option
from faithprobe.requests import SALIENCY_METHODS
from faithprobe.suite import SuiteEntry


@dataclass(frozen=True)
class RightReasonsOptions:
    """The options of the ``right-reasons`` suite (``-o KEY=VALUE``)."""

    coreference: bool = option(False, "--data: coreference questions (automatic for Quoref)")
    resolver: str = option("", "spaCy coreference pipeline (default: the fallback rule)")
    counterfactuals: str = option("", "coreference counterfactuals (JSON lines) to import")
    saliency: str = option(",".join(SALIENCY_METHODS), "saliency methods: ig, occlusion")
    ig_steps: int = option(50, "Integrated Gradients interpolation points")
    heldout_of: str = option("", "model from `train qa`: only its held-out documents of --data")

    def __post_init__(self) -> None:
        if bad := [s for s in self.methods if s not in SALIENCY_METHODS]:
            raise UsageError(f"saliency: unknown {bad}; choose from {', '.join(SALIENCY_METHODS)}")
        if self.ig_steps < 1:
            raise UsageError(f"ig_steps must be 1 or more, got {self.ig_steps}")

    @property
    def methods(self) -> tuple[str, ...]:
        """The saliency methods ``saliency`` names (comma-separated; empty: none)."""
        return tuple(s.strip() for s in self.saliency.split(",") if s.strip())


SUITE = SuiteEntry(
    name="right-reasons",
    description="extractive QA: comparison and coreference counterfactuals vs saliency",
    method="Ray Choudhury, Rogers & Augenstein, Machine reading, fast and slow: when do models "
    "'understand' language?",
    suite="faithprobe.suites.right_reasons.suite:RightReasonsSuite",
    report="faithprobe.suites.right_reasons.report:RightReasonsReport",
    headline="faithprobe.suites.right_reasons.headline:headline",
    options=RightReasonsOptions,
)
