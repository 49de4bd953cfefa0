"""Reports: views of a run folder's ``metrics.json``, plus example items from its results.

The report layer selects, pivots, formats and plots what the metrics hold; it estimates
nothing itself. From ``results.parquet``, ``metrics.json`` and ``run.json`` in a run folder
:func:`build_report` writes

* ``tables/<name>.csv`` (numeric rows of metrics.json) and ``tables/<name>.md`` (formatted),
* ``plots/<name>.png``,
* ``report.html``: one self-contained page (inline CSS, images as data URIs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .html import example_rows, render_html
from .plots import build_plots
from .tables import build_tables, subject_order, summary_table, write_tables

__all__ = ["build_report", "summary_table"]


def build_report(run_dir: Path) -> Path:
    """Write ``tables/``, ``plots/`` and ``report.html`` into ``run_dir``; return the page."""
    run_dir = Path(run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    results = pd.read_parquet(run_dir / "results.parquet")

    tables = build_tables(metrics)
    write_tables(tables, run_dir / "tables")
    plots = build_plots(metrics, run_dir / "plots")
    seed = run.get("seed", metrics.get("seed", 0)) or 0
    page = render_html(
        run=run,
        metrics=metrics,
        tables=tables,
        plots=plots,
        examples=example_rows(results, seed=seed, subjects=subject_order(metrics)),
    )
    path = run_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
