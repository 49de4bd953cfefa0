"""The report's figures: every view's plots are saved through :func:`save_figures`, and
the chart helpers the views share (:func:`grouped_bars`) live here too.

Figures are built on :class:`matplotlib.figure.Figure` and rendered by the Agg canvas (no
pyplot state, no interactive backend). Texts in them come from the data (subject names,
item sets, labels), so they are drawn as plain text: matplotlib's mathtext is off while a
figure is made and saved, and a ``$…$`` in a value is shown as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure

DPI = 150

FigureMaker = Callable[[Mapping[str, Any]], "Figure | None"]


@dataclass(frozen=True)
class Plot:
    name: str
    title: str
    path: Path


def save_figures(
    metrics: Mapping[str, Any], out_dir: Path, specs: Sequence[tuple[str, str, FigureMaker]]
) -> list[Plot]:
    """Make each (name, title, maker) figure the metrics allow and save it as a PNG."""
    import matplotlib

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = []
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        for name, title, make in specs:
            fig = make(metrics)
            if fig is None:
                continue
            path = out_dir / f"{name}.png"
            fig.savefig(path, dpi=DPI)
            plots.append(Plot(name=name, title=title, path=path))
    return plots


def new_figure(figsize: tuple[float, float], **kwargs: Any) -> Figure:
    """A figure on the Agg canvas (no pyplot state). matplotlib is imported here, when a
    figure is drawn: a run whose figures are remembered never imports it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, **kwargs)
    FigureCanvasAgg(fig)
    return fig


def grouped_bars(ax, groups: Sequence[str], series: Mapping[str, Sequence[float]], errs=None):
    """One bar per series in each group; ``errs[label]`` holds (below, above) per group."""
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for i, (label, values) in enumerate(series.items()):
        yerr = None if errs is None else np.asarray(errs[label]).T
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label, yerr=yerr,
               capsize=3)  # fmt: skip
    ax.set_xticks(x, groups)
    return x, width
