"""The options of the ``distractors`` suite, kept apart from the suite class so that
``faithprobe list`` and the report read them without importing the suite's dependencies."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.asking.letters import ANSWER_HELP, ANSWER_MODES
from faithprobe.errors import UsageError
from faithprobe.options import check_numbers, option

# option scoring: how a candidate is scored (CandidateScoreRequest.first_token)
SUM, FIRST_TOKEN = "sum", "first-token"
SCORING_RULES = {
    SUM: "the whole candidate's summed log-probability (ours)",
    FIRST_TOKEN: "the candidate's first token only (Pandia & Ettinger 2021)",
}
# option competent: which base items count in the competent views
COMPETENT_RULES = {
    "each": "each model's own competent items (base items it answers correctly)",
    "shared": "the items every model of the run answers correctly without attractors",
}


@dataclass(frozen=True)
class DistractorsOptions:
    """``-o KEY=VALUE`` of ``faithprobe run distractors``."""

    filler: int = option(
        0, "neutral sentences padding the n = 0 items (0 = the bare base items)", range=(0, 3)
    )
    fillers: tuple[int, ...] | None = option(
        None,
        "filler levels kept, comma-separated (--data: of the levels the data has, default "
        "all; generated: 0..3, default 0)",
        range=(0, None),
    )
    competent: str = option(
        "each", "items counted: each (model's own) or shared (all pass)", choices=COMPETENT_RULES
    )
    answer: str = option("auto", ANSWER_HELP, choices=ANSWER_MODES)
    scoring: str = option(
        SUM, "candidate score: sum (all its tokens) or first-token", choices=SCORING_RULES
    )
    start: str = option(
        "", "before the context: nothing, bos (the model's start-of-text token) or a text"
    )

    def __post_init__(self) -> None:
        check_numbers(self)
        if self.answer == "letter" and (self.scoring != SUM or self.start):
            raise UsageError(
                "scoring and start are rules for scored candidates; answer=letter asks by letter"
            )
