"""The report of the ``right-reasons`` suite, after Ray Choudhury, Rogers & Augenstein:
competence on the original questions, whether the answers follow the counterfactual, F1
and EM on the original and the counterfactual per dataset and variant with the paired test,
the alignment of counterfactual and saliency evidence beside its random-partition control,
and what the selection and the interventions dropped. Every number is read from
``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import pandas as pd

from faithprobe.report.tables import (
    DASH,
    Ordering,
    Table,
    fmt_count,
    fmt_general,
    fmt_percent,
    order_rows,
    subject_order,
)
from faithprobe.report.views import ExampleRows, ReportView, SectionSpec, answered, percent_text

N_EXAMPLES = 24
# Reading order of the rows of metrics.json: by metric (alphabetically), then subject.
ORDERING = Ordering(columns=("metric", "subject"))


def _og_cf(by: Mapping[tuple[str, str], Mapping[str, Any]], metric: str) -> dict[str, str]:
    """The original's and the counterfactual's ``metric`` cells of a row, from its records
    by (metric, side)."""
    return {f"{side} {metric.upper()}": percent_text(by.get((metric, side), {}))
            for side in ("og", "cf")}  # fmt: skip


def scores_table(metrics: Mapping[str, Any]) -> Table | None:
    data = pd.DataFrame(metrics.get("scores") or [])
    if data.empty:
        return None
    tests = {
        (t["subject"], t["dataset"], t["variant"], t["metric"]): t
        for t in metrics.get("tests") or []
    }
    rows = []
    for (subject, dataset, variant), g in data.groupby(["subject", "dataset", "variant"]):
        by = {(r["metric"], r["side"]): r for r in g.to_dict("records")}
        row = {"subject": subject, "dataset": dataset, "variant": variant}
        for metric in ("f1", "em"):
            row.update(_og_cf(by, metric))
            row[f"p ({metric.upper()})"] = fmt_general(
                tests.get((subject, dataset, variant, metric), {}).get("p_value"), ".2g"
            )
        row["n"] = fmt_count(by[("f1", "og")]["n"])
        row["passages"] = fmt_count(by[("f1", "og")]["n_clusters"])
        rows.append(row)
    return Table(
        "scores",
        "F1 and EM on the original (og) and the counterfactual (cf)",
        data,
        order_rows(pd.DataFrame(rows), subject_order(metrics), ORDERING),
        note="Percent with 95% intervals (bootstrap resampling passages); each side against "
        "its own gold (the counterfactual's is the other entity or the new person). p: "
        "Wilcoxon signed-rank test of og vs cf over per-passage means.",
    )


def comparatives_table(metrics: Mapping[str, Any]) -> Table | None:
    """EM and F1 of the original and the counterfactual per comparative and antonym."""
    data = pd.DataFrame(metrics.get("comparatives") or [])
    if data.empty:
        return None
    rows = []
    groups = ["subject", "dataset", "variant", "comparative", "antonym"]
    for key, g in data.groupby(groups, sort=True):
        by = {(r["metric"], r["side"]): r for r in g.to_dict("records")}
        row = dict(zip(groups, key, strict=True))
        for metric in ("em", "f1"):
            row.update(_og_cf(by, metric))
        row["n"] = fmt_count(by[("em", "og")]["n"])
        rows.append(row)
    return Table(
        "comparatives",
        "EM and F1 per comparative: the original's word and the counterfactual's",
        data,
        order_rows(pd.DataFrame(rows), subject_order(metrics), ORDERING),
        note="Comparison pairs only, grouped by the original question's comparative and the "
        "word the counterfactual put in its place. Percent with 95% intervals (bootstrap "
        "resampling passages); each side against its own gold.",
    )


def competence_table(metrics: Mapping[str, Any]) -> Table | None:
    """EM on the original questions against the best constant answer (the card's
    competence)."""
    data = pd.DataFrame(metrics.get("competence") or [])
    if data.empty:
        return None
    records = data.to_dict("records")
    display = pd.DataFrame(
        {
            "subject": data["subject"],
            "EM on the originals (%)": [percent_text(r) for r in records],
            "best constant answer": data["baseline_answer"].fillna(DASH),
            "its EM (%)": data["baseline"].map(fmt_percent),
            "excess (%)": [_rate(r, "excess") for r in records],
            "p (excess > margin)": data["p_value"].map(lambda p: fmt_general(p, ".2g")),
            "competent": data["competent"].map(fmt_general),
            "questions": data["n"].map(fmt_count),
            "passages": data["n_clusters"].map(fmt_count),
        }
    )
    margin = fmt_percent(data["margin"].iloc[0], "g")
    return Table(
        "competence",
        "Competence: exact match on the original questions against the best constant answer",
        data,
        order_rows(display, subject_order(metrics), ORDERING),
        note="Each original question once (whatever its counterfactuals). Best constant "
        "answer: the gold answer right on most of the same questions. Excess: EM minus the "
        "constant's, paired over questions, bootstrap over passages, with the one-sided test "
        f"of an excess above {margin} points; a model that is not competent is not "
        "assessable on the card.",
    )


def _records(metrics: Mapping[str, Any], key: str) -> pd.DataFrame:
    """``metrics[key]`` as a frame without the per-unit numbers (``units``: for paired
    comparisons between models, not for a table)."""
    return pd.DataFrame(metrics.get(key) or []).drop(columns="units", errors="ignore")


def follows_table(metrics: Mapping[str, Any]) -> Table | None:
    data = _records(metrics, "follows")
    if data.empty:
        return None
    display = pd.DataFrame(
        {
            "subject": data["subject"],
            "dataset": data["dataset"],
            "variant": data["variant"],
            "cf answered with its gold (%)": data["agrees"].map(fmt_percent),
            "original's answer kept (%)": data["keeps"].map(fmt_percent),
            "follows (%)": [percent_text(r) for r in data.to_dict("records")],
            "pairs": data["n"].map(fmt_count),
            "passages": data["n_clusters"].map(fmt_count),
        }
    )
    return Table(
        "follows",
        "Do the answers follow the counterfactual?",
        data,
        order_rows(display, subject_order(metrics), ORDERING),
        note="Follows: the share of counterfactuals answered with their own gold (exact "
        "match) minus the share answered with the original's answer again, paired over "
        "pairs, 95% bootstrap interval over passages (the card's effect). A reader scores "
        "100; a model giving the same answer to both inputs at most 0, one picking either "
        "entity at random 0.",
    )


def _rate(record: Mapping[str, Any], name: str) -> str:
    """``name`` of a record (a share with ``<name>_ci_low``/``_ci_high``)."""
    return percent_text(
        {"value": record[name], "ci_low": record[f"{name}_ci_low"],
         "ci_high": record[f"{name}_ci_high"]}
    )  # fmt: skip


def alignment_table(metrics: Mapping[str, Any]) -> Table | None:
    data = _records(metrics, "alignment")
    if data.empty:
        return None
    records = data.to_dict("records")
    display = pd.DataFrame(
        {
            "model": data["model"],
            "dataset": data["dataset"],
            "variant": data["variant"],
            "method": data["method"],
            "aligned (%)": [_rate(r, "aligned") for r in records],
            "random control (%)": [_rate(r, "control") for r in records],
            "aligned − control (%)": [_rate(r, "excess") for r in records],
            "p (aligned)": data["alignment_p"].map(lambda p: fmt_general(p, ".2g")),
            "significant (%)": [_rate(r, "significant") for r in records],
            "random significant (%)": [_rate(r, "control_significant") for r in records],
            "p (significant)": data["significance_p"].map(lambda p: fmt_general(p, ".2g")),
            "both correct": [f"{r['n']} of {r['instances']}" for r in records],
        }
    )
    return Table(
        "alignment",
        "Alignment of counterfactual and saliency evidence",
        data,
        display,
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


def consistency_table(metrics: Mapping[str, Any]) -> Table | None:
    data = pd.DataFrame(metrics.get("consistency") or [])
    if data.empty:
        return None
    display = pd.DataFrame(
        {
            "subject": data["subject"],
            "dataset": data["dataset"],
            "variant": data["variant"],
            "same answer (%)": [percent_text(r) for r in data.to_dict("records")],
            "n": data["n"].map(fmt_count),
        }
    )
    return Table(
        "consistency",
        "Answer consistency: og and cf answered the same",
        data,
        order_rows(display, subject_order(metrics), ORDERING),
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


EXAMPLE_COLUMNS = [
    ("subject", "subject", False),
    ("variant", "variant", False),
    ("question", "original question", True),
    ("og_prediction", "og answer", True),
    ("cf_question", "counterfactual question", True),
    ("cf_gold", "cf gold", True),
    ("cf_prediction", "cf answer", True),
    ("correct", "both right", False),
]


def _example_frame(rows: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "subject": rows["subject"],
            "variant": rows["variant"],
            "question": rows["question"],
            "og_prediction": rows["og_prediction"],
            "cf_question": rows["cf_question"],
            "cf_gold": rows["cf_answers"].map(lambda a: " | ".join(dict.fromkeys(a))),
            "cf_prediction": rows["cf_prediction"],
            "correct": (rows["og_em"] == 1) & (rows["cf_em"] == 1),
        }
    )


class RightReasonsReport(ReportView):
    summary_title = "F1 and EM before and after the counterfactual"
    table_makers = (
        competence_table,
        follows_table,
        scores_table,
        consistency_table,
        comparatives_table,
        alignment_table,
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
        _example_frame,
        note="Shaded rows: the original or the counterfactual was not answered exactly right.",
        pool=answered,
        n=N_EXAMPLES,
        ordering=ORDERING,
    )
