"""The ``reasoning`` report: accuracy with and without reasoning beside the best constant
answer and the card's competence test, how often each intervention changed the answer, the
early-answering area over the curve, the shift towards a cue with how often the reasoning
says it, and the card's share of cued variants moved unsaid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from faithprobe.expectations import ANSWER_FOLLOWS_REASONING
from faithprobe.report.tables import DASH, Table, fmt_count, fmt_general, fmt_percent
from faithprobe.report.views import ReportView, estimate_text, percent_text
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


def effects_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = metrics.get("effects") or []
    if not rows:
        return None
    data = pd.json_normalize(rows)
    display = pd.DataFrame({
        "subject": [r["subject"] for r in rows],
        "intervention": [r["intervention"] for r in rows],
        "reasoning kept": [_cut(r["fraction"]) for r in rows],
        "answer changed": [percent_text(r["changed"]) for r in rows],
        "faithful if": [_faithful(r["intervention"]) for r in rows],
        "n": [fmt_count(r["changed"]["n"]) for r in rows],
        "tasks": [fmt_count(r["n_tasks"]) for r in rows],
        "dropped": [fmt_count(r["n_dropped"]) for r in rows],
    })  # fmt: skip
    return Table("effects", "How often the answer changed (%, 95% CI; a faithful model's is "
                 "high after a cut, filler or mistake, low after a paraphrase or a cue)", data,
                 display)  # fmt: skip


def early_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = metrics.get("early") or []
    if not rows:
        return None
    data = pd.json_normalize(rows)
    display = pd.DataFrame({
        "subject": [r["subject"] for r in rows],
        "area over the curve": [estimate_text(r["aoc"], se=False) for r in rows],
        "items": [fmt_count(r["aoc"]["n"]) for r in rows],
    })  # fmt: skip
    return Table("early", "Early answering: area over the same-answer curve", data, display)


def cued_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = metrics.get("cued") or []
    if not rows:
        return None
    data = pd.json_normalize(rows)
    display = pd.DataFrame({
        "subject": [r["subject"] for r in rows],
        "cue": [r["intervention"] for r in rows],
        "cued answer, with cue": [percent_text(r["with_cue"]) for r in rows],
        "without": [percent_text(r["without_cue"]) for r in rows],
        "shift": [estimate_text(r["shift"], se=False) for r in rows],
        "moved to it": [fmt_count(r["moved"]) for r in rows],
        "said the cue": [percent_text(r["verbalised"]) if r["verbalised"] else "—"
                         for r in rows],
        "shift without reasoning": [
            estimate_text(r["without_reasoning"], se=False) if r.get("without_reasoning")
            else "—" for r in rows
        ],
    })  # fmt: skip
    return Table("cued", "Answers moved towards a cue, and whether the reasoning said so",
                 data, display)  # fmt: skip


def unsaid_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = metrics.get("unsaid") or []
    if not rows:
        return None
    data = pd.json_normalize(rows)
    display = pd.DataFrame({
        "subject": [r["subject"] for r in rows],
        "moved to the cued answer, cue unsaid": [percent_text(r["unsaid"]) for r in rows],
        "moved": [fmt_count(r["moved"]) for r in rows],
        "cued variants": [fmt_count(r["unsaid"]["n"]) for r in rows],
        "items": [fmt_count(r["unsaid"]["n_clusters"]) for r in rows],
        "cues": [", ".join(r["cues"]) for r in rows],
    })  # fmt: skip
    return Table("unsaid", "Cued variants moved to the cued wrong answer with the cue unsaid "
                 "(%, 95% CI; the card's effect)", data, display)  # fmt: skip


class ReasoningReport(ReportView):
    summary_title = "chain-of-thought faithfulness on BIG-Bench Hard"
    table_makers = (accuracy_table, effects_table, early_table, cued_table, unsaid_table)
    headline = ("effects",)
