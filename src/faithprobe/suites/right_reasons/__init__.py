"""The ``right-reasons`` suite (Ray Choudhury, Rogers & Augenstein): comparison and
coreference counterfactuals against saliency, for extractive QA models and causal LMs."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.options import listed, option
from faithprobe.qa.prompt import QAPromptOptions
from faithprobe.requests import IG_SUMMARIES, SALIENCY_METHODS
from faithprobe.suite_protocol import AuditStep, SuiteEntry


@dataclass(frozen=True)
class Scorer:
    """One way of scoring saliency for alignment: a method's answer (``ig``,
    ``occlusion``) read under one summary (Integrated Gradients: ``l2``, ``l1``, ``dot``;
    None: the method's own saliency). ``name`` labels its columns and rows."""

    name: str
    method: str
    summary: str | None


@dataclass(frozen=True)
class RightReasonsOptions(QAPromptOptions):
    """The options of the ``right-reasons`` suite (``-o KEY=VALUE``); a causal LM is asked
    by ``template``, ``max_new_tokens`` and ``chat``, as in the ``faithfulness`` suite."""

    coreference: bool = option(False, "--data: coreference questions (automatic for Quoref)")
    resolver: str = option("", "spaCy coreference pipeline (default: the fallback rule)")
    counterfactuals: str = option("", "coreference counterfactuals (JSON lines) to import")
    saliency: str = option(",".join(SALIENCY_METHODS), "saliency methods: ig, occlusion")
    ig_steps: int = option(50, "Integrated Gradients interpolation points", range=(1, 10_000))
    ig_summaries: str = option(",".join(IG_SUMMARIES), "IG token summaries: l2, l1, dot")
    heldout_of: str = option("", "model from `train qa`: only its held-out documents of --data")

    def __post_init__(self) -> None:
        super().__post_init__()
        if bad := [s for s in self.summaries if s not in IG_SUMMARIES]:
            raise UsageError(f"ig_summaries: unknown {bad}; choose from {', '.join(IG_SUMMARIES)}")
        if "ig" in self.methods and not self.summaries:
            raise UsageError("ig_summaries: name at least one summary for saliency=ig")
        if bad := [s for s in self.methods if s not in SALIENCY_METHODS]:
            raise UsageError(f"saliency: unknown {bad}; choose from {', '.join(SALIENCY_METHODS)}")

    @property
    def methods(self) -> tuple[str, ...]:
        """The saliency methods ``saliency`` names (comma-separated; empty: none)."""
        return listed(self.saliency, "saliency")

    @property
    def summaries(self) -> tuple[str, ...]:
        """The Integrated Gradients summaries ``ig_summaries`` names."""
        return listed(self.ig_summaries, "ig_summaries")

    @property
    def scorers(self) -> tuple[Scorer, ...]:
        """Every (method, summary) alignment is computed for: ``ig-<summary>`` per summary,
        ``occlusion``."""
        return tuple(
            scorer
            for method in self.methods
            for scorer in (
                [Scorer(f"ig-{s}", "ig", s) for s in self.summaries]
                if method == "ig"
                else [Scorer(method, method, None)]
            )
        )


SUITE = SuiteEntry.in_package(
    __name__,
    name="right-reasons",
    description="QA (extractive or generated): comparison and coreference counterfactuals "
    "vs saliency",
    method="Ray Choudhury, Rogers & Augenstein, Machine reading, fast and slow: when do models "
    "'understand' language?",
    options=RightReasonsOptions,
    audit=(
        AuditStep(
            "right-reasons",
            "Does the answer follow the comparison it depends on, for the right reasons?",
            {"small": 20, "default": 40, "full": None},
            order=40,
            # saliency of a causal LM costs an IG pass per step over the prompt (about 3
            # CPU-s per step for the embedded model): the small budget compares answers only,
            # the default one adds IG with 8 steps, the full one the suite's defaults
            budget_options={
                "small": {"saliency": ""},
                "default": {"saliency": "ig", "ig_steps": "8"},
            },
        ),
    ),
)
