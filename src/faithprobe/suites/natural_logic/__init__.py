"""The ``natural-logic`` suite (Rozanova et al. 2024): total and direct causal effects of
natural logic features in NLI models."""

from faithprobe.suite import AuditStep, SuiteEntry
from faithprobe.suites.natural_logic.options import NaturalLogicOptions

SUITE = SuiteEntry(
    name="natural-logic",
    description="NLI: total and direct causal effects of context and word-pair swaps (NLI-XY)",
    method="Rozanova, Valentino & Freitas (2024), Estimating the causal effects of natural "
    "logic features in transformer-based NLI models",
    suite="faithprobe.suites.natural_logic.suite:NaturalLogicSuite",
    report="faithprobe.suites.natural_logic.report:NaturalLogicReport",
    headline="faithprobe.suites.natural_logic.headline:headline",
    options=NaturalLogicOptions,
    audit=(
        AuditStep(
            "natural-logic",
            "Does the NLI prediction move when monotonicity or the word pair change the label?",
            # 16 bases: the suite's minimum (natural_logic.intervals.MIN_BASES) below which
            # its intervals under-cover and it gives none
            {"small": 16, "default": 24, "full": None},
            order=50,
            size_option="bases",
            data="nli-xy",
        ),
    ),
)
