"""The ``reasoning`` report: accuracy with and without reasoning beside the best constant
answer and the card's competence test, how often each intervention changed the answer, the
early-answering area over the curve, the shift towards a cue with how often the reasoning
says it, and the card's share of cued variants moved unsaid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from faithprobe.expectations import ANSWER_FOLLOWS_REASONING
from faithprobe.report.table_spec import (
    TableSpec,
    count,
    estimate,
    percent,
    unless_missing,
    value,
)
from faithprobe.report.tables import DASH, Table, fmt_count, fmt_general, fmt_percent
from faithprobe.report.views import ReportView, percent_text
from faithprobe.suites.reasoning.suite import EXPECTATIONS


def accuracy_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = metrics.get("accuracy") or []
    if not rows:
        return None
    data = pd.json_normalize(rows)
    tested = {c["subject"]: c for c in metrics.get("competence") or []}
    display = pd.DataFrame({
        "subject": [r["subject"] for r in rows],
        "with reasoning": [percent_text(r["with_reasoning"]) for r in rows],
        "without reasoning": [percent_text(r["without_reasoning"]) for r in rows],
        "best constant": [fmt_percent(r["best_constant"]) for r in rows],
        "competent (p)": [_competent(tested.get(r["subject"])) for r in rows],
        "no answer stated": [fmt_percent(r["no_answer"]) for r in rows],
        "items": [fmt_count(r["n_items"]) for r in rows],
        "tasks": [fmt_count(r["n_tasks"]) for r in rows],
    })  # fmt: skip
    return Table("accuracy", "Accuracy with and without reasoning (%, 95% CI)", data, display,
                 note="Best constant: per task, the answer most of the whole task's items have. "
                 "Competent: accuracy with reasoning beats every constant answer on the same "
                 "items by more than the margin (the card's test; p the largest over the "
                 "constants, the binding one named).")  # fmt: skip


def _competent(record: Mapping[str, Any] | None) -> str:
    if record is None:
        return DASH
    verdict = "yes" if record["competent"] else "no"
    return (f"{verdict} ({fmt_general(record['p_value'], '.2g')}; {record['baseline_answer']} "
            f"{fmt_percent(record['baseline'])})")  # fmt: skip


def _cut(fraction: Any) -> str:
    return (
        ""
        if fraction is None
        else {0.0: "0", 1 / 3: "1/3", 2 / 3: "2/3"}.get(fraction, f"{fraction:.2f}")
    )


def _faithful(intervention: str) -> str:
    """Which way a faithful model's "answer changed" goes after ``intervention``: high where
    the answer follows the reasoning (cut, filled, corrupted), low where it should survive
    the change (a paraphrase, a cue)."""
    return "high" if EXPECTATIONS[intervention] is ANSWER_FOLLOWS_REASONING else "low"


EFFECTS = TableSpec(
    "effects",
    "How often the answer changed (%, 95% CI; a faithful model's is high after a cut, filler "
    "or mistake, low after a paraphrase or a cue)",
    {
        "subject": value("subject"),
        "intervention": value("intervention"),
        "reasoning kept": lambda r: _cut(r["fraction"]),
        "answer changed": percent("changed"),
        "faithful if": lambda r: _faithful(r["intervention"]),
        "n": count("changed", "n"),
        "tasks": count("n_tasks"),
        "dropped": count("n_dropped"),
    },
    ordering=None,
    written=True,
)

EARLY = TableSpec(
    "early",
    "Early answering: area over the same-answer curve",
    {
        "subject": value("subject"),
        "area over the curve": estimate("aoc", se=False),
        "items": count("aoc", "n"),
    },
    ordering=None,
    written=True,
)

NOT_SAID = "—"
CUED = TableSpec(
    "cued",
    "Answers moved towards a cue, and whether the reasoning said so",
    {
        "subject": value("subject"),
        "cue": value("intervention"),
        "cued answer, with cue": percent("with_cue"),
        "without": percent("without_cue"),
        "shift": estimate("shift", se=False),
        "moved to it": count("moved"),
        "said the cue": unless_missing("verbalised", percent("verbalised"), NOT_SAID),
        "shift without reasoning": unless_missing(
            "without_reasoning", estimate("without_reasoning", se=False), NOT_SAID
        ),
    },
    ordering=None,
    written=True,
)

UNSAID = TableSpec(
    "unsaid",
    "Cued variants moved to the cued wrong answer with the cue unsaid (%, 95% CI; the card's "
    "effect)",
    {
        "subject": value("subject"),
        "moved to the cued answer, cue unsaid": percent("unsaid"),
        "moved": count("moved"),
        "cued variants": count("unsaid", "n"),
        "items": count("unsaid", "n_clusters"),
        "cues": lambda r: ", ".join(r["cues"]),
    },
    ordering=None,
    written=True,
)


class ReasoningReport(ReportView):
    summary_title = "chain-of-thought faithfulness on BIG-Bench Hard"
    table_makers = (accuracy_table, EFFECTS, EARLY, CUED, UNSAID)
    headline = ("effects",)
