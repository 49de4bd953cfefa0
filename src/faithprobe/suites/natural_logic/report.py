"""The report of the ``natural-logic`` suite, after Rozanova et al.: set sizes (their Table
4), TCE, DCE, ratio and delta per feature (their Figures 3 and 4), the robustness and
sensitivity ranking (their Table 5) and two-class accuracies. Every number is read from
``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from faithprobe.report import answer_modes as answers
from faithprobe.report.answer_modes import answer_modes_table
from faithprobe.report.example_columns import ExampleColumn, expectation_met
from faithprobe.report.figures import grouped_bars, new_figure
from faithprobe.report.table_spec import (
    Cell,
    TableSpec,
    count,
    estimate,
    or_dash,
    three_decimals,
    value,
    without_units,
)
from faithprobe.report.tables import BY_SUBJECT, DASH, Table, fmt_count, order_rows, subject_order
from faithprobe.report.views import (
    ExampleRows,
    ReportView,
    SectionSpec,
    estimate_text,
    f3,
    metric_frame,
)
from faithprobe.suites.natural_logic.intervals import MIN_BASES
from faithprobe.suites.natural_logic.metrics import SETS
from faithprobe.suites.natural_logic.options import split_label_words

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn (new_figure)
    from matplotlib.figure import Figure

N_EXAMPLES = 24
FEATURE_TITLES = {
    "insertion": "word-pair (insertion) interventions",
    "context": "context interventions",
}
QUANTITIES = ("dce", "tce", "ratio", "delta")


def _ci(r: Mapping[str, Any]) -> str:
    return estimate_text(r, se=False)


def summary(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """One row per subject x feature: DCE, TCE, ratio, delta."""
    rows = []
    for r in metrics.get("effects", []):
        rows.append(
            {
                "subject": r["subject"],
                "feature": r["feature"],
                "DCE (robustness, lower better)": _ci(r["dce"]),
                "TCE (sensitivity, higher better)": _ci(r["tce"]),
                "TCE/DCE": _ci(r["ratio"]),
                "DCE/TCE (card)": _ci(r["dce_over_tce"]),
                "TCE−DCE": _ci(r["delta"]),
                "bases": fmt_count(r["n_bases"]),
            }
        )
    return order_rows(pd.DataFrame(rows), subject_order(metrics), BY_SUBJECT)


# What each data file gave and how much of it the run used.
DATA_READ = TableSpec(
    "data_read",
    "What the data gave",
    {"data": value("data"), "read": count("read"), "used": count("used"), "what": value("note")},
    ordering=None,
    note="Counted as the files were read, before --limit. The sets' pairs and the "
    "accuracies' n below say how many items each view used.",
)


def _sizes_note(records: Sequence[Mapping[str, Any]]) -> str:
    seed = int(records[0]["seed_set"])
    return (
        f"Seed set: {seed} base examples, each paired with every alternative that meets "
        "the set's condition. Read each set's pairs against the method's count: I1 built by "
        "swap_pair_reverse (option i1=leq-geq: leq <-> geq swaps only) is the method's "
        "apparent I1: its expected size over all seed sets of 400 is 22,623 on the shared "
        "grid against the method's 22,640 (swap_pair_flip, i1=all, which also swaps to and "
        "from pairs of relation none: 31,698)."
    )


SET_SIZES = TableSpec(
    "set_sizes",
    "Intervention sets (the method's Table 4)",
    {
        "set": value("set"),
        "intervention": value("title"),
        "built by": or_dash("intervention"),
        "pairs": count("pairs"),
        "bases with a pair": count("bases"),
        "pairs per base": lambda r: f"{r['pairs_per_base']:.1f}",
        "distinct alternatives": count("alternatives"),
        "method (N=400)": count("method_size"),
    },
    note=_sizes_note,
)


# the per-pair numbers of the card's effects (for paired comparisons) are not for a table
EFFECTS = TableSpec(
    "effects",
    "Causal effects of each feature (the method's Figures 3 and 4)",
    trim=without_units,
    display=lambda _, metrics: summary(metrics),
    note="CP = 1 when the two predictions of a pair differ. TCE: mean CP over the "
    "label-changing set; DCE: over the label-preserving set. 95% intervals over base "
    "examples: a studentized bootstrap (TCE and DCE from the same resamples), never "
    "narrower than the t-interval; the ratios by Fieller's construction (an unbounded "
    f"end shows as {DASH}). Below {MIN_BASES} bases no interval is given.",
)


def ranking_table(metrics: Mapping[str, Any]) -> Table | None:
    data = metric_frame(metrics, "ranking", BY_SUBJECT)
    if data.empty:
        return None
    display = pd.DataFrame(
        {
            "feature": data["feature"],
            "subject": data["subject"],
            "robustness rank (DCE)": data["robustness_rank"].map(fmt_count),
            "sensitivity rank (TCE)": data["sensitivity_rank"].map(fmt_count),
            "ratio rank": data["ratio_rank"].map(fmt_count),
            "DCE": data["dce"].map(f3),
            "TCE": data["tce"].map(f3),
        }
    ).sort_values(["feature", "robustness rank (DCE)"], kind="stable")
    return Table(
        "ranking",
        "Robustness and sensitivity ranking (the method's Table 5)",
        data,
        display,
        note="Rank 1 = most robust (lowest DCE) / most sensitive (highest TCE) / highest "
        "ratio, by point estimate; see the intervals above before reading much into close ranks.",
    )


SUBJECT_DIFFERENCES = TableSpec(
    "subject_differences",
    "Do the models differ? TCE and DCE of A minus B",
    {
        "feature": value("feature"),
        "effect": value("quantity"),
        "A": value("subject_a"),
        "B": value("subject_b"),
        "A − B [95% CI]": estimate(se=False),
        "p": three_decimals("p_value"),
        "bases": count("n_bases"),
    },
    note="Read a positive TCE difference as A more sensitive to the feature than B, a "
    "negative DCE difference as A more robust; the models differ at the 95% level when "
    "the interval excludes 0 (paired studentized bootstrap over the base examples both "
    "answered, never narrower than t's; p two-sided). This is the method's HELP contrast when A and B are one "
    "recipe trained without and with HELP.",
)


def _accuracy_columns(first: str) -> dict[str, Cell]:
    return {
        "subject": value("subject"),
        first: lambda r: r[first if first in r else "examples"],
        "accuracy [95% CI]": estimate(se=False),
        "n": count("n"),
        "majority baseline": three_decimals("majority_baseline"),
        "gold entailment": three_decimals("gold_entailment_share"),
        "predicted entailment": three_decimals("predicted_entailment_share"),
        "recall: entailment": three_decimals("entailment_recall"),
        "recall: non-entailment": three_decimals("non_entailment_recall"),
    }


NLI_XY_ACCURACY = TableSpec(
    "nli_xy_accuracy",
    "Two-class accuracy on NLI-XY",
    _accuracy_columns("examples"),
    rows="base_accuracy",
    note="Wilson intervals. A model that predicts one class everywhere has CP = 0 on every "
    "pair: read TCE together with the predicted-entailment share.",
)
CHALLENGE_ACCURACY = TableSpec(
    "challenge_accuracy",
    "Two-class accuracy on the challenge sets",
    _accuracy_columns("source"),
    note="Entailment vs non-entailment (neutral and contradiction grouped). Wilson intervals.",
)


# --------------------------------------------------------------------------- plots


def effects_figure(metrics: Mapping[str, Any]) -> Figure | None:
    """Bars of DCE and TCE (and their difference) per subject, one panel per feature."""
    rows = list(metrics.get("effects") or [])
    if not rows:
        return None
    subjects = subject_order(metrics) or list(dict.fromkeys(r["subject"] for r in rows))
    by = {(r["subject"], r["feature"]): r for r in rows}
    features = [f for f in FEATURE_TITLES if any(r["feature"] == f for r in rows)]
    fig = new_figure((2.5 + 2.2 * len(subjects) * len(features), 4.2))
    axes = fig.subplots(1, len(features), sharey=True, squeeze=False)[0]
    for ax, feature in zip(axes, features, strict=True):
        series, errs = {}, {}
        for q in ("dce", "tce", "delta"):
            vals, err = [], []
            for s in subjects:
                e = by.get((s, feature), {}).get(q, {})
                v = e.get("value")
                vals.append(np.nan if v is None else v)
                lo, hi = e.get("ci_low"), e.get("ci_high")
                err.append((0, 0) if lo is None or v is None else (v - lo, hi - v))
            series[q.upper() if q != "delta" else "TCE−DCE"] = vals
            errs[q.upper() if q != "delta" else "TCE−DCE"] = err
        grouped_bars(ax, subjects, series, errs)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(FEATURE_TITLES[feature], fontsize=10)
        ax.tick_params(axis="x", labelsize=8)
    axes[0].set_ylabel("share of pairs whose prediction changed")
    axes[0].legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- examples


def _short(label: str | None) -> str:
    return {"entailment": "E", "non-entailment": "N"}.get(label or "", DASH)


def _inputs(prefix: str) -> Callable[[pd.DataFrame], list[str]]:
    """Each row's input whose columns start with ``prefix`` (``original_``: the base pair's;
    ``""``: the alternative's), with its gold label and the prediction."""

    def texts(rows: pd.DataFrame) -> list[str]:
        return [
            f"{p} ⇒ {h} ({_short(gold)}, {_short(pred)})"
            for p, h, gold, pred in zip(
                *(rows[prefix + key] for key in ("premise", "hypothesis", "gold", "prediction")),
                strict=True,
            )
        ]

    return texts


# "behaved as it should": the prediction changed on a label-changing pair or stayed on a
# label-preserving one
EXAMPLE_COLUMNS = (
    ExampleColumn("subject"),
    ExampleColumn("set"),
    ExampleColumn(
        "original", "base premise ⇒ hypothesis (gold, prediction)", True, _inputs("original_")
    ),
    ExampleColumn(
        "alternative", "alternative premise ⇒ hypothesis (gold, prediction)", True, _inputs("")
    ),
    ExampleColumn("correct", "behaved as it should", values=expectation_met),
)


def _lead(metrics: Mapping[str, Any]) -> str:
    options = metrics.get("options") or {}
    words = ", ".join(split_label_words(options.get("label_words", "")))
    return (
        f"Seed set of {options.get('bases', DASH)} base examples. Language models answer "
        f"with the label words {words} after the prompt template (calibration: "
        f"{options.get('calibration', 'none')}); {_DECIDED[options.get('decision', 'threshold')]}"
    )


_DECIDED = {
    "threshold": "NLI classifiers' neutral and contradiction are grouped as non-entailment "
    "(entailment iff p(entailment) > 1/2).",
    "argmax": "NLI classifiers predict entailment iff it is their top class (decision=argmax, "
    "the method's rule); p(entailment) is then the entailment class against the strongest "
    "other class.",
}


class NaturalLogicReport(ReportView):
    summary_title = "TCE and DCE of context and word-pair interventions"
    table_makers = (DATA_READ, SET_SIZES, EFFECTS, ranking_table, SUBJECT_DIFFERENCES,
                    NLI_XY_ACCURACY, CHALLENGE_ACCURACY, answer_modes_table)  # fmt: skip
    headline = ("effects",)
    figures = (("effects", "DCE, TCE and TCE−DCE by feature (95% CI)", effects_figure),)
    layout = (
        SectionSpec("sets", "Data and intervention sets", ("data_read", "set_sizes"), lead=_lead),
        SectionSpec("effects", "Causal effects", ("effects", "ranking", "subject_differences")),
        SectionSpec("accuracy", "Accuracy", ("nli_xy_accuracy", "challenge_accuracy")),
        answers.SECTION,
    )
    # a seeded sample of intervention pairs from every set
    example_rows = ExampleRows(
        EXAMPLE_COLUMNS,
        note="E = entailment, N = non-entailment; (gold, prediction) after each input.",
        pool=lambda results: results[results["set"].isin(list(SETS))],
        per="set",
        n=N_EXAMPLES // len(SETS),
        sort=("set", "pair_id"),
    )
