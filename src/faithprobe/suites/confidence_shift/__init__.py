"""The ``confidence-shift`` suite (Shen & Kejriwal 2023): multiple-choice confidence when no
choice is correct. Its options live here, light to import, for ``faithprobe list``."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.errors import UsageError, excerpt
from faithprobe.options import option
from faithprobe.prompts import DEFAULT_TEMPLATE
from faithprobe.suite import SuiteEntry

# probe -> (registered intervention, its parameters)
PROBES = {
    "no_question": ("no_question", {}),
    "wrong_question": ("wrong_question", {}),
    "wrong_question_disjoint": ("wrong_question", {"disjoint": True}),
    "no_right_answer": ("no_right_answer", {}),
}
DEFAULT_PROBES = ("no_question", "wrong_question", "no_right_answer")
ANSWER_MODES = ("auto", "scores", "letter")


@dataclass(frozen=True)
class ConfidenceShiftOptions:
    """The options of the ``confidence-shift`` suite (``-o KEY=VALUE``)."""

    trials: int = option(5, "trials per probe (different draws), averaged per instance")
    normalisation: str = option("sum", "choice score: 'sum' of token log-probs or their 'mean'")
    probes: str = option(
        ",".join(DEFAULT_PROBES), "comma-separated probes from: " + ", ".join(PROBES)
    )
    template: str = option(
        DEFAULT_TEMPLATE, "how the prompt is put to the model ({prompt}; \\n ok)"
    )
    format: str = option("auto", "data format: auto, socialiqa, hellaswag, choice-jsonl")
    answer: str = option(
        "auto",
        "'scores' (choice log-likelihoods), 'letter' (the model writes a letter; "
        "abstentions counted) or 'auto' (letters only for models that cannot score)",
    )

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise UsageError(f"trials must be at least 1, got {self.trials}")
        if self.normalisation not in ("sum", "mean"):
            raise UsageError(
                f"normalisation must be 'sum' or 'mean', got {excerpt(self.normalisation)}"
            )
        unknown = sorted(set(self.probe_names) - set(PROBES))
        if unknown or not self.probe_names:
            raise UsageError(f"unknown probes {unknown}; known: {', '.join(PROBES)}")
        if self.answer not in ANSWER_MODES:
            raise UsageError(
                f"answer must be one of {', '.join(ANSWER_MODES)}, got {excerpt(self.answer)}"
            )

    @property
    def probe_names(self) -> tuple[str, ...]:
        """The probes ``probes`` names (comma-separated), in the order given."""
        return tuple(p.strip() for p in self.probes.split(",") if p.strip())


SUITE = SuiteEntry(
    name="confidence-shift",
    description="multiple-choice confidence when no choice is correct (3 probes × trials)",
    method="Shen & Kejriwal (2023), Quantifying confidence shifts in a BERT-based question "
    "answering system evaluated on perturbed instances",
    suite="faithprobe.suites.confidence_shift.suite:ConfidenceShiftSuite",
    report="faithprobe.suites.confidence_shift.report:ConfidenceShiftReport",
    headline="faithprobe.suites.confidence_shift.headline:headline",
    options=ConfidenceShiftOptions,
)
