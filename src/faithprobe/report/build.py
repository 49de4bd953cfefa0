"""Tables, plots and report.html of a run folder, from its metrics.json (the view of its
suite), results.parquet and run.json."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from faithprobe.memo import Memo, fingerprint, module_fingerprint
from faithprobe.registry import load_target
from faithprobe.suite_protocol import SUITES

from .figures import Plot
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


def _plots(view, metrics: Mapping[str, Any], folder: Path, memo_dir: Path | None) -> list[Plot]:
    """The view's figures of ``metrics``, drawn into ``folder``. Drawing is most of what
    rebuilding an unchanged report costs, so with a ``memo_dir`` they are remembered by the
    fingerprint of the metrics and the code (:mod:`faithprobe.memo`) and copied from there."""
    if memo_dir is None:
        return view.plots(metrics, folder)
    manifests, figures = Memo(memo_dir / "plots", ".json"), Memo(memo_dir / "figures", ".png")
    key = fingerprint(
        "plots", module_fingerprint(view.__module__), json.dumps(metrics, sort_keys=True)
    )
    if (hit := manifests.get(key)) is not None:
        entries = json.loads(hit)
        found = [figures.get(png) for *_, png in entries]
        if all(data is not None for data in found):
            folder.mkdir(parents=True, exist_ok=True)
            plots = []
            for (name, title, filename, _), data in zip(entries, found, strict=True):
                (folder / filename).write_bytes(data)
                plots.append(Plot(name=name, title=title, path=folder / filename))
            return plots
    plots = view.plots(metrics, folder)
    entries = []
    for plot in plots:
        data = plot.path.read_bytes()
        png = hashlib.sha256(data).hexdigest()[:32]
        figures.put(png, data)
        entries.append([plot.name, plot.title, plot.path.name, png])
    manifests.put(key, json.dumps(entries).encode())
    return plots


def build_report(run_dir: Path, memo_dir: Path | None = None) -> Path:
    """Write ``tables/``, ``plots/`` and ``report.html`` into ``run_dir``; return the page.
    ``memo_dir``: where figures are remembered (:func:`_plots`); None draws them all."""
    run_dir = Path(run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    results = pd.read_parquet(run_dir / "results.parquet")
    view = _view(metrics)

    tables = view.tables(metrics)
    write_tables(tables, run_dir / "tables")
    plots = _plots(view, metrics, run_dir / "plots", memo_dir)
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
