"""Tables and histograms of the representation analysis
(:mod:`faithprobe.representations.analysis`), after Chaturvedi et al.'s Tables 7-9 and
Figures 1-4: per model and comparison (OS vs TS, OS vs TS-R; OS vs OS-R for HotpotQA, the
method's Table 9; only those the data has) the cosine similarity of the
summary token's states ([CLS] for BERT-like models, the last token for XLNet) and the mean similarity of the shared tokens' states, the differences between
models, and the distributions overlaid per model. Every number in a table is read from
``metrics.json``; the histograms draw the rows of the Parquet tables. Nothing is
estimated here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from faithprobe.report.figures import Plot, new_figure, save_figures
from faithprobe.report.tables import DASH, Table, fmt_count, interval_text, write_tables
from faithprobe.report.views import f3
from faithprobe.representations.analysis import MEASURES

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn (new_figure)
    from matplotlib.figure import Figure

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
N_BINS = 40
TITLES = {
    "cls_cosine": "Cosine similarity of the final-layer summary-token states ([CLS] first "
    "for BERT-like models, last for XLNet; the method's Table 7)",
    "shared_token_mean": "Mean cosine similarity of the shared tokens' final-layer states "
    "(the method's Tables 8-9)",
}
NOTE = (
    "mean ± standard deviation over items [95% interval of the mean, bootstrap resampling "
    "passages]; n = items compared. Inputs are the first window of max_length tokens."
)


def _models(metrics: Mapping[str, Any]) -> list[str]:
    return [m["name"] for m in metrics.get("models") or []]


def _comparisons(metrics: Mapping[str, Any]) -> list[str]:
    """The comparisons the analysis made (its sizes list them in order)."""
    return list((metrics.get("sizes") or {}).get("compared") or {})


def _cell(r: Mapping[str, Any]) -> str:
    if r.get("mean") is None or pd.isna(r.get("mean")):
        return DASH
    return interval_text(r["mean"], r.get("ci_low"), r.get("ci_high"), f3, spread=r.get("std"),
                         blank=None)  # fmt: skip


def measure_table(metrics: Mapping[str, Any], measure: str) -> Table | None:
    """One row per model, one column per comparison (and its n)."""
    data = pd.DataFrame(metrics.get("estimates") or [])
    if data.empty:
        return None
    data = data[data["measure"] == measure]
    rows = []
    for model in _models(metrics):
        by = {r["comparison"]: r for r in data[data["model"] == model].to_dict("records")}
        row: dict[str, str] = {"model": model}
        for comparison in _comparisons(metrics):
            row[comparison] = _cell(by.get(comparison, {}))
        for comparison in _comparisons(metrics):
            row[f"n ({comparison})"] = fmt_count(by.get(comparison, {}).get("n"))
        rows.append(row)
    return Table(measure, TITLES[measure], data, pd.DataFrame(rows), note=NOTE)


def differences_table(metrics: Mapping[str, Any]) -> Table | None:
    data = pd.DataFrame(metrics.get("differences") or [])
    if data.empty:
        return None
    display = pd.DataFrame(
        {
            "models": data["model"] + " − " + data["reference"],
            "comparison": data["comparison"],
            "measure": data["measure"].map(MEASURES),
            "difference [95% CI]": [
                interval_text(r["difference"], r["ci_low"], r["ci_high"], f3, blank=None)
                for r in data.to_dict("records")
            ],
            "n": data["n"].map(fmt_count),
            "passages": data["n_passages"].map(fmt_count),
            "Wilcoxon p": data["p_value"].map(lambda p: DASH if pd.isna(p) else f"{p:.3g}"),
        }
    )
    return Table(
        "differences",
        "Differences between models on the same items",
        data,
        display,
        note="mean over items of (model − reference) with a 95% interval (bootstrap resampling passages); "
        "p: two-sided Wilcoxon signed-rank test on the per-passage mean differences.",
    )


def sizes_table(metrics: Mapping[str, Any]) -> Table | None:
    models = pd.DataFrame(metrics.get("models") or [])
    if models.empty:
        return None
    sizes = metrics.get("sizes") or {}
    data = models.assign(items=sizes.get("items"))
    for comparison, n in (sizes.get("compared") or {}).items():
        data[f"compared ({comparison})"] = n
    display = data.drop(columns=["path"]).copy()
    for col in display.columns:
        if col not in ("name", "token_type_ids"):
            display[col] = display[col].map(fmt_count)
    dropped = ", ".join(f"{d['variant']}: {d['count']} ({d['reason']})"
                        for d in metrics.get("drops") or [])  # fmt: skip
    return Table(
        "sizes",
        "Items, window and cut contexts",
        data,
        display,
        note="items_truncated: items with an input longer than the window (cut to its "
        "first max_length tokens). Variants not made: " + (dropped or "none") + ".",
    )


def build_tables(metrics: Mapping[str, Any]) -> dict[str, Table]:
    tables = [measure_table(metrics, m) for m in MEASURES]
    tables += [differences_table(metrics), sizes_table(metrics)]
    return {t.name: t for t in tables if t is not None}


# --------------------------------------------------------------------------- histograms


def histogram_figure(values: Mapping[str, np.ndarray], *, title: str, xlabel: str) -> Figure | None:
    """The distributions of ``values`` (one array per model) overlaid on shared bins."""
    values = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    values = {k: v[np.isfinite(v)] for k, v in values.items()}
    if not any(len(v) for v in values.values()):
        return None
    pooled = np.concatenate([v for v in values.values() if len(v)])
    lo, hi = float(pooled.min()), float(max(pooled.max(), 1.0))
    bins = np.linspace(lo - 1e-6, hi + 1e-6, N_BINS + 1) if hi > lo else N_BINS
    fig = new_figure((6.0, 3.8), layout="constrained")
    ax = fig.add_subplot()
    for i, (model, v) in enumerate(values.items()):
        color = COLORS[i % len(COLORS)]
        label = f"{model} (n={len(v)}, mean {f3(v.mean()) if len(v) else DASH})"
        ax.hist(v, bins=bins, histtype="stepfilled", alpha=0.35, color=color, label=label)
        ax.hist(v, bins=bins, histtype="step", color=color, linewidth=1.2)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("count")
    ax.legend(fontsize=8, frameon=False)
    return fig


def _slug(comparison: str) -> str:
    return comparison.lower().replace(" vs ", "-").replace(" ", "-")


def build_plots(
    similarities: pd.DataFrame,
    tokens: pd.DataFrame,
    models: Sequence[str],
    comparisons: Sequence[str],
    out_dir: Path,
) -> list[Plot]:
    """Per comparison: the items' summary-token cosines and the paired tokens' cosines, models
    overlaid (``cls_<comparison>.png``, ``tokens_<comparison>.png``)."""
    specs = []
    for comparison in comparisons:
        sims = similarities[similarities["comparison"] == comparison]
        toks = tokens[tokens["comparison"] == comparison]
        cls = {m: sims.loc[sims["model"] == m, "cls_cosine"].to_numpy() for m in models}
        tok = {m: toks.loc[toks["model"] == m, "cosine"].to_numpy() for m in models}
        specs += [
            (
                f"cls_{_slug(comparison)}",
                f"summary-token similarity, {comparison}",
                lambda _m, v=cls, c=comparison: histogram_figure(
                    v, title=f"summary-token cosine similarity, {c}", xlabel="cosine similarity"
                ),
            ),
            (
                f"tokens_{_slug(comparison)}",
                f"Shared-token similarity, {comparison}",
                lambda _m, v=tok, c=comparison: histogram_figure(
                    v, title=f"Shared tokens' cosine similarity, {c}", xlabel="cosine similarity"
                ),
            ),
        ]
    return save_figures({}, out_dir, specs)


def write_report(
    metrics: Mapping[str, Any], similarities: pd.DataFrame, tokens: pd.DataFrame, out: Path
) -> tuple[dict[str, Table], list[Path], list[Plot]]:
    """``tables/<name>.csv|.md`` and ``plots/<name>.png`` in ``out``."""
    tables = build_tables(metrics)
    written = write_tables(tables, Path(out) / "tables")
    plots = build_plots(
        similarities, tokens, _models(metrics), _comparisons(metrics), Path(out) / "plots"
    )
    return tables, written, plots
