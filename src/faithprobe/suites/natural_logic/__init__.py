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
            # 20 bases: above the suite's minimum of 16 (natural_logic.intervals.MIN_BASES,
            # below which its intervals under-cover and it gives none). A model that never
            # moves on one feature (ref:pair-only, ref:context-only) has TCE - DCE = 0 on
            # every base; the variance floor of such rates puts the interval's upper end at
            # 0.22 at 16 bases (the 0.2 edge inside it: never unfaithful) and 0.18 at 20, where
            # Holm's correction over the step's effects calls it unfaithful on some seed sets
            # (docs/audit.md, the validity table) and at the default 24 on all
            {"small": 20, "default": 24, "full": None},
            order=50,
            size_option="bases",
            data="nli-xy",
        ),
    ),
)
