"""Competence before faithfulness: can the model do the task on the original items at
all, better than the best *constant* answer on the same items?

A faithfulness effect means nothing for a model that does not do the task: a model that
always answers "no" scores 0.59 on stories whose gold is "no" 59% of the time, and a
model that always says "unknown" "abstains after deletion" perfectly. So every step first
measures accuracy on its original items against the best constant answer on those items,
and a model that does not beat it by a stated margin (one-sided test) is *not assessable*
on that step (:class:`~faithprobe.metrics.verdict.Competence`).

A constant answer is one output given to every item whatever the input: a label ("no",
"entailment"), a position among the offered choices ("the first choice"), a word ("dog").
Each item lists the constant answers that would be right on it (its *gold keys*, e.g.
``{"text:no"}`` or ``{"position:2", "text:bird"}``); the best constant answer is the key
right on most items, and its per-item correctness is set against the model's, item by
item, in a paired cluster bootstrap (:func:`~faithprobe.metrics.intervals.
paired_cluster_difference`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from faithprobe.metrics.intervals import clustered_mean, paired_cluster_difference

# accuracy on the original items must exceed the best constant answer's by more than this
# (one-sided test at ALPHA): 5 points, a gap a reader would act on, small enough that any
# model doing the task clears it with a few dozen items
COMPETENCE_MARGIN = 0.05
ALPHA = 0.05


def best_constant(gold_keys: Sequence[Iterable[Hashable]]) -> tuple[Hashable | None, np.ndarray]:
    """The constant answer right on most items (ties: the first in sorted order of their
    text, so the choice does not depend on item order), and whether it is right on each."""
    keys = [frozenset(k) for k in gold_keys]
    counts = Counter(k for ks in keys for k in ks)
    if not counts:
        return None, np.zeros(len(keys), dtype=bool)
    top = max(counts.values())
    best = min((k for k, c in counts.items() if c == top), key=str)
    return best, np.array([best in ks for ks in keys], dtype=bool)


def competence(
    correct: Sequence[float],
    gold_keys: Sequence[Iterable[Hashable]],
    clusters: Sequence[Hashable],
    *,
    seed: int = 0,
    margin: float = COMPETENCE_MARGIN,
    metric: str = "accuracy on the original items",
) -> dict:
    """The competence record of one model on one step: its accuracy (``correct`` per
    original item, 0/1 or a score in [0, 1]) with its cluster-bootstrap interval, the best
    constant answer's accuracy on the same items, the paired excess with its interval, and
    the one-sided p-value of "the excess is above ``margin``"; ``competent`` when that p is
    below :data:`ALPHA`."""
    correct = np.asarray(correct, dtype=float)
    answer, constant = best_constant(gold_keys)
    acc = clustered_mean(correct, clusters, seed=seed, proportion=True)
    excess = paired_cluster_difference(correct, constant, clusters, seed=seed, null=margin)
    p = excess["p_above"]
    return {
        "metric": metric,
        "value": acc.value,
        "ci_low": acc.ci_low,
        "ci_high": acc.ci_high,
        "baseline": float(constant.mean()) if len(constant) else float("nan"),
        "baseline_answer": None if answer is None else str(answer),
        "excess": excess["value"],
        "excess_ci_low": excess["ci_low"],
        "excess_ci_high": excess["ci_high"],
        "margin": margin,
        "p_value": p,
        "competent": bool(p < ALPHA),
        "n": acc.n,
        "n_clusters": acc.n_clusters,
        "method": f"accuracy: {acc.method}; excess over the best constant answer: "
        f"{excess['method']}, one-sided test of excess > {margin:g} at {ALPHA:g}",
    }
