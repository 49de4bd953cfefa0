"""How each model answered a step (its *answer mode*) and how often it gave no answer, read
off a suite's results table; every suite's metrics.json holds it as ``answer_modes`` and the
card shows it per step and model (:mod:`faithprobe.audit.card_metrics`).

A suite's rows say how the subject answered in their ``answer_mode`` column (the
candidate-scoring suites: :mod:`faithprobe.asking.letters`; the QA suites:
:mod:`faithprobe.asking.qa_questions` and :mod:`faithprobe.asking.yes_no_head`); the card names them
(:data:`MODE_TITLES`):

* **candidate scores**: the options' log-likelihoods, or a classifier's class scores;
* **letters with probabilities (top_logprobs)**: the options asked by letter, the choice
  the one the reply names, with the letters' probabilities from the endpoint's
  ``top_logprobs``;
* **letters parsed from replies**: the same without probabilities (the choice only);
* **generated answers**: a reply generated and read (the QA steps);
* **extracted spans**: an extractive QA model's span (the QA steps).

A QA step may ask one model two ways (yes/no questions scored, others generated): its
modes are listed, the most frequent first. Where the rows say whether a reply named an
option (``abstained``, the letter answers), ``no_answer`` counts the inputs whose reply
named none, with a Wilson interval over the distinct inputs.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from faithprobe.asking import qa_questions as qa
from faithprobe.asking.letters import LETTER_PROBABILITIES, LETTER_REPLIES, SCORES
from faithprobe.asking.yes_no_head import ANSWER_KIND_HEAD
from faithprobe.metrics.intervals import wilson

CANDIDATE_SCORES = "candidate scores"
LETTERS_WITH_PROBABILITIES = "letters with probabilities (top_logprobs)"
LETTERS_PARSED = "letters parsed from replies"
GENERATED = "generated answers"
SPANS = "extracted spans"
# a results row's answer_mode -> the card's name for it
MODE_TITLES = {
    SCORES: CANDIDATE_SCORES,
    LETTER_PROBABILITIES: LETTERS_WITH_PROBABILITIES,
    LETTER_REPLIES: LETTERS_PARSED,
    qa.LOG_LIKELIHOOD: CANDIDATE_SCORES,
    ANSWER_KIND_HEAD: CANDIDATE_SCORES,
    qa.GENERATION: GENERATED,
    qa.CHAT: GENERATED,
    qa.SPAN: SPANS,
}
# (input id, whether its reply named no option) on each side of a pair
NO_ANSWER_COLUMNS = (("original_id", "original_abstained"), ("intervened_id", "abstained"))


def mode_title(mode: str) -> str:
    """The card's name of a results row's ``answer_mode`` (a plug-in's own, as it is)."""
    return MODE_TITLES.get(mode, mode)


def answer_modes(results: pd.DataFrame) -> list[dict]:
    """Per subject: its answer mode(s) as the card names them (``answer_mode``, the most
    frequent first, joined by " + "; ``modes``: rows per mode) and ``no_answer`` (None
    where the rows do not say)."""
    if "answer_mode" not in results or results.empty:
        return []
    out = []
    for subject, rows in results.groupby("subject", sort=False):
        counts = Counter(mode_title(m) for m in rows["answer_mode"] if isinstance(m, str))
        modes = dict(counts.most_common())
        out.append(
            {
                "subject": subject,
                "answer_mode": " + ".join(modes),
                "modes": modes,
                "no_answer": no_answer(rows),
            }
        )
    return out


def no_answer(rows: pd.DataFrame) -> dict | None:
    """How many of the distinct inputs of one subject's ``rows`` got a reply naming no
    option (``n``, ``k``, their share with a Wilson interval); None where the rows do not
    record it."""
    sides = [(i, a) for i, a in NO_ANSWER_COLUMNS if {i, a} <= set(rows.columns)]
    if not sides:
        return None
    flags: dict[str, bool] = {}
    for ids, abstained in sides:
        for i, a in zip(rows[ids], rows[abstained], strict=True):
            if isinstance(i, str):
                flags.setdefault(i, bool(a))
    n, k = len(flags), sum(flags.values())
    low, high = wilson(k, n)
    return {"n": n, "k": k, "value": k / n if n else None,
            "ci_low": None if n == 0 else low, "ci_high": None if n == 0 else high}  # fmt: skip
