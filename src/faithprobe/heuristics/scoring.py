"""Scores of the heuristics, with the QA metrics the suites use.

Rows are scored by :mod:`faithprobe.metrics.qa` (official SQuAD normalisation, EM and F1 as
the maximum over the gold answers), each heuristic playing the part of a ``subject``.
Intervals are 95% cluster bootstraps over passages (``passage_id``): the questions about
one passage are not independent. ``sentence`` is the share of questions whose selected
sentence holds the start of a gold answer -- how well the selector alone does.
"""

from __future__ import annotations

import pandas as pd

from faithprobe.metrics.intervals import clustered_mean
from faithprobe.metrics.qa import qa_scores, scored_rows
from faithprobe.report.tables import Table, fmt_estimate

METRICS = {"em": "EM", "f1": "F1", "sentence": "answer sentence"}


def _as_subjects(predictions: pd.DataFrame) -> pd.DataFrame:
    return predictions.assign(subject=predictions["heuristic"], variant="original")


def score_rows(predictions: pd.DataFrame) -> pd.DataFrame:
    """``predictions`` with each row's ``em`` and ``f1``."""
    scored = scored_rows(_as_subjects(predictions))
    return predictions.assign(em=scored["em"], f1=scored["f1"])


def scores(predictions: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Long frame: per heuristic and metric (``em``, ``f1``, ``sentence``) the estimate
    (``value``, ``ci_low``, ``ci_high``, ``n``, ``n_clusters``, ``method``)."""
    qa = qa_scores(_as_subjects(predictions), cluster="passage_id", seed=seed)
    qa = qa[qa["metric"].isin(["em", "f1"])].rename(columns={"subject": "heuristic"})
    hits = [
        {
            "heuristic": heuristic,
            "metric": "sentence",
            **clustered_mean(
                rows["answer_sentence"], rows["passage_id"], seed=seed, proportion=True
            ).as_dict(),
        }
        for heuristic, rows in predictions.groupby("heuristic", sort=False)
    ]
    out = pd.concat([qa.drop(columns="variant"), pd.DataFrame(hits)], ignore_index=True)
    order = {h: i for i, h in enumerate(dict.fromkeys(predictions["heuristic"]))}
    return out.sort_values("heuristic", key=lambda h: h.map(order), kind="stable")


def summary_table(table: pd.DataFrame) -> Table:
    """One row per heuristic: EM, F1 and the answer-sentence rate with 95% intervals, n."""
    rows = []
    for heuristic, group in table.groupby("heuristic", sort=False):
        by = group.set_index("metric")
        row = {"heuristic": heuristic}
        for metric, label in METRICS.items():
            r = by.loc[metric]
            row[label] = fmt_estimate(r["value"], r["ci_low"], r["ci_high"])
        row["n"] = int(by.loc["em", "n"])
        row["passages"] = int(by.loc["em", "n_clusters"])
        rows.append(row)
    return Table(
        name="scores",
        title="Heuristic QA baselines",
        data=table.reset_index(drop=True),
        display=pd.DataFrame(rows),
        note="Values with 95% cluster-bootstrap intervals over passages. `oracle`: the "
        "sentence holding the first gold answer (an upper bound for sentence selection).",
    )
