"""The report of the ``distractors`` suite: which tables, plots and examples it shows (the
tables in :mod:`.tables`, the figures in :mod:`.plots`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from faithprobe.report import answer_modes as answers
from faithprobe.report.answer_modes import answer_modes_table
from faithprobe.report.example_columns import ExampleColumn, example_frame
from faithprobe.report.html import Examples
from faithprobe.report.tables import DASH, order_rows
from faithprobe.report.views import ReportView, SectionSpec, examples_rng, pick_ids
from faithprobe.suites.distractors.plots import build_plots
from faithprobe.suites.distractors.release_tables import release_lead, release_tables
from faithprobe.suites.distractors.tables import ORDERING, build_tables

N_EXAMPLES = 20


def _condition(r: Mapping[str, Any]) -> str:
    if isinstance(r.get("swapped_from"), str):
        return f"critical fact swapped: {r['swapped_from']} → {r.get('background')}"
    parts = [
        str(r.get("setting", "")),
        str(r.get("attractor_type", "")),
        f"n={r.get('n_attractors', '')}",
        str(r.get("position", "")),
    ]
    if r.get("n_filler"):
        parts.append(f"filler={r['n_filler']}")
    return " · ".join(p for p in parts if p)


EXAMPLE_COLUMNS = (
    ExampleColumn("subject"),
    ExampleColumn(
        "condition", values=lambda rows: [_condition(r) for r in rows.to_dict("records")]
    ),
    ExampleColumn("original_context", "original context", True),
    ExampleColumn("original_prediction", "original prediction"),
    ExampleColumn("context", text=True),
    ExampleColumn("target"),
    ExampleColumn("prediction"),
    ExampleColumn("correct"),
)


def _example_rows(
    results: pd.DataFrame, seed: int = 0, k: int = N_EXAMPLES, subjects: Sequence[str] = ()
) -> pd.DataFrame:
    """About ``k`` result rows: a seeded sample of intervened pairs, every subject per pair.

    Pairs whose base item at least one subject answers correctly are preferred (only
    those enter the estimates); base rows are shown only if there is nothing else.
    """
    if results.empty:
        return pd.DataFrame(columns=[c.key for c in EXAMPLE_COLUMNS])
    pool = results
    if "dropped_reason" in pool.columns:  # a critical-fact swap that could not be made
        pool = pool[pool["dropped_reason"].isna()]
    if "intervention" in pool.columns:
        intervened = pool[pool["intervention"] != "none"]
        pool = intervened if not intervened.empty else pool
    if "competent" in pool.columns:
        competent = pool[pool["competent"].astype(bool)]
        pool = competent if not competent.empty else pool
    n_subjects = max(1, results["subject"].nunique()) if "subject" in results else 1
    picked = pick_ids(examples_rng(seed), pool["pair_id"].astype(str), max(1, k // n_subjects))
    rows = results[results["pair_id"].astype(str).isin(picked)]
    if "intervention" in rows.columns:
        rows = rows[rows["intervention"] != "none"]
    rows = order_rows(rows, subjects, ORDERING).sort_values("pair_id", kind="stable")
    return example_frame(EXAMPLE_COLUMNS, rows).reset_index(drop=True)


def _dataset_lead(metrics: Mapping[str, Any]) -> str:
    dataset = metrics.get("dataset") or {}

    def show(x: Any) -> str:
        return DASH if x is None else str(x)

    pairs, bases = show(dataset.get("n_pairs")), show(dataset.get("n_base"))
    links = "".join(
        f" {link['count']} variants were linked to their base item by rule: {link['rule']}."
        for link in dataset.get("linked_by", [])
    )
    return f"{pairs} pairs built on {bases} base items.{links}{release_lead(metrics)}"


def _has_fact_swaps(metrics: Mapping[str, Any]) -> bool:
    """Whether the run swapped critical facts (runs made before the swap did not: their
    report stays as it was)."""
    return bool(metrics.get("fact_swap_drops"))


class DistractorsReport(ReportView):
    summary_title = "accuracy [95% CI] by attractors"
    table_makers = (build_tables, answer_modes_table, release_tables)  # the headline first
    layout = (
        SectionSpec("tables", "Tables", ("accuracy_*", "relative_probability_*"),
                    empty="No estimates."),
        SectionSpec("competence", "Competence and dropped items",
                    ("competence", "competent_set", "base_accuracy"),
                    empty="No competence records."),
        SectionSpec("card", "The faithfulness card's effects", ("one_attractor_drops",),
                    empty="No one-attractor drops recorded."),
        SectionSpec("fact_swap", "Critical fact swapped", ("fact_swap_drops",),
                    when=_has_fact_swaps),
        SectionSpec("tests", "Tests", ("tests",), empty="No tests recorded."),
        answers.SECTION,
        SectionSpec("dataset", "Dataset", ("dataset", "views", "release_*"), lead=_dataset_lead),
    )  # fmt: skip

    # its figures are drawn from one frame of the estimates (plots.py)
    plots = staticmethod(build_plots)

    @staticmethod
    def examples(results: pd.DataFrame, seed: int, subjects: Sequence[str]) -> Examples:
        """Its own draw (:func:`_example_rows`): pairs drawn from the competent items, each
        shown with every subject's answer (:class:`ExampleRows` shows only the rows it draws
        from)."""
        return Examples(
            EXAMPLE_COLUMNS,
            _example_rows(results, seed=seed, subjects=subjects),
            note="A seeded sample of intervened pairs, with every subject's answer.",
        )
