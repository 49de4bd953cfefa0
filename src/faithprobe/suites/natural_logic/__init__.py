"""The ``natural-logic`` suite (Rozanova et al. 2024): total and direct causal effects of
natural logic features in NLI models."""

from faithprobe.suite_protocol import AuditStep, SuiteEntry
from faithprobe.suites.natural_logic.options import NaturalLogicOptions

SUITE = SuiteEntry.in_package(
    __name__,
    name="natural-logic",
    description="NLI: total and direct causal effects of context and word-pair swaps (NLI-XY)",
    method="Rozanova, Valentino & Freitas (2024), Estimating the causal effects of natural "
    "logic features in transformer-based NLI models",
    options=NaturalLogicOptions,
    audit=(
        AuditStep(
            "natural-logic",
            "Does the NLI prediction move when monotonicity or the word pair change the label?",
            # 20 bases: above the suite's minimum of 16 (natural_logic.intervals.MIN_BASES,
            # below which its intervals under-cover and it gives none). A model that never
            # moves on one feature (ref:pair-only, ref:context-only) has TCE - DCE near 0 on
            # every base, and every rate's variance adds that of a rate 0 on every base:
            # Holm's correction over the step's four effects then calls it unfaithful on
            # some seed sets of 20 bases, 13 of 20 of 24 (ref:context-only: its TCE is 0.03)
            # and all 20 of 32 (docs/audit.md, the validity table)
            {"small": 20, "default": 32, "full": None},
            order=50,
            size_option="bases",
            data="nli-xy",
        ),
    ),
)
