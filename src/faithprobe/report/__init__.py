"""Reports: views of a run folder's ``metrics.json``, plus example items from its results.

The report layer selects, pivots, formats and plots what the metrics hold; it estimates
nothing itself. Each suite registers a report view (:class:`faithprobe.suite_protocol.SuiteEntry`) naming its tables, plots,
sections and example columns. From ``results.parquet``, ``metrics.json`` and ``run.json``
in a run folder :func:`build_report` writes

* ``tables/<name>.csv`` (numeric rows of metrics.json) and ``tables/<name>.md`` (formatted),
* ``plots/<name>.png``,
* ``report.html``: one self-contained page (inline CSS, images as data URIs).
"""

from __future__ import annotations

from .build import build_report, summary_table, summary_title
from .run_folder import rebuild, run_to_folder, write_run

__all__ = [
    "build_report",
    "rebuild",
    "run_to_folder",
    "summary_table",
    "summary_title",
    "write_run",
]
