"""The report of the ``confidence-shift`` suite, after the tables of Shen & Kejriwal (2023):
original and pseudo-accuracy per probe with tests, shift-type counts, confidence variance
and the confidence of the (pseudo-)correct choice, the MaxProb detector, the method's
benchmark irregularities (answer positions, choice length and prompt overlap, word
frequencies, and the shortcuts they allow), and our view of the instances whose confidence
does not drop. Every number is read from ``metrics.json``; nothing is estimated here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from faithprobe.report import answer_modes as answers
from faithprobe.report.answer_modes import answer_modes_table
from faithprobe.report.example_columns import ExampleColumn
from faithprobe.report.figures import grouped_bars, new_figure
from faithprobe.report.table_spec import (
    Cell,
    TableSpec,
    count,
    estimate,
    general,
    interval,
    three_decimals,
    value,
    without_units,
)
from faithprobe.report.tables import (
    BY_SUBJECT,
    DASH,
    Table,
    fmt_count,
    fmt_general,
    fmt_percent,
    interval_text,
    subject_order,
)
from faithprobe.report.views import (
    ExampleRows,
    ReportView,
    SectionSpec,
    f3,
    metric_frame,
)
from faithprobe.suites.confidence_shift import NORMALISATIONS, PROBE_TITLES
from faithprobe.suites.confidence_shift.benchmark_irregularity import CHOICE_FEATURES
from faithprobe.suites.confidence_shift.kept_confidence import FEATURES
from faithprobe.suites.confidence_shift.metrics import SHIFT_TYPES

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn (new_figure)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SHIFT_COLORS = {
    "random-like": "#2ca02c",
    "hybrid": "#bcbd22",
    "conservative": "#d62728",
    "deviated": "#9467bd",
    "undetermined": "#7f7f7f",
}


def _p(test: Mapping[str, Any] | None) -> str:
    return fmt_general((test or {}).get("p_value"), ".3g")


def _probe(name: str) -> str:
    return PROBE_TITLES.get(name, name)


def _frame(metrics: Mapping[str, Any], key: str) -> pd.DataFrame:
    """The rows ``metrics[key]`` as a flat frame, without the headline effects' units (their
    per-instance values are for the card's paired comparisons, not for a table)."""
    data = metric_frame(metrics, key, BY_SUBJECT)
    return data.drop(columns=[c for c in data.columns if "units" in c.split(".")])


def summary(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """One row per subject × probe: original accuracy, pseudo-accuracy, tests, MaxProb."""
    acc = {r["subject"]: r for r in metrics.get("original_accuracy", [])}
    detect = {(r["subject"], r["probe"]): r for r in metrics.get("maxprob_detection", [])}
    shifts = {(r["subject"], r["probe"]): r for r in metrics.get("shift_types", [])}
    rows = []
    for r in metrics.get("pseudo_accuracy", []):
        key = (r["subject"], r["probe"])
        a = acc.get(r["subject"], {})
        s = shifts.get(key, {})
        d = detect.get(key, {})
        rows.append(
            {
                "subject": r["subject"],
                "probe": _probe(r["probe"]),
                "original acc.": f3(a.get("value")),
                "pseudo-acc. ± SE": f"{f3(r.get('value'))} ± {f3(r.get('se'))}",
                "1/n": f3(r.get("agnostic")),
                "p vs 1/n": _p(r.get("vs_agnostic")),
                "p vs original": _p(r.get("vs_original")),
                "random-like": _share(s, "random-like"),
                "conservative": _share(s, "conservative"),
                "MaxProb detection": f3(d.get("value")),
            }
        )
    return pd.DataFrame(rows)


def _share(row: Mapping[str, Any], kind: str) -> str:
    share = row.get(f"{kind}_share")
    return DASH if share is None else f"{fmt_percent(share)}%"


ORIGINAL_ACCURACY = TableSpec(
    "original_accuracy",
    "Original accuracy (unperturbed instances)",
    {
        "subject": value("subject"),
        "accuracy ± SE [95% CI]": estimate(),
        "instances": count("n"),
        "agnostic 1/n": three_decimals("agnostic"),
    },
    trim=without_units,
    note="A tie at the top shares its credit. Interval: bootstrap over instances "
    "(Wilson where every instance agrees).",
)


def _competence_note(records: Sequence[Mapping[str, Any]]) -> str:
    return (
        "The best constant answer is always the same position, or always the same text "
        "where choice texts recur across instances; a model whose excess over it is not "
        f"above {fmt_general(records[0].get('margin'))} (one-sided test at 5%, paired "
        "bootstrap over instances) is not assessable on the card."
    )


# Accuracy on the original instances against the best constant answer (the card's
# competence).
COMPETENCE = TableSpec(
    "competence",
    "Competence: accuracy on the original instances against the best constant answer",
    {
        "subject": value("subject"),
        "accuracy [95% CI]": estimate(se=False),
        "best constant": lambda r: f"{r['baseline_answer']}: {f3(r['baseline'])}",
        "excess [95% CI]": interval("excess"),
        "p (excess > margin)": general("p_value"),
        "competent": lambda r: "yes" if r["competent"] else "no",
        "instances": count("n"),
    },
    trim=without_units,
    note=_competence_note,
)


def _normalisation_columns(metrics: Mapping[str, Any]) -> dict[str, Cell]:
    chosen = (metrics.get("options") or {}).get("normalisation")
    return {
        "subject": value("subject"),
        "normalisation": lambda r: (
            f"{r['normalisation']}{' (used)' if r['normalisation'] == chosen else ''}"
        ),
        "choice score": lambda r: NORMALISATIONS.get(r["normalisation"]),
        "accuracy [95% CI]": interval(),
        "instances": count("n"),
    }


NORMALISATION = TableSpec(
    "accuracy_by_normalisation",
    "Original accuracy under each choice-score normalisation",
    _normalisation_columns,
    trim=without_units,
    note="The same log-probabilities, the top choice picked by each score: 'sum' is "
    "lm-eval's acc, 'per-char' its acc_norm (sum / characters), 'per-byte' its acc_bytes; "
    "'per-token' (the mean per token) depends on the tokenizer and is none of them. "
    "Read it to compare with a published acc or acc_norm; the run's confidences use the "
    "normalisation marked 'used'. Wilson intervals over instances.",
)


ABSTENTIONS = TableSpec(
    "abstentions",
    "Replies naming no choice (models answering by letter)",
    {
        "subject": value("subject"),
        "input": lambda r: "original" if r["probe"] == "original" else _probe(r["probe"]),
        "abstained [95% CI]": lambda r: (
            _percent_interval(r) if pd.notna(r["ci_low"]) else f"{fmt_percent(r['value'])}%"
        ),
        "replies": count("n"),
        "instances": count("n_instances"),
    },
    trim=without_units,
    note="Models that cannot score choices (chat-only endpoints, or -o answer=letter) "
    "are shown the choices as A/B/C… and asked for a letter; a reply naming none is an "
    "abstention (counted as wrong in the accuracies). Where the endpoint gives the "
    "letters' top_logprobs, their probabilities at the letter's position, renormalised "
    "over the letters, are the model's confidences and it enters the shift, confidence "
    "and MaxProb tables; otherwise those tables leave it out.",
)


def _percent_interval(r: Mapping[str, Any], key: str = "value") -> str:
    """``54.3% [48.7, 59.9]``: the share ``r[key]`` and its interval, in percent."""
    return interval_text(r[key], r["ci_low"], r["ci_high"], fmt_percent, unit="%", blank=None)


def _trials(r: Mapping[str, Any]) -> str:
    """The estimate of each trial."""
    return ", ".join(f3(v) for v in r.get("trial_values") or [])


def probe(r: Mapping[str, Any]) -> str:
    return _probe(r["probe"])


PSEUDO_ACCURACY = TableSpec(
    "pseudo_accuracy",
    "Pseudo-accuracy: the pseudo-correct choice gets the highest confidence",
    {
        "subject": value("subject"),
        "probe": probe,
        "pseudo-accuracy ± SE [95% CI]": estimate(),
        "− 1/n [95% CI]": interval("excess", part=True),
        "per trial": _trials,
        "1/n": three_decimals("agnostic"),
        "diff. vs 1/n": three_decimals("vs_agnostic.difference"),
        "p vs 1/n": general("vs_agnostic.p_value"),
        "original acc.": three_decimals("original_accuracy"),
        "diff. vs original": three_decimals("vs_original.difference"),
        "p vs original": general("vs_original.p_value"),
        "instances": count("n"),
    },
    trim=without_units,
    note="Per-instance mean over trials, then mean over instances (a tie at the top "
    "shares its credit); SE over instances. − 1/n: paired bootstrap over instances. "
    "Tests: t-tests over instances against the agnostic 1/n and (paired) against "
    "original accuracy.",
)


def shift_table(metrics: Mapping[str, Any]) -> Table | None:
    data = _frame(metrics, "shift_types")
    if data.empty:
        return None
    kinds = [k for k in SHIFT_TYPES if k != "undetermined" or data["undetermined"].sum() > 0]
    display = pd.DataFrame(
        {
            "subject": data["subject"],
            "probe": data["probe"].map(_probe),
            **{
                k: [f"{int(r[k])} ({_share(r, k)})" for r in data.to_dict("records")] for k in kinds
            },
            "instances": data["n"].map(fmt_count),
            "distinct trials": data["distinct_trials"].map(lambda x: fmt_general(x, ".2f")),
            "samples per test (df)": [
                f"{fmt_general(r.get('samples_per_test'), '.3g')} "
                f"({fmt_general(r.get('df'), '.3g')})"
                for r in data.to_dict("records")
            ],
        }
    )
    alpha = data["alpha"].iloc[0]
    return Table(
        "shift_types",
        "Shift types of instances",
        data,
        display,
        note=f"t-tests at α = {alpha:g} on the incorrect choices' confidences: after vs "
        "before (paired) and after vs 1/n. Random-like: moved, now near 1/n; conservative: "
        "did not move, away from 1/n; hybrid: neither test rejects; deviated: both reject. "
        "Trials with an identical input count once, so a test has (choices - 1) × distinct "
        "trials samples: read a probe with df = 1 (No-Question: one distinct input) as "
        "nearly untestable per instance, where 'hybrid' says little; the pooled table "
        "below decides over instances instead.",
    )


def _pooled_note(records: Sequence[Mapping[str, Any]]) -> str:
    alpha = records[0]["alpha"]
    return (
        f"The same two tests at α = {alpha:g}, run over instances: each instance's mean "
        "change of its incorrect choices' confidences (after − before) and their mean minus "
        "1/n. Read it as what the probe does to the model as a whole; unlike the per-instance "
        "types it has instances − 1 degrees of freedom even for No-Question."
    )


POOLED_SHIFTS = TableSpec(
    "pooled_shifts",
    "Shift type pooled over instances (one decision per probe)",
    {
        "subject": value("subject"),
        "probe": probe,
        "shift type": value("shift_type"),
        "mean change": three_decimals("change.difference"),
        "p (change)": general("change.p_value"),
        "mean − 1/n": three_decimals("vs_agnostic.difference"),
        "p (vs 1/n)": general("vs_agnostic.p_value"),
        "instances (df)": lambda r: f"{fmt_count(r['n_instances'])} ({fmt_count(r['df'])})",
    },
    trim=without_units,
    note=_pooled_note,
)


PROFILE = TableSpec(
    "confidence_profile",
    "Variance of the choice confidences and confidence of the (pseudo-)correct choice",
    {
        "subject": value("subject"),
        "probe": probe,
        "variance before": estimate("variance_before"),
        "variance after": estimate("variance_after"),
        "p (variance)": lambda r: _p(r["variance_change"]),
        "conf. correct before": estimate("confidence_before"),
        "conf. pseudo-correct after": estimate("confidence_after"),
        "p (confidence)": lambda r: _p(r["confidence_change"]),
    },
    written=True,
    note="Means over instances ± SE [95% CI]; p: paired t-test after vs before. "
    "For No-Right-Answer the pseudo-correct choice is the donor answer in the old "
    "right answer's slot.",
)


SPREAD = TableSpec(
    "confidence_spread",
    "Spread of the choice confidences (RMS distance from 1/n)",
    {
        "subject": value("subject"),
        "probe": probe,
        "spread before [95% CI]": interval("before", part=True),
        "spread after [95% CI]": interval("after", part=True),
        "after − before [95% CI]": interval("change", part=True),
        "instances": count("n_instances"),
    },
    trim=without_units,
    note="The SD of an input's choice confidences, the square root of the method's "
    "variance: 0 for the agnostic model. Per trial, averaged per instance; bootstrap "
    "over instances (after − before: paired). After No-Right-Answer it says where the "
    "confidence freed by removing the right answer went: spread evenly (near 0, "
    "random-like), or kept on the donor in the right answer's slot (conservative) or "
    "moved onto the old wrong choices (deviated), both of which leave a spread.",
)


CONTRASTS = TableSpec(
    "probe_contrasts",
    "No-Question vs Wrong-Question: confidence of the pseudo-correct choice",
    {
        "subject": value("subject"),
        "probes": lambda r: f"{_probe(r['first'])} vs {_probe(r['second'])}",
        "conf. pseudo-correct, first": estimate("first_confidence"),
        "conf. pseudo-correct, second": estimate("second_confidence"),
        "difference": lambda r: f3(r["difference"]["difference"]),
        "p": lambda r: _p(r["difference"]),
        "instances": count("n_instances"),
    },
    written=True,
    note="Per-instance mean over trials, paired over the instances that have both probes; "
    "p: paired t-test of first − second (the method's Table 2, column 5). A positive "
    "difference means the model keeps the old answer more confidently with no question "
    "than with an unrelated one.",
)


MAXPROB = TableSpec(
    "maxprob_detection",
    "MaxProb detector: is an input perturbed?",
    {
        "subject": value("subject"),
        "probe": probe,
        "detection accuracy [95% CI]": interval(),
        "per trial": _trials,
        "threshold (mean)": lambda r: f3(np.mean(r.get("thresholds") or [np.nan])),
        "p vs 50%": general("vs_chance.p_value"),
        "test instances": count("n_instances"),
    },
    trim=without_units,
    note="Threshold: mean MaxProb over the first half's original and perturbed inputs, "
    "per trial; accuracy of 'MaxProb above threshold ⇒ original' on the second half "
    "(balanced, chance 0.5): each instance's share of right calls over its trials, "
    "averaged over instances; bootstrap over them, thresholds fixed.",
)


# Per probe, the instances whose confidence did not drop under it (our view).
KEPT_CONFIDENCE = TableSpec(
    "kept_confidence",
    "Instances that keep their confidence when no choice is correct (ours)",
    {
        "subject": value("subject"),
        "probe": probe,
        "kept [95% CI]": lambda r: f"{int(r['kept'])} ({_percent_interval(r)})",
        "rose": count("rose"),
        "mean change (all)": three_decimals("mean_change"),
        "mean change (kept)": three_decimals("kept_mean_change"),
        "category χ² (df), p (Holm)": lambda r: _category_test(r),
        "instances": count("n_instances"),
    },
    trim=without_units,
    note="Our instance-level view, not the method's (its analysis is of the benchmark, "
    "above). An instance keeps its confidence under a probe when its confidence (MaxProb, "
    "the top choice confidence; after the probe the mean over trials) is not lower than on "
    "the original input; 'rose': higher. Wilson interval over instances. Category: "
    "chi-square test of independence of the instance's category (rare ones pooled) and "
    "keeping, Holm-adjusted with the feature tests below.",
)


def _category_test(r: Mapping[str, Any]) -> str:
    """``χ² (df), p (p Holm)`` of a flattened kept-confidence row; "–" without one."""
    statistic = r.get("categories.statistic")
    if pd.isna(statistic):
        return DASH
    p, holm = r["categories.p_value"], r["categories.p_holm"]
    return (
        f"{fmt_general(statistic)} ({fmt_count(r['categories.df'])}), "
        f"{fmt_general(p)} ({fmt_general(holm)})"
    )


# Per probe and feature, the instances that kept their confidence against the others.
KEPT_FEATURES = TableSpec(
    "kept_confidence_features",
    "How the instances that keep their confidence differ from the others (ours)",
    {
        "subject": value("subject"),
        "probe": probe,
        "feature": lambda r: FEATURES.get(r["feature"], r["feature"]),
        "kept": three_decimals("kept_mean"),
        "dropped": three_decimals("dropped_mean"),
        "difference [95% CI]": interval("difference", bounds=("ci_low", "ci_high")),
        "p": general("p_value"),
        "p (Holm)": general("p_holm"),
        "instances (kept / dropped)": lambda r: (
            f"{fmt_count(r['n_kept'])} / {fmt_count(r['n_dropped'])}"
        ),
    },
    trim=without_units,
    note="Means of each feature of the original instance over the instances whose "
    "confidence was kept and those whose confidence dropped; difference kept − dropped "
    "with a Welch t interval and Welch's t-test; p (Holm): adjusted over one probe's "
    "features. 'originally correct': the model's accuracy on the original; 'category: X': "
    "the share of instances in category X (Social IQA: the kind of question). MaxProb lies "
    "between 1/n and 1: an instance near 1 can hardly rise, so the instances that keep "
    "their confidence start lower even when the changes are noise.",
)


def _positions_display(data: pd.DataFrame, metrics: Mapping[str, Any]) -> pd.DataFrame:
    """One row per (whose choices, number of choices): each position's share [CI], and the
    chi-square test against uniform."""
    tests = {(t["of"], t["n_choices"]): t for t in metrics.get("benchmark_position_tests") or []}
    rows = []
    for (of, k), group in data.groupby(["of", "n_choices"], sort=False):
        test = tests.get((of, k), {})
        rows.append(
            {
                "choices of": of,
                **{
                    p: _percent_interval(r, "share")
                    for p, r in zip(group["position"], group.to_dict("records"), strict=True)
                },  # fmt: skip
                "uniform": f"{fmt_percent(1 / k)}%",
                "χ² (df), p": f"{fmt_general(test.get('statistic'))} "
                f"({fmt_count(test.get('df'))}), {fmt_general(test.get('p_value'))}",
                "instances": fmt_count(test.get("n")),
            }
        )
    return pd.DataFrame(rows).fillna(DASH)


BENCHMARK_POSITIONS = TableSpec(
    "benchmark_positions",
    "Benchmark irregularities (the method's): answer positions",
    rows="benchmark_positions",
    ordering=None,
    display=_positions_display,
    note="Where the right answers, and each model's picks on the original instances, fall "
    "over the answer positions (Wilson intervals), with a chi-square goodness-of-fit test "
    "against uniform. The method reports Social IQA's right answers as 33.4% A and 33.6% "
    "B, HellaSwag's as 25% each.",
)


BENCHMARK_CHOICES = TableSpec(
    "benchmark_choices",
    "Benchmark irregularities (the method's): the chosen choice against the others",
    {
        "choices of": value("of"),
        "feature": lambda r: CHOICE_FEATURES.get(r["feature"], r["feature"]),
        "chosen [95% CI]": interval("chosen.mean", bounds=("chosen.ci_low", "chosen.ci_high")),
        "others [95% CI]": interval("others.mean", bounds=("others.ci_low", "others.ci_high")),
        "difference [95% CI]": interval("difference", bounds=("ci_low", "ci_high")),
        "p": general("p_value"),
        "instances": count("n"),
    },
    ordering=None,
    note="Per instance the chosen choice (the right answer, or the model's pick) against "
    "the mean of the other choices: length in words, and the share of its words found in "
    "the prompt; means over instances with t intervals, the difference paired over "
    "instances (t interval, paired t-test). The method: the choices its RoBERTa selects on "
    "Social IQA have 3.72 words [3.62, 3.82] against 3.69 for the others, not significant.",
)


BENCHMARK_WORDS = TableSpec(
    "benchmark_word_frequencies",
    "Benchmark irregularities (the method's): correlation of word frequencies",
    {
        "choices of": value("of"),
        "between": value("between"),
        "Pearson r": three_decimals("pearson"),
        "random picks: r [95% of draws]": lambda r: (
            interval_text(r["random_mean"], r["random_low"], r["random_high"], f3)
            if pd.notna(r.get("random_mean"))
            else DASH
        ),
        "words": count("vocabulary"),
        "instances": count("n"),
    },
    ordering=None,
    note="Pearson correlation of the word-frequency distributions of the two sides (every "
    "word of either, counted over the instances). The control: the same correlation when "
    "the choice taken per instance is drawn at random (200 seeded draws: their mean and "
    "the range of 95% of them). Word frequencies follow Zipf's law on any English text, so "
    "r is near 1 whenever the commonest words are shared: read r against the random "
    "picks', not against 0. The method: 0.982 between selected and non-selected choices "
    "on Social IQA, 0.997 on HellaSwag.",
)


BENCHMARK_SHORTCUTS = TableSpec(
    "benchmark_shortcuts",
    "Benchmark irregularities: what a shortcut ignoring the prompt scores",
    {
        "shortcut": value("shortcut"),
        "accuracy [95% CI]": interval(),
        "agnostic 1/n": three_decimals("agnostic"),
        "instances": count("n"),
    },
    ordering=None,
    note="The control for the irregularities above: the accuracy a model reading only the "
    "choices (or the prompt's words, not its meaning) gets on the same instances; a tie at "
    "the top shares its credit. The commonest position is chosen on these instances, so it "
    "is the best constant position. Bootstrap over instances (Wilson where all agree).",
)


def dataset_table(metrics: Mapping[str, Any]) -> Table | None:
    ds = metrics.get("dataset") or {}
    rows = list(ds.get("by_probe") or [])
    if not rows:
        return None
    data = pd.DataFrame(rows)
    display = data.assign(probe=data["probe"].map(_probe))
    choices = ", ".join(f"{n} choices: {k}" for n, k in (ds.get("choices") or {}).items())
    return Table(
        "dataset",
        "Dataset: instances and perturbed inputs per probe",
        data,
        display,
        note=f"{ds.get('n_instances', DASH)} instances ({choices}). Each probe's view counts "
        "its instances; left_out: instances of the run it could not be given, no other "
        "instance of the file qualifying as a donor.",
    )


def summary_table(metrics: Mapping[str, Any]) -> Table:
    return Table(
        "summary",
        "Headline",
        _frame(metrics, "pseudo_accuracy"),
        summary(metrics),
        note="Pseudo-accuracy: share of perturbed instances whose pseudo-correct choice "
        "(the old answer, or the donor answer in its slot) gets the highest confidence; "
        "an agnostic model scores 1/n. Shift types as shares of instances.",
    )


# --------------------------------------------------------------------------- plots


def pseudo_accuracy_figure(metrics: Mapping[str, Any]) -> Figure | None:
    rows = list(metrics.get("pseudo_accuracy") or [])
    if not rows:
        return None
    subjects = subject_order(metrics) or list(dict.fromkeys(r["subject"] for r in rows))
    probes = list(dict.fromkeys(r["probe"] for r in rows))
    by = {(r["subject"], r["probe"]): r for r in rows}
    fig = new_figure((2.2 + 1.6 * len(probes) * max(1, len(subjects)) / 2, 4.2))
    ax = fig.add_subplot()
    values = {s: [by.get((s, p), {}).get("value", np.nan) for p in probes] for s in subjects}
    errs = {
        s: [
            (
                by[(s, p)]["value"] - by[(s, p)]["ci_low"],
                by[(s, p)]["ci_high"] - by[(s, p)]["value"],
            )
            if (s, p) in by and by[(s, p)].get("ci_low") is not None
            else (0, 0)
            for p in probes
        ]
        for s in subjects
    }
    grouped_bars(ax, [_probe(p) for p in probes], values, errs)
    agnostic = np.nanmean([r["agnostic"] for r in rows])
    ax.axhline(agnostic, color="k", ls="--", lw=1, label=f"agnostic 1/n = {agnostic:.2f}")
    for r in metrics.get("original_accuracy", []):
        ax.axhline(r["value"], ls=":", lw=1, color="#555", label=f"original acc. {r['subject']}")
    ax.set_ylim(0, 1)
    ax.set_ylabel("pseudo-accuracy")
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    fig.tight_layout()
    return fig


def _probe_bars(
    metrics: Mapping[str, Any],
    key: str,
    width: tuple[float, float],
    ylabel: str,
    draw: Callable[[Axes, list[str], list[dict]], None],
    **legend: Any,
) -> Figure | None:
    """Bars of the rows ``metrics[key]``, one group per (probe, subject) row, on a 0 to 1
    scale: ``draw`` puts them on the axes; the figure is ``width[0]`` inches wide plus
    ``width[1]`` per row; ``legend``: where the legend goes."""
    rows = list(metrics.get(key) or [])
    if not rows:
        return None
    labels = [f"{_probe(r['probe'])}\n{r['subject']}" for r in rows]
    fig = new_figure((width[0] + width[1] * len(rows), 4.2))
    ax = fig.add_subplot()
    draw(ax, labels, rows)
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel)
    ax.tick_params(axis="x", labelsize=8)
    ax.legend(fontsize=8, frameon=False, **legend)
    fig.tight_layout()
    return fig


def _stacked_shift_types(ax: Axes, labels: list[str], rows: list[dict]) -> None:
    bottom = np.zeros(len(rows))
    for kind in SHIFT_TYPES:
        shares = np.array([r.get(f"{kind}_share") or 0.0 for r in rows])
        if kind == "undetermined" and not shares.any():
            continue
        ax.bar(labels, shares, bottom=bottom, color=SHIFT_COLORS[kind], label=kind)
        bottom += shares


def _confidence_bars(ax: Axes, labels: list[str], rows: list[dict]) -> None:
    series = {
        "correct choice, before": [r["confidence_before"]["value"] for r in rows],
        "pseudo-correct choice, after": [r["confidence_after"]["value"] for r in rows],
    }
    errs = {
        "correct choice, before": [(1.96 * (r["confidence_before"]["se"] or 0),) * 2 for r in rows],
        "pseudo-correct choice, after": [
            (1.96 * (r["confidence_after"]["se"] or 0),) * 2 for r in rows
        ],
    }
    grouped_bars(ax, labels, series, errs)


def shift_figure(metrics: Mapping[str, Any]) -> Figure | None:
    return _probe_bars(metrics, "shift_types", (2, 1.3), "share of instances",
                       _stacked_shift_types, bbox_to_anchor=(1.01, 1), loc="upper left")  # fmt: skip


def confidence_figure(metrics: Mapping[str, Any]) -> Figure | None:
    return _probe_bars(metrics, "confidence_profile", (2.5, 1.4), "mean confidence",
                       _confidence_bars)  # fmt: skip


# --------------------------------------------------------------------------- examples


def _choices_text(choices, confidences, pseudo: int, reply=None) -> str:
    """The choices with their confidences, or (letter answers) with the model's reply."""
    if confidences is None:
        listed = " | ".join(f"{'*' if i == pseudo else ''}{c}" for i, c in enumerate(choices))
        return f"{listed} -- reply: {reply!r}"
    return " | ".join(
        f"{'*' if i == pseudo else ''}{c} ({p:.2f})"
        for i, (c, p) in enumerate(zip(choices, confidences, strict=True))
    )


def _choices_texts(rows: pd.DataFrame) -> list[str]:
    """Each row's choices after the probe, with their confidences or the model's reply."""
    replies = rows["reply"] if "reply" in rows else [None] * len(rows)
    return [
        _choices_text(c, p, i, r)
        for c, p, i, r in zip(
            rows["choices"], rows["confidences"], rows["pseudo_label"], replies, strict=True
        )
    ]


def _prompts(rows: pd.DataFrame) -> pd.Series:
    """Each row's prompt after the probe (the No-Question probe may leave none)."""
    return rows["prompt"].map(lambda p: p or "(empty)")


def _pseudo_choices(rows: pd.DataFrame) -> list[str]:
    """Each row's pseudo-correct choice."""
    return [c[i] for c, i in zip(rows["choices"], rows["pseudo_label"], strict=True)]


def _not_pseudo_correct(rows: pd.DataFrame) -> pd.Series:
    """Whether the model did not put the pseudo-correct choice on top."""
    return ~rows["pseudo_correct"].astype(bool)


EXAMPLE_COLUMNS = (
    ExampleColumn("subject"),
    ExampleColumn("probe", values=lambda rows: rows["probe"].map(_probe)),
    ExampleColumn("original_prompt", "original prompt", True),
    ExampleColumn("prompt", "prompt after probe", True, _prompts),
    ExampleColumn("choices_text", "choices after probe (confidence)", True, _choices_texts),
    ExampleColumn("pseudo", "pseudo-correct", True, _pseudo_choices),
    ExampleColumn("correct", "not the pseudo-correct", values=_not_pseudo_correct),
)


def _lead(metrics: Mapping[str, Any]) -> str:
    options = metrics.get("options") or {}
    how = options.get("normalisation", DASH)
    return (
        f"{options.get('trials', DASH)} trials per probe; prompt rule: "
        f"{options.get('rule', DASH)}; choice scores: {how} "
        f"({NORMALISATIONS.get(how, how)}); confidences: softmax over the choices' scores."
    )


class ConfidenceShiftReport(ReportView):
    summary_title = "pseudo-accuracy, tests, shift types and MaxProb detection by probe"
    table_makers = (
        summary_table,
        COMPETENCE,
        ORIGINAL_ACCURACY,
        NORMALISATION,
        PSEUDO_ACCURACY,
        ABSTENTIONS,
        shift_table,
        POOLED_SHIFTS,
        SPREAD,
        PROFILE,
        CONTRASTS,
        MAXPROB,
        BENCHMARK_POSITIONS,
        BENCHMARK_CHOICES,
        BENCHMARK_WORDS,
        BENCHMARK_SHORTCUTS,
        KEPT_CONFIDENCE,
        KEPT_FEATURES,
        answer_modes_table,
        dataset_table,
    )
    figures = (
        ("pseudo_accuracy", "Pseudo-accuracy by probe (95% CI)", pseudo_accuracy_figure),
        ("shift_types", "Shift types by probe", shift_figure),
        ("confidence", "Confidence of the correct / pseudo-correct choice", confidence_figure),
    )
    layout = (
        SectionSpec(
            "accuracy",
            "Accuracy and pseudo-accuracy",
            ("competence", "original_accuracy", "accuracy_by_normalisation", "pseudo_accuracy"),
            lead=_lead,
        ),
        SectionSpec("shifts", "Shift types", ("shift_types", "pooled_shifts")),
        SectionSpec(
            "confidence",
            "Confidence and variance",
            ("confidence_spread", "confidence_profile", "probe_contrasts"),
        ),
        SectionSpec("maxprob", "MaxProb detection", ("maxprob_detection",)),
        SectionSpec(
            "benchmark",
            "Benchmark irregularities (the method's)",
            (
                "benchmark_positions",
                "benchmark_choices",
                "benchmark_word_frequencies",
                "benchmark_shortcuts",
            ),  # fmt: skip
        ),
        SectionSpec(
            "kept",
            "Instances that keep their confidence (ours)",
            ("kept_confidence", "kept_confidence_features"),
        ),
        answers.SECTION,
        SectionSpec("dataset", "Dataset", ("dataset",)),
    )
    # a seeded sample of trial-0 perturbed instances, every subject's confidences
    example_rows = ExampleRows(
        EXAMPLE_COLUMNS,
        note="A seeded sample of perturbed instances (trial 0), with each subject's "
        "confidences; * marks the pseudo-correct choice.",
        pool=lambda results: results[results["trial"] == 0],  # each instance's first trial
        sort=("probe", "pair_id"),
    )
