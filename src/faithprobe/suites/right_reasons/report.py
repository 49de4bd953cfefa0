"""The report of the ``right-reasons`` suite, after Ray Choudhury, Rogers & Augenstein:
competence on the original questions, whether the answers follow the counterfactual, F1
and EM on the original and the counterfactual per dataset and variant with the paired test,
the alignment of counterfactual and saliency evidence beside its random-partition control,
and what the selection and the interventions dropped. Every number is read from
``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import pandas as pd

from faithprobe.report.example_columns import ExampleColumn, answers_text
from faithprobe.report.table_spec import (
    Cell,
    TableSpec,
    count,
    general,
    interval,
    or_dash,
    percent,
    value,
    without_units,
)
from faithprobe.report.tables import (
    Ordering,
    Table,
    fmt_count,
    fmt_general,
    fmt_percent,
    is_missing,
    order_rows,
    subject_order,
)
from faithprobe.report.views import ExampleRows, ReportView, SectionSpec, answered, percent_text

# Reading order of the rows of metrics.json: by metric (alphabetically), then subject.
ORDERING = Ordering(columns=("metric", "subject"))


def _og_cf(by: Mapping[tuple[str, str], Mapping[str, Any]], metric: str) -> dict[str, str]:
    """The original's and the counterfactual's ``metric`` cells of a row, from its records
    by (metric, side)."""
    return {f"{side} {metric.upper()}": percent_text(by.get((metric, side), {}))
            for side in ("og", "cf")}  # fmt: skip


def _og_and_cf(
    groups: Sequence[str], shown: Sequence[str], tested: bool = False
) -> Callable[[pd.DataFrame, Mapping[str, Any]], pd.DataFrame]:
    """The display of a table of scores: a row per ``groups``, the original's and the
    counterfactual's cells of each metric ``shown`` and the first one's n; where ``tested``,
    each metric's p from ``metrics["tests"]`` and the passages too."""

    def display(data: pd.DataFrame, metrics: Mapping[str, Any]) -> pd.DataFrame:
        tests = {
            (t["subject"], t["dataset"], t["variant"], t["metric"]): t
            for t in metrics.get("tests") or []
        }
        rows = []
        for key, g in data.groupby(list(groups)):
            by = {(r["metric"], r["side"]): r for r in g.to_dict("records")}
            row = dict(zip(groups, key, strict=True))
            for metric in shown:
                row.update(_og_cf(by, metric))
                if tested:
                    p = tests.get((*key, metric), {}).get("p_value")
                    row[f"p ({metric.upper()})"] = fmt_general(p, ".2g")
            first = by[(shown[0], "og")]
            row["n"] = fmt_count(first["n"])
            if tested:
                row["passages"] = fmt_count(first["n_clusters"])
            rows.append(row)
        return order_rows(pd.DataFrame(rows), subject_order(metrics), ORDERING)

    return display


SCORES = TableSpec(
    "scores",
    "F1 and EM on the original (og) and the counterfactual (cf)",
    ordering=None,
    display=_og_and_cf(("subject", "dataset", "variant"), ("f1", "em"), tested=True),
    note="Percent with 95% intervals (bootstrap resampling passages); each side against "
    "its own gold (the counterfactual's is the other entity or the new person). p: "
    "Wilcoxon signed-rank test of og vs cf over per-passage means.",
)
# EM and F1 of the original and the counterfactual per comparative and antonym.
COMPARATIVES = TableSpec(
    "comparatives",
    "EM and F1 per comparative: the original's word and the counterfactual's",
    ordering=None,
    display=_og_and_cf(("subject", "dataset", "variant", "comparative", "antonym"), ("em", "f1")),
    note="Comparison pairs only, grouped by the original question's comparative and the "
    "word the counterfactual put in its place. Percent with 95% intervals (bootstrap "
    "resampling passages); each side against its own gold.",
)


def _competence_note(records: Sequence[Mapping[str, Any]]) -> str:
    margin = fmt_percent(records[0]["margin"], "g")
    return (
        "Each original question once (whatever its counterfactuals). Best constant "
        "answer: the gold answer right on most of the same questions. Excess: EM minus the "
        "constant's, paired over questions, bootstrap over passages, with the one-sided test "
        f"of an excess above {margin} points; a model that is not competent is not "
        "assessable on the card."
    )


def _rate(name: str) -> Cell:
    """``name`` of a record (a share with ``<name>_ci_low``/``_ci_high``) in percent."""
    return interval(name, fmt_percent, blank=is_missing)


# EM on the original questions against the best constant answer (the card's competence).
COMPETENCE = TableSpec(
    "competence",
    "Competence: exact match on the original questions against the best constant answer",
    {
        "subject": value("subject"),
        "EM on the originals (%)": percent(),
        "best constant answer": or_dash("baseline_answer"),
        "its EM (%)": lambda r: fmt_percent(r["baseline"]),
        "excess (%)": _rate("excess"),
        "p (excess > margin)": general("p_value", ".2g"),
        "competent": general("competent"),
        "questions": count("n"),
        "passages": count("n_clusters"),
    },
    data_as_written=True,
    note=_competence_note,
)


FOLLOWS = TableSpec(
    "follows",
    "Do the answers follow the counterfactual?",
    {
        "subject": value("subject"),
        "dataset": value("dataset"),
        "variant": value("variant"),
        "cf answered with its gold (%)": lambda r: fmt_percent(r["agrees"]),
        "original's answer kept (%)": lambda r: fmt_percent(r["keeps"]),
        "follows (%)": percent(),
        "pairs": count("n"),
        "passages": count("n_clusters"),
    },
    data_as_written=True,
    trim=without_units,
    note="Follows: the share of counterfactuals answered with their own gold (exact "
    "match) minus the share answered with the original's answer again, paired over "
    "pairs, 95% bootstrap interval over passages (the card's effect). A reader scores "
    "100; a model giving the same answer to both inputs at most 0, one picking either "
    "entity at random 0.",
)


ALIGNMENT = TableSpec(
    "alignment",
    "Alignment of counterfactual and saliency evidence",
    {
        "model": value("model"),
        "dataset": value("dataset"),
        "variant": value("variant"),
        "method": value("method"),
        "aligned (%)": _rate("aligned"),
        "random control (%)": _rate("control"),
        "aligned − control (%)": _rate("excess"),
        "p (aligned)": general("alignment_p", ".2g"),
        "significant (%)": _rate("significant"),
        "random significant (%)": _rate("control_significant"),
        "p (significant)": general("significance_p", ".2g"),
        "both correct": lambda r: f"{r['n']} of {r['instances']}",
    },
    ordering=None,
    trim=without_units,
    note="Aligned: among the instances whose original and counterfactual were both "
    "answered exactly right ('both correct', the method's denominator, the same for "
    "every method), the share whose positive partition is significantly more salient "
    "than the negative one (Student's one-tailed t-test, alpha 0.05, saliency of the "
    "original). Random control: the same share with partitions of the same sizes drawn "
    "at random; aligned − control is the card's effect, with Newcombe's paired "
    "interval. Significant: the partition test passed, over every instance with "
    "saliency, whatever the answers; random significant is the method's sanity check -- "
    "about 5% if the test is calibrated, and a rate as high as the real partitions' says "
    "the heuristic partition is no more salient than chance. p: exact McNemar test of "
    "real vs random, paired by instance. Methods: ig-l2/ig-l1/ig-dot are Integrated "
    "Gradients with token attributions summarised by the L2 norm, the L1 norm or the "
    "signed sum (dot product) over embedding dimensions. Wilson 95% intervals.",
)


CONSISTENCY = TableSpec(
    "consistency",
    "Answer consistency: og and cf answered the same",
    {
        "subject": value("subject"),
        "dataset": value("dataset"),
        "variant": value("variant"),
        "same answer (%)": percent(),
        "n": count("n"),
    },
    data_as_written=True,
    note="Share of pairs whose original and counterfactual got the same (normalised) "
    "answer, with a 95% bootstrap interval over passages. The counterfactual's gold is "
    "the other entity (or the new person), so a consistent pair has at most one side "
    "right: a high rate means the model ignores the change, and og and cf scores then "
    "stay near each other.",
)


def _counts(metrics: Mapping[str, Any], key: str, name: str, title: str) -> Table | None:
    data = pd.DataFrame(metrics.get(key) or [])
    if data.empty:
        return None
    display = data.copy()
    for col in ("count", "items", "answered", "dropped", "cf_by_rule", "cf_imported"):
        if col in display:
            display[col] = display[col].map(lambda v: "" if pd.isna(v) else fmt_count(int(v)))
    if "resolver" in display:
        display["resolver"] = display["resolver"].fillna("")
    return Table(name, title, data, display)


def _both_right(rows: pd.DataFrame) -> pd.Series:
    """Whether the original and the counterfactual were both answered exactly right."""
    return (rows["og_em"] == 1) & (rows["cf_em"] == 1)


EXAMPLE_COLUMNS = (
    ExampleColumn("subject"),
    ExampleColumn("variant"),
    ExampleColumn("question", "original question", True),
    ExampleColumn("og_prediction", "og answer", True),
    ExampleColumn("cf_question", "counterfactual question", True),
    ExampleColumn("cf_gold", "cf gold", True, lambda rows: rows["cf_answers"].map(answers_text)),
    ExampleColumn("cf_prediction", "cf answer", True),
    ExampleColumn("correct", "both right", values=_both_right),
)


class RightReasonsReport(ReportView):
    summary_title = "F1 and EM before and after the counterfactual"
    table_makers = (
        COMPETENCE,
        FOLLOWS,
        SCORES,
        CONSISTENCY,
        COMPARATIVES,
        ALIGNMENT,
        partial(_counts, key="sizes", name="sizes", title="Pairs per dataset and variant"),
        partial(_counts, key="drops", name="drops", title="Variants dropped, by reason"),
        partial(_counts, key="selection", name="selection",
                title="Questions the selection rejected"),
    )  # fmt: skip
    headline = ("scores",)
    layout = (
        SectionSpec("competence", "Competence", ("competence",)),
        SectionSpec(
            "scores",
            "Counterfactuals",
            ("follows", "scores", "consistency", "comparatives"),
            lead="CF = comparative swapped for its antonym (comparisons) or a sentence making a "
            "new person the answer (coreference); CF-ood = an out-of-distribution paraphrase "
            "of the antonym.",
        ),
        SectionSpec("alignment", "Saliency and alignment", ("alignment",)),
        SectionSpec("drops", "Selection and dropped variants", ("sizes", "drops", "selection")),
    )
    # a seeded sample of answered pairs
    example_rows = ExampleRows(
        EXAMPLE_COLUMNS,
        note="Shaded rows: the original or the counterfactual was not answered exactly right.",
        pool=answered,
        ordering=ORDERING,
    )
