"""The ``confidence-shift`` suite (Shen & Kejriwal 2023): multiple-choice confidence when no
choice is correct. Its options live here, light to import, for ``faithprobe list``."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.asking.letters import ANSWER_HELP, ANSWER_MODES
from faithprobe.datasets.multiple_choice import CHOICE_FORMATS, RULES
from faithprobe.errors import UsageError
from faithprobe.options import check_numbers, listed, option
from faithprobe.suite_protocol import AuditStep, SuiteEntry

# probe -> (registered intervention, its parameters)
PROBES = {
    "no_question": ("no_question", {}),
    "wrong_question": ("wrong_question", {}),
    "wrong_question_disjoint": ("wrong_question", {"disjoint": True}),
    "no_right_answer": ("no_right_answer", {}),
}
DEFAULT_PROBES = ("no_question", "wrong_question", "no_right_answer")
PROBE_TITLES = {
    "no_question": "No-Question",
    "wrong_question": "Wrong-Question",
    "wrong_question_disjoint": "Wrong-Question (no shared word)",
    "no_right_answer": "No-Right-Answer",
}
# the probes that change the prompt and keep the choices: their pseudo-correct choice is the
# old right answer, and pseudo-accuracy against 1/n is the method's measure of them
PROMPT_PROBES = ("no_question", "wrong_question", "wrong_question_disjoint")
NO_PROBES = "none"  # -o probes=none: the original instances only
# how a choice's summed token log-probability becomes its score (see normalisation.py)
NORMALISATIONS = {
    "sum": "summed log-probability of the choice's tokens (lm-eval's acc)",
    "per-token": "summed log-probability / the choice's token count",
    "per-char": "summed log-probability / the choice's length in characters (lm-eval's acc_norm)",
    "per-byte": "summed log-probability / the choice's length in UTF-8 bytes (lm-eval's acc_bytes)",
}


@dataclass(frozen=True)
class ConfidenceShiftOptions:
    """The options of the ``confidence-shift`` suite (``-o KEY=VALUE``)."""

    trials: int = option(
        5, "trials per probe (different draws), averaged per instance", range=(1, 1000)
    )
    normalisation: str = option(
        "sum",
        "choice score: 'sum' of its token log-probs (lm-eval acc), 'per-token' (their mean), "
        "'per-char' (sum / characters, lm-eval acc_norm) or 'per-byte' (sum / UTF-8 bytes)",
        choices=NORMALISATIONS,
    )
    probes: str = option(
        ",".join(DEFAULT_PROBES),
        "comma-separated probes from: " + ", ".join(PROBES) + "; 'none': originals only",
    )
    rule: str = option(
        "standard",
        "how each format is put to the model: 'standard' (as its community scores it: "
        "HellaSwag as lm-eval's cleaned continuation, Social IQA 'Q: …\\nA:') or 'qa' "
        "(raw text in the Q/A frame for every format)",
        choices=RULES,
    )
    template: str = option(
        "auto", "the prompt's frame ({prompt}; \\n ok); 'auto': the rule's frame per format"
    )
    format: str = option(
        "auto", "data format ('auto': detected from the file)", choices=("auto", *CHOICE_FORMATS)
    )
    answer: str = option("auto", ANSWER_HELP, choices=ANSWER_MODES)

    def __post_init__(self) -> None:
        check_numbers(self)
        unknown = sorted(set(self.probe_names) - set(PROBES))
        if unknown or not (self.probe_names or self.probes.strip() == NO_PROBES):
            raise UsageError(
                f"unknown probes {unknown}; known: {', '.join(PROBES)} (or '{NO_PROBES}')"
            )

    @property
    def probe_names(self) -> tuple[str, ...]:
        """The probes ``probes`` names (comma-separated), in the order given; none for
        ``none``."""
        if self.probes.strip() == NO_PROBES:
            return ()
        return listed(self.probes, "probes")


SUITE = SuiteEntry.in_package(
    __name__,
    name="confidence-shift",
    description="multiple-choice confidence when no choice is correct (3 probes × trials)",
    method="Shen & Kejriwal (2023), Quantifying confidence shifts in a BERT-based question "
    "answering system evaluated on perturbed instances",
    options=ConfidenceShiftOptions,
    audit=(
        AuditStep(
            "confidence-shift",
            "Does confidence drop when no choice is correct?",
            {"small": 40, "default": 150, "full": None},
            order=60,
            budget_options={"small": {"trials": "2"}},
            data="socialiqa/dev.jsonl",
        ),
    ),
)
