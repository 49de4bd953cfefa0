"""Tables, plots and report.html of a run folder, from its metrics.json (the view of its
suite), results.parquet and run.json."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from faithprobe.registry import load_target
from faithprobe.suite import SUITES

from .html import render_html
from .tables import subject_order, write_tables


def _view(metrics: Mapping[str, Any]):
    """The report view of the suite that wrote ``metrics`` (its registered entry's)."""
    return load_target(SUITES.get(metrics["suite"]).report)


def summary_table(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """The headline table of a run, as shown on the terminal and atop the report."""
    return _view(metrics).summary(metrics)


def summary_title(metrics: Mapping[str, Any]) -> str:
    """A view's ``summary_title`` is a string, or a function of the metrics where the
    headline depends on what the run measured."""
    title = _view(metrics).summary_title
    title = title(metrics) if callable(title) else title
    return f"{metrics['suite']}: {title}"


def build_report(run_dir: Path) -> Path:
    """Write ``tables/``, ``plots/`` and ``report.html`` into ``run_dir``; return the page."""
    run_dir = Path(run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    results = pd.read_parquet(run_dir / "results.parquet")
    view = _view(metrics)

    tables = view.tables(metrics)
    write_tables(tables, run_dir / "tables")
    plots = view.plots(metrics, run_dir / "plots")
    seed = run.get("seed", metrics.get("seed", 0)) or 0
    page = render_html(
        run=run,
        metrics=metrics,
        summary=tables.get("summary"),
        sections=view.sections(tables, metrics),
        plots=plots,
        examples=view.examples(results, seed, subject_order(metrics)),
    )
    path = run_dir / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
