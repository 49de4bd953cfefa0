"""The report's table of how each model answered a step (its answer mode) and how often its
replies named no option, from a suite's ``metrics.json`` (``answer_modes``,
:mod:`faithprobe.metrics.answer_modes`); shown by the candidate-scoring suites' reports where
a model answered by letter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from faithprobe.metrics.answer_modes import CANDIDATE_SCORES

from .tables import (
    DASH,
    Table,
    fmt_count,
    fmt_percent,
    interval_text,
    order_rows,
    subject_order,
)
from .views import BY_SUBJECT, SectionSpec

NAME = "answer_modes"


def by_letter(metrics: Mapping[str, Any]) -> bool:
    """Whether some model of the run did not answer by candidate scores."""
    return any(r["answer_mode"] != CANDIDATE_SCORES for r in metrics.get(NAME) or [])


def _no_answer(record: Mapping[str, Any] | None) -> str:
    if not record or not record.get("n"):
        return DASH
    return interval_text(record["value"], record["ci_low"], record["ci_high"], fmt_percent,
                         unit="%", blank=None)  # fmt: skip


def answer_modes_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = list(metrics.get(NAME) or [])
    if not rows:
        return None
    data = order_rows(pd.json_normalize(rows), subject_order(metrics), BY_SUBJECT)
    no_answer = [r.get("no_answer") for r in rows]
    display = order_rows(
        pd.DataFrame(
            {
                "subject": [r["subject"] for r in rows],
                "answered by": [r["answer_mode"] for r in rows],
                "no answer [95% CI]": [_no_answer(r) for r in no_answer],
                "inputs": [fmt_count((r or {}).get("n")) for r in no_answer],
            }
        ),
        subject_order(metrics),
        BY_SUBJECT,
    )
    return Table(
        NAME,
        "How each model answered",
        data,
        display,
        note="Candidate scores: the options' log-likelihoods (or a classifier's class scores). "
        "Letters: the options listed A, B, …, the choice being the one the reply names; with "
        "probabilities (top_logprobs), the letters' probabilities at the reply's first token, "
        "renormalised over the letters, stand in for what needs probabilities; parsed from "
        "replies, those are not computed. No answer: inputs whose reply named no option "
        "(counted as wrong), Wilson interval over the distinct inputs.",
    )


SECTION = SectionSpec("answers", "How each model answered", (NAME,), when=by_letter)
