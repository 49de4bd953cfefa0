"""The options of the ``natural-logic`` suite, kept apart from the suite class so that
``faithprobe list`` and the report read them without importing the suite's dependencies."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.asking.letters import ANSWER_HELP, ANSWER_MODES
from faithprobe.options import check_numbers, listed, option

DEFAULT_TEMPLATE = "{premise}\nQuestion: {hypothesis} True or False?\nAnswer:"
DEFAULT_LABEL_WORDS = "True,False"
CALIBRATIONS = ("none", "content-free")
# option decision -> how a classifier's answer becomes a label (TextPairRequest.grouping)
DECISIONS = {
    "threshold": "sum",  # p(entailment) > 1/2, neutral and contradiction summed
    "argmax": "max",  # the top class is entailment (the method's released code)
}
# option i1 -> the intervention that builds set I1: every other relation, or leq <-> geq only
# (the method's apparent definition, which reproduces its set size)
I1_SWAPS = {"all": "swap_pair_flip", "leq-geq": "swap_pair_reverse"}


def split_label_words(text: str) -> tuple[str, ...]:
    """The words of the option ``label_words`` (comma-separated, entailment's first)."""
    return tuple(w.strip() for w in text.split(","))


@dataclass(frozen=True)
class NaturalLogicOptions:
    """``-o KEY=VALUE`` of ``faithprobe run natural-logic``. The template and the label
    words are checked where the prompt is made (:class:`~faithprobe.suites.natural_logic.
    suite.NLIPrompt`)."""

    bases: int = option(400, "seed set size N (base examples); 0 = every example", range=(0, 10**9))
    challenge: str = option("auto", "challenge sets: auto, none, or comma-separated files")
    template: str = option(DEFAULT_TEMPLATE, "LM prompt ({premise}, {hypothesis}; \\n ok)")
    label_words: str = option(DEFAULT_LABEL_WORDS, "LM answer words: entailment,non-entailment")
    calibration: str = option("none", "LM calibration", choices=CALIBRATIONS)
    i1: str = option(
        "all",
        "I1 word-pair swaps: all (any other relation) or leq-geq (method's)",
        choices=I1_SWAPS,
    )
    answer: str = option("auto", ANSWER_HELP, choices=ANSWER_MODES)
    decision: str = option(
        "threshold",
        "classifiers: entailment iff p(entailment) > 1/2 (threshold) or iff it is the top "
        "class (argmax, the method's; differs only for 3-class models)",
        choices=DECISIONS,
    )

    def __post_init__(self) -> None:
        check_numbers(self)
        if self.challenge not in ("auto", "none"):
            listed(self.challenge, "challenge")  # files, each once, read with the data
