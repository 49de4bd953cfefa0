"""Confidence intervals for means over clustered observations.

Items generated from one base item share its entity, fact and wording, so they are not
independent. Intervals therefore resample *clusters* (base items), not rows: a percentile
bootstrap of the ratio estimator sum(values) / count over resampled clusters. Where that
bootstrap is degenerate (every cluster at 0 or every cluster at 1, so every resample gives
the same number), proportions fall back to a Wilson interval with the number of clusters
as n, which is conservative.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

N_BOOT = 2000
LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float
    ci_high: float
    n: int
    n_clusters: int
    method: str

    def as_dict(self) -> dict:
        return asdict(self)


def _cluster_sums(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes, index = np.unique(clusters, return_inverse=True)
    sums = np.bincount(index, weights=values, minlength=len(codes))
    counts = np.bincount(index, minlength=len(codes)).astype(float)
    return sums, counts


def _boot_ratio(sums: np.ndarray, counts: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(sums), size=(N_BOOT, len(sums)))
    return sums[idx].sum(1) / counts[idx].sum(1)


def wilson(successes: int, n: int) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    from scipy import stats  # here, not at the top: a re-run whose metrics are remembered

    ci = stats.binomtest(int(successes), int(n)).proportion_ci(LEVEL, method="wilson")
    return float(ci.low), float(ci.high)


def clustered_mean(values, clusters, *, seed: int = 0, proportion: bool = False) -> Estimate:
    """Mean of ``values`` with a cluster-bootstrap 95% CI (see module docstring)."""
    values = np.asarray(values, dtype=float)
    clusters = np.asarray(clusters)
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, 0, "no data")
    sums, counts = _cluster_sums(values, clusters)
    value = float(sums.sum() / counts.sum())
    k = len(sums)
    method = f"cluster bootstrap over {k} base items, {N_BOOT} resamples, percentile"
    if k < 2:
        return Estimate(value, float("nan"), float("nan"), n, k, "single cluster: no interval")
    means = sums / counts
    if proportion and (np.all(means == 0) or np.all(means == 1)):
        lo, hi = wilson(round(value * k), k)
        return Estimate(value, lo, hi, n, k, f"Wilson over {k} base items (all at {value:g})")
    boot = _boot_ratio(sums, counts, seed)
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    return Estimate(value, float(lo), float(hi), n, k, method)


def geometric_mean_ratio(log_ratios, clusters, *, seed: int = 0) -> Estimate:
    """exp(mean log ratio) with the interval of the mean log ratio, exponentiated."""
    e = clustered_mean(log_ratios, clusters, seed=seed)
    return Estimate(
        float(np.exp(e.value)),
        float(np.exp(e.ci_low)),
        float(np.exp(e.ci_high)),
        e.n,
        e.n_clusters,
        f"geometric mean; {e.method}",
    )


def paired_difference(a: pd.Series, b: pd.Series, *, seed: int = 0) -> dict:
    """Compare per-cluster means a and b (indexed by cluster) on the clusters both have:
    mean difference with a bootstrap CI and a Wilcoxon signed-rank test."""
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    diff = (joined["a"] - joined["b"]).to_numpy()
    n = len(diff)
    out = {
        "n": n,
        "difference": float(diff.mean()) if n else float("nan"),
        "test": "Wilcoxon signed-rank over base items (two-sided)",
    }
    if n < 2:
        return {
            **out,
            "statistic": float("nan"),
            "p_value": float("nan"),
            "ci_low": float("nan"),
            "ci_high": float("nan"),
        }
    boot = _boot_ratio(diff, np.ones(n), seed)
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    if np.all(diff == 0):
        statistic, p_value = 0.0, 1.0
    else:
        from scipy import stats

        res = stats.wilcoxon(diff, zero_method="zsplit")
        statistic, p_value = float(res.statistic), float(res.pvalue)
    return {
        **out,
        "statistic": statistic,
        "p_value": p_value,
        "ci_low": float(lo),
        "ci_high": float(hi),
    }


def paired_proportion_difference(a, b) -> tuple[float, float, float]:
    """The difference of two proportions measured on the same instances, ``mean(a) -
    mean(b)`` of paired booleans, with Newcombe's (1998) square-and-add 95% interval for
    paired data (his method 10): each proportion's Wilson interval, combined through the
    pairs' correlation, estimated with his continuity correction (0 unless the agreement
    exceeds n/2; 0 when a margin is empty). Unlike a bootstrap it does not collapse to a
    point when every pair agrees (n all-zero pairs give about +-3.8/n). NaNs when there are
    no pairs. Written here because SciPy has no paired version (statsmodels'
    ``confint_proportions_2indep`` is for independent samples); tested against Fagerland,
    Lydersen & Laake's worked example."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    n = len(a)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    both, only_a = int((a & b).sum()), int((a & ~b).sum())
    only_b, neither = int((~a & b).sum()), int((~a & ~b).sum())
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    (l1, u1), (l2, u2) = wilson(both + only_a, n), wilson(both + only_b, n)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    agreement = both * neither - only_a * only_b
    if not margins or 0 <= agreement <= n / 2:
        phi = 0.0
    else:
        phi = (agreement - n / 2 if agreement > 0 else agreement) / margins**0.5
    below = ((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2) ** 0.5
    above = ((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2) ** 0.5
    return p1 - p2, p1 - p2 - below, p1 - p2 + above


def paired_cluster_difference(a, b, clusters, *, seed: int = 0, null: float = 0.0) -> dict:
    """``mean(a) - mean(b)`` over items measured twice (two outcomes of one model, a model
    against a constant answer, two models), with a paired cluster bootstrap: the same
    resampled clusters for both, so what the two share cancels. Returns the estimate, its
    95% percentile interval and one-sided bootstrap p-values against ``null``:
    ``p_above`` for "the difference exceeds ``null``", ``p_below`` for "it falls short of
    it" (each ``(1 + #resamples on the other side) / (B + 1)``, the inversion of the
    percentile interval). A difference that is the same in every cluster has a point
    interval; NaNs when there are fewer than two clusters."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    clusters = np.asarray(clusters)
    n = len(diff)
    out = {"n": n, "n_clusters": 0, "null": null}
    nothing = {"value": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
               "p_above": float("nan"), "p_below": float("nan")}  # fmt: skip
    if n == 0:
        return {**out, **nothing, "method": "no data"}
    sums, counts = _cluster_sums(diff, clusters)
    k = len(sums)
    value = float(sums.sum() / counts.sum())
    out.update(n_clusters=k, value=value)
    if k < 2:
        return {**out, **{**nothing, "value": value}, "method": "single cluster: no interval"}
    boot = _boot_ratio(sums, counts, seed)
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    tol = 1e-12  # a resample equal to the null counts against the claim
    return {
        **out,
        "ci_low": float(lo),
        "ci_high": float(hi),
        "p_above": float((1 + np.sum(boot <= null + tol)) / (N_BOOT + 1)),
        "p_below": float((1 + np.sum(boot >= null - tol)) / (N_BOOT + 1)),
        "method": f"paired cluster bootstrap over {k} clusters, {N_BOOT} resamples, percentile",
    }
