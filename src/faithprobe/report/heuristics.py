"""The table of the heuristic QA baselines (``faithprobe baseline heuristics``): the scores
:func:`faithprobe.baseline.scoring.scores` estimates, one row per heuristic."""

from __future__ import annotations

import pandas as pd

from .tables import Table, fmt_estimate

METRIC_LABELS = {"em": "EM", "f1": "F1", "sentence": "answer sentence"}


def scores_table(scores: pd.DataFrame) -> Table:
    """One row per heuristic: EM, F1 and the answer-sentence rate with 95% intervals, n."""
    rows = []
    for heuristic, group in scores.groupby("heuristic", sort=False):
        by = group.set_index("metric")
        row = {"heuristic": heuristic}
        for metric, label in METRIC_LABELS.items():
            r = by.loc[metric]
            row[label] = fmt_estimate(r["value"], r["ci_low"], r["ci_high"])
        row["n"] = int(by.loc["em", "n"])
        row["passages"] = int(by.loc["em", "n_clusters"])
        rows.append(row)
    return Table(
        name="scores",
        title="Heuristic QA baselines",
        data=scores.reset_index(drop=True),
        display=pd.DataFrame(rows),
        note="Values with 95% cluster-bootstrap intervals over passages. `oracle`: the "
        "sentence holding the first gold answer (an upper bound for sentence selection).",
    )
