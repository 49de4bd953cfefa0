"""Scores of the heuristics, with the QA metrics the suites use.

Rows are scored by :mod:`faithprobe.metrics.qa_scores` (official SQuAD normalisation, EM and F1 as
the maximum over the gold answers), each heuristic playing the part of a ``subject``.
Intervals are 95% cluster bootstraps over passages (``passage_id``): the questions about
one passage are not independent. ``sentence`` is the share of questions whose selected
sentence holds the start of a gold answer -- how well the selector alone does.
"""

from __future__ import annotations

import pandas as pd

from faithprobe.metrics.intervals import clustered_mean
from faithprobe.metrics.qa_scores import qa_scores, scored_rows


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
