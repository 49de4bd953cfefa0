"""Figures of the ``distractors`` suite's report, in the style of Pandia & Ettinger (2021): a
metric against the number of attractors.

One line per subject × attractor type (colour = attractor type, line style and marker =
subject), one panel per setting, error bars from the ``ci_low``/``ci_high`` that
``metrics.json`` holds. Nothing is estimated here.

Figures are built on :class:`matplotlib.figure.Figure` directly and rendered by the Agg
canvas (:func:`~faithprobe.report.figures.new_figure`), so no pyplot state or interactive
backend is touched, and matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import cycle
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from faithprobe.report.figures import Plot, new_figure, save_figures
from faithprobe.report.tables import rank_values, subject_order
from faithprobe.suites.distractors.tables import (
    ATTRACTOR_TYPES,
    EXTRA_DIMS,
    METRICS,
    POSITIONS,
    SETTINGS,
    broadcast_generic,
    estimates_frame,
    select,
)

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn (new_figure)
    from matplotlib.figure import Figure

TYPE_COLORS = {"B": "#1f77b4", "T": "#d62728", "unrelated": "#2ca02c"}
EXTRA_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

TYPE_LABELS = {"B": "B-type", "T": "T-type", "unrelated": "unrelated"}
SETTING_LABELS = {"single": "single-entity setting", "multi": "multiple-entity setting"}
POSITION_LABELS = {"after": "after", "between": "between", "later": "later"}
METRIC_LABELS = {
    "accuracy": "accuracy",
    "relative_probability": "relative probability (geometric mean)",
}


def _ordered(values: Sequence[Any], preferred: Sequence[Any]) -> list[Any]:
    rank = rank_values(values, preferred)
    return sorted(set(values), key=lambda v: rank[v])


def _styles(subjects: Sequence[str], types: Sequence[str]):
    extra = cycle(EXTRA_COLORS)
    colors = {t: TYPE_COLORS.get(t) or next(extra) for t in types}
    styles = {
        s: (LINESTYLES[i % len(LINESTYLES)], MARKERS[i % len(MARKERS)])
        for i, s in enumerate(subjects)
    }
    return colors, styles


def _plain(value: float, _pos: int | None = None) -> str:
    return f"{value:g}"


def _yerr(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, log: bool) -> np.ndarray:
    """Distances to the bounds; a missing (or, on a log axis, non-positive) bound → no bar."""
    lo = lo.copy()
    if log:
        lo[lo <= 0] = np.nan
    below = np.nan_to_num(values - lo, nan=0.0).clip(min=0.0)
    above = np.nan_to_num(hi - values, nan=0.0).clip(min=0.0)
    return np.vstack([below, above])


def _panel_title(col: str, cv: Any, row: str | None, rv: Any) -> str:
    """A panel's title: its column's value (a setting by its label), after its row's."""
    name = SETTING_LABELS.get(cv, str(cv)) if col == "setting" else f"{col}: {cv}"
    if row:
        rname = SETTING_LABELS.get(rv, str(rv)) if row == "setting" else f"{row}: {rv}"
        name = f"{rname} · {name}"
    return name


def _draw_lines(ax, panel: pd.DataFrame, lines, offsets, colors, styles, log: bool) -> None:
    """One line with error bars per (subject, attractor type) of ``panel``, shifted
    sideways by its offset so that the bars do not overlap."""
    if panel.empty:
        ax.text(0.5, 0.5, "no estimates", transform=ax.transAxes, ha="center", va="center",
                color="0.45")  # fmt: skip
    for s, t in lines:
        d = panel[(panel["subject"] == s) & (panel["attractor_type"] == t)]
        d = d.drop_duplicates(subset=["n_attractors"]).sort_values("n_attractors")
        if d.empty:
            continue
        x = d["n_attractors"].to_numpy(dtype=float) + offsets[(s, t)]
        y = d["value"].to_numpy(dtype=float)
        lo = d["ci_low"].to_numpy(dtype=float)
        hi = d["ci_high"].to_numpy(dtype=float)
        ls, marker = styles[s]
        ax.errorbar(x, y, yerr=_yerr(y, lo, hi, log), color=colors[t], linestyle=ls,
                    marker=marker, markersize=4.5, linewidth=1.4, elinewidth=0.9, capsize=2.5,
                    alpha=0.9)  # fmt: skip


def _log_axis(ax, log_span: float) -> None:
    """A log y axis of plain numbers (0.5, 2) rather than 5×10⁻¹, minor ticks labelled only
    when the axis spans less than about a decade (else they crowd), a line at 1."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_plain))
    ax.yaxis.set_minor_formatter(FuncFormatter(_plain) if log_span < 1.0 else NullFormatter())
    ax.axhline(1.0, color="0.3", linewidth=0.9, linestyle="-", zorder=0)


def _legend(fig, colors, styles, types, subj, ncols: int) -> None:
    """Colour for the attractor type, line and marker for the subject, below the panels."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=colors[t], linewidth=2.5) for t in types]
    labels = [TYPE_LABELS.get(t, str(t)) for t in types]
    for s in subj:
        ls, marker = styles[s]
        handles.append(Line2D([], [], color="0.25", linestyle=ls, marker=marker))
        labels.append(s)
    fig.legend(handles, labels, loc="outside lower center",
               ncol=min(len(handles), max(3, 2 * ncols + 1)), fontsize=9, frameon=False,
               title="colour: attractor type    line and marker: subject",
               title_fontsize=9)  # fmt: skip


def curve_figure(
    rows: pd.DataFrame,
    metric: str,
    *,
    subjects: Sequence[str] = (),
    col: str = "setting",
    row: str | None = None,
    title: str = "",
) -> Figure | None:
    """A grid of panels (``col`` × ``row``) of the metric against the number of attractors."""
    rows = rows[rows["value"].notna() & rows["n_attractors"].notna()].copy()
    if metric == "relative_probability":
        rows = rows[rows["value"] > 0]
    if rows.empty:
        return None
    preferred = {"setting": SETTINGS, "position": POSITIONS[1:]}
    col_values = _ordered(list(rows[col].unique()), preferred.get(col, ()))
    row_values = _ordered(list(rows[row].unique()), preferred.get(row, ())) if row else [None]
    subj = _ordered(list(rows["subject"].unique()), subjects)
    types = _ordered(list(rows["attractor_type"].unique()), ATTRACTOR_TYPES)
    colors, styles = _styles(subj, types)
    log = metric == "relative_probability"
    ns = sorted(int(n) for n in rows["n_attractors"].unique())
    log_span = 0.0
    if log:
        ys = rows[["value", "ci_low", "ci_high"]].to_numpy(dtype=float).ravel()
        ys = np.append(ys[np.isfinite(ys) & (ys > 0)], 1.0)  # the reference line at 1
        log_span = float(np.log10(ys.max() / ys.min()))

    ncols, nrows = len(col_values), len(row_values)
    fig = new_figure((1.0 + 4.0 * ncols, 0.9 + 3.0 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)

    lines = [(s, t) for s in subj for t in types]
    step = min(0.06, 0.4 / max(len(lines), 1))
    offsets = {k: (i - (len(lines) - 1) / 2) * step for i, k in enumerate(lines)}

    for i, rv in enumerate(row_values):
        for j, cv in enumerate(col_values):
            ax = axes[i][j]
            panel = rows[rows[col] == cv]
            if row:
                panel = panel[panel[row] == rv]
            _draw_lines(ax, panel, lines, offsets, colors, styles, log)
            ax.set_title(_panel_title(col, cv, row, rv), fontsize=10)
            ax.set_xticks(ns)
            ax.set_xlim(min(ns) - 0.4, max(ns) + 0.4)
            ax.grid(True, axis="y", alpha=0.3)
            if log:
                _log_axis(ax, log_span)
            if i == nrows - 1:
                ax.set_xlabel("number of attractors")
            if j == 0:
                ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    if metric == "accuracy":
        axes[0][0].set_ylim(-0.02, 1.02)
    _legend(fig, colors, styles, types, subj, ncols)
    if title:
        fig.suptitle(title, fontsize=12)
    return fig


def _main_rows(est: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The main view's estimates of ``metric``; if it holds several filler amounts, the
    smallest."""
    main = select(est, metric, "main")
    if not main.empty:
        main = main[main["n_filler"] == main["n_filler"].min()]
    for dim in EXTRA_DIMS:
        main = broadcast_generic(main, dim)
    return main


def _position_rows(est: pd.DataFrame, metric: str) -> pd.DataFrame:
    pos = broadcast_generic(select(est, metric, "by_position"), "position")
    return pos[~pos["position"].isin(("all", "none"))]


def build_plots(metrics: Mapping[str, Any], out_dir: Path) -> list[Plot]:
    """Write every figure the data allow into ``out_dir``; return them in display order."""
    subjects = subject_order(metrics)
    est = estimates_frame(metrics)
    titles = {
        "accuracy": "Accuracy against number of attractors after the critical fact",
        "relative_probability": "Relative probability of the target against attractors "
        "after the critical fact",
        "accuracy_by_position": "Accuracy by attractor position",
        "relative_probability_by_position": "Relative probability by attractor position",
    }

    def main(metric: str):
        title = titles[metric]
        return lambda _: curve_figure(
            _main_rows(est, metric), metric, subjects=subjects, title=title
        )

    def by_position(metric: str):
        title = titles[f"{metric}_by_position"]
        return lambda _: curve_figure(
            _position_rows(est, metric),
            metric,
            subjects=subjects,
            col="position",
            row="setting",
            title=title,
        )

    specs = [(m, titles[m], main(m)) for m in METRICS]
    specs += [(f"{m}_by_position", titles[f"{m}_by_position"], by_position(m)) for m in METRICS]
    return save_figures(metrics, out_dir, specs)
