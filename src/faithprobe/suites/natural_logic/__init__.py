"""The ``natural-logic`` suite (Rozanova et al. 2024): total and direct causal effects of
natural logic features in NLI models."""

from faithprobe.suite import SuiteEntry
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
)
