"""Competence before faithfulness: can the model do the task on the original items at
all, better than *every* constant answer on the same items?

A faithfulness effect means nothing for a model that does not do the task: a model that
always answers "no" scores 0.59 on stories whose gold is "no" 59% of the time, and a
model that always says "unknown" "abstains after deletion" perfectly. So every step first
measures accuracy on its original items against the constant answers on those items, and a
model that does not beat them by a stated margin (one-sided test) is *not assessable* on
that step (:class:`~faithprobe.metrics.verdict.Competence`).

A constant answer is one output given to every item whatever the input: a label ("no",
"entailment"), a position among the offered choices ("the first choice"), a word ("dog").
Each item lists the constant answers that would be right on it (its *gold keys*, e.g.
``{"text:no"}`` or ``{"position:2", "text:bird"}``).

What is tested, and why the constants are read off the same items. A model that ignores
its input draws each answer from one distribution fixed before it sees the item, so its
expected accuracy is a mixture of constant answers' accuracies: at most that of the best
constant answer B. "Competent" claims accuracy above B + margin, i.e. more than the margin
above *each* constant answer. That claim is an intersection of one one-sided claim per
constant, so by the intersection-union principle (Berger 1982; Berger & Hsu 1996, Stat.
Sci. 11:283) testing each at ALPHA and calling the model competent only when every test
rejects has size at most ALPHA, however many constants there are and however they were
found: the p-value is the *largest* of the per-constant p-values. Looking at the gold to
find the constants is therefore no fishing; it can only make the claim harder, and it
covers the input-ignoring model a constant fixed in advance cannot: one whose answer prior
was fitted to these very items (always the sample's commonest answer). The per-constant
tests share one paired cluster bootstrap (:func:`~faithprobe.metrics.intervals.
paired_cluster_difference`, its resamples drawn alike), and the record reports the
binding constant: the one with the largest p (ties: the more accurate, then the first in
sorted order of their text, so the choice does not depend on item order). A constant right
on no item is never binding: its differences are at least any other's, item by item.

Why not the sample's most accurate constant alone (the test until issue 41), or constants
fixed in advance. The most accurate constant is the hardest to beat on average, not always
the hardest to beat *significantly*: a model that gives the runner-up constant wherever it
does not know the answer beats the runner-up by more than the margin, and where the
runner-up leads a sample by chance, a test against it alone calls the model competent
although it beats the best constant by no more than the margin. Constants fixed in advance,
or the most frequent answer on another fold (cross-fitting), set a bar that the constant
leading the sample clears by luck. ``benchmarks/competence_simulation.py`` measures all
three (docs/audit.md, "Is the competence test honest?"). The price of testing every
constant is power on small samples: the sample's leading class sits above its share (about
0.44 for three balanced classes at 20 items), a rare class is a noisy comparison, and on
span answers an answer that recurs once by chance ("1546" right on 1 of 20 questions)
raises the bar by 1/n.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from faithprobe.metrics.intervals import N_BOOT, clustered_mean, paired_cluster_difference

# accuracy on the original items must exceed every constant answer's by more than this
# (one-sided test at ALPHA): 5 points, a gap a reader would act on, small enough that any
# model doing the task clears it with a few dozen items
COMPETENCE_MARGIN = 0.05
ALPHA = 0.05
# a resample difference equal to the margin counts against the claim (as in intervals)
_TIE = 1e-12


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


def _resample_counts(n_clusters: int, seed: int) -> np.ndarray:
    """How often each cluster is drawn in each of the N_BOOT resamples: the draws
    :func:`~faithprobe.metrics.intervals.paired_cluster_difference` makes for this seed,
    so the p-values here are the ones it gives (tests/test_competence.py checks this)."""
    idx = np.random.default_rng(seed).integers(0, n_clusters, size=(N_BOOT, n_clusters))
    flat = idx + n_clusters * np.arange(N_BOOT)[:, None]
    return np.bincount(flat.ravel(), minlength=N_BOOT * n_clusters).reshape(N_BOOT, -1)


def binding_constant(
    correct: np.ndarray,
    gold_keys: Sequence[Iterable[Hashable]],
    clusters: Sequence[Hashable],
    *,
    seed: int,
    margin: float,
) -> tuple[Hashable | None, np.ndarray]:
    """The constant answer whose one-sided test of "the model beats it by more than
    ``margin``" has the largest p-value (module docstring), and whether it is right on each
    item; with fewer than two clusters (nothing to resample), the most accurate one."""
    keys = [frozenset(k) for k in gold_keys]
    answers = sorted({k for ks in keys for k in ks}, key=str)
    codes, cluster_of = np.unique(np.asarray(clusters), return_inverse=True)
    if not answers or len(codes) < 2:
        return best_constant(keys)
    from scipy import sparse  # here, not at the top, as in intervals: startup stays light

    column = {a: j for j, a in enumerate(answers)}
    items, cols = zip(*((i, column[a]) for i, ks in enumerate(keys) for a in ks), strict=True)
    right = sparse.csc_matrix(
        (np.ones(len(items)), (np.asarray(items), np.asarray(cols))),
        shape=(len(keys), len(answers)),
    )
    to_cluster = sparse.csr_matrix(
        (np.ones(len(keys)), (cluster_of, np.arange(len(keys)))), shape=(len(codes), len(keys))
    )
    drawn = _resample_counts(len(codes), seed)
    model = drawn @ (to_cluster @ correct)
    constants = np.asarray((to_cluster @ right).T @ drawn.T).T  # resamples x answers
    boot = (model[:, None] - constants) / (drawn @ (to_cluster @ np.ones(len(keys))))[:, None]
    p = (1 + np.sum(boot <= margin + _TIE, axis=0)) / (N_BOOT + 1)
    accuracy = np.asarray(right.sum(axis=0)).ravel()
    # the largest p, then the most accurate, then the first in sorted order
    j = max(range(len(answers)), key=lambda j: (p[j], accuracy[j], -j))
    return answers[j], right[:, j].toarray().ravel().astype(bool)


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
    original item, 0/1 or a score in [0, 1]) with its cluster-bootstrap interval, the
    binding constant answer's accuracy on the same items (:func:`binding_constant`), the
    paired excess with its interval, and the one-sided p-value of "the excess is above
    ``margin``", the largest over every constant answer; ``competent`` when that p is below
    :data:`ALPHA`."""
    correct = np.asarray(correct, dtype=float)
    answer, constant = binding_constant(correct, gold_keys, clusters, seed=seed, margin=margin)
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
        "method": f"accuracy: {acc.method}; excess over every constant answer right on some "
        f"item (the binding one shown): {excess['method']}, one-sided test of excess > "
        f"{margin:g} at {ALPHA:g} for each, intersection-union (the largest p)",
    }
