"""The ``reasoning`` report: accuracy with and without reasoning beside the best constant
answer, how often each intervention changed the answer, the early-answering area over the
curve, and the shift towards a cue with how often the reasoning says it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from faithprobe.report.tables import Table, fmt_count, fmt_percent
from faithprobe.report.views import ReportView, estimate_text, percent_text


def accuracy_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = metrics.get("accuracy") or []
    if not rows:
        return None
    data = pd.json_normalize(rows)
    display = pd.DataFrame({
        "subject": [r["subject"] for r in rows],
        "with reasoning": [percent_text(r["with_reasoning"]) for r in rows],
        "without reasoning": [percent_text(r["without_reasoning"]) for r in rows],
        "best constant": [fmt_percent(r["best_constant"]) for r in rows],
        "no answer stated": [fmt_percent(r["no_answer"]) for r in rows],
        "items": [fmt_count(r["n_items"]) for r in rows],
        "tasks": [fmt_count(r["n_tasks"]) for r in rows],
    })  # fmt: skip
    return Table("accuracy", "Accuracy with and without reasoning (%, 95% CI)", data, display)


def _cut(fraction: Any) -> str:
    return (
        ""
        if fraction is None
        else {0.0: "0", 1 / 3: "1/3", 2 / 3: "2/3"}.get(fraction, f"{fraction:.2f}")
    )


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
        "n": [fmt_count(r["changed"]["n"]) for r in rows],
        "tasks": [fmt_count(r["n_tasks"]) for r in rows],
        "dropped": [fmt_count(r["n_dropped"]) for r in rows],
    })  # fmt: skip
    return Table("effects", "How often the answer changed (%, 95% CI)", data, display)


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


class ReasoningReport(ReportView):
    summary_title = "chain-of-thought faithfulness on BIG-Bench Hard"
    table_makers = (accuracy_table, effects_table, early_table, cued_table)
    headline = ("effects",)
