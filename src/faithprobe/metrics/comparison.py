"""Is model b's effect different from model a's? The paired difference of two effects, its
interval and p-value, the adjustment across the card's comparisons, and the items a
comparison would need.

**The difference.** Both effects are functions of means over units (:class:`~faithprobe.
metrics.units.Units`). The clusters are resampled together: a cluster both tables hold is
drawn once for both (what the two models share cancels, which is the point of pairing), and
clusters only one holds are resampled within their own stratum (for two audits that drew
different items: an unpaired, independent bootstrap). Each resample gives ``g(means of b) -
g(means of a)``; their standard deviation is the difference's standard error.

**The interval and p-value** are a t interval around the estimate with that standard error,
inflated by sqrt(K / (K - 1)) for the bootstrap's known shrinkage over K clusters, on
K - 1 degrees of freedom (K the smaller cluster count of the two), and the matching two-sided
t-test of "no difference": so p < 0.05 exactly when the 95% interval excludes 0. A plain
bootstrap interval (estimate ± 1.96 bootstrap SDs) under-covers with the 12-20 clusters a
small audit can have (0.90-0.92 at nominal 0.95); this one covers 0.93-0.96 there (the
simulation tests in ``tests/test_comparison_stats.py``). Where every resample gives the same
difference (every cluster moved the same way), the interval is that point and the p-value
is the exact sign test over the clusters, 2 / 2^K.

**The adjustment** across every comparison on a card is Holm's (family-wise error 5%) or,
on request, Benjamini-Hochberg's (false discovery rate 5%); "supported" means adjusted
p < 0.05.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from faithprobe.metrics.units import FORMULAS, Units
from faithprobe.metrics.verdict import Z_SIDE, Effect

N_BOOT = 2000
LEVEL = 0.95
ALPHA = 0.05
POWER = 0.80
ADJUSTMENTS = ("holm", "bh")
ADJUSTMENT_TEXT = {
    "holm": "Holm's step-down adjustment over all the card's comparisons (family-wise error 5%)",
    "bh": "Benjamini-Hochberg adjustment over all the card's comparisons (false discovery rate 5%)",
}


def _cluster_sums(units: Units, codes: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (in ``codes`` order) and column: the sum of the present values and their
    count."""
    x = units.matrix
    present = ~np.isnan(x)
    index = np.array([codes[c] for c in units.cluster], dtype=int)
    sums = np.zeros((len(codes), x.shape[1]))
    counts = np.zeros((len(codes), x.shape[1]))
    np.add.at(sums, index, np.where(present, x, 0.0))
    np.add.at(counts, index, present)
    return sums, counts


def _weights(strata: Sequence[np.ndarray], n_clusters: int, seed: int) -> np.ndarray:
    """Bootstrap weights, resamples x clusters: each stratum (a set of cluster indices) is
    resampled with replacement within itself."""
    rng = np.random.default_rng(seed)
    w = np.zeros((N_BOOT, n_clusters))
    rows = np.arange(N_BOOT)[:, None]
    for members in strata:
        if len(members):
            draws = rng.integers(0, len(members), size=(N_BOOT, len(members)))
            np.add.at(w, (np.broadcast_to(rows, draws.shape), members[draws]), 1.0)
    return w


def _effect(units: Units, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return FORMULAS[units.formula][1](sums / counts)


def compare_units(a: Units, b: Units, *, seed: int = 0, level: float = LEVEL) -> dict:
    """The difference b - a of two effects (:mod:`module docstring <faithprobe.metrics.
    comparison>`): ``value``, ``ci_low``, ``ci_high``, ``se``, ``p`` (two-sided), ``df``,
    ``n_clusters`` (each side's), ``shared_clusters``, ``paired`` and ``method``. NaNs when
    either effect is undefined or either side has fewer than two clusters."""
    from scipy import stats

    clusters = sorted(set(a.cluster) | set(b.cluster))
    codes = {c: i for i, c in enumerate(clusters)}
    in_a, in_b = set(a.cluster), set(b.cluster)
    shared = [codes[c] for c in clusters if c in in_a and c in in_b]
    only_a = [codes[c] for c in clusters if c in in_a and c not in in_b]
    only_b = [codes[c] for c in clusters if c in in_b and c not in in_a]
    sa, na = _cluster_sums(a, codes)
    sb, nb = _cluster_sums(b, codes)
    value = float(_effect(b, sb.sum(0), nb.sum(0)) - _effect(a, sa.sum(0), na.sum(0)))
    k = min(len(in_a), len(in_b))
    paired = bool(shared) and not only_a and not only_b
    out = {
        "value": value,
        "n_clusters": [len(in_a), len(in_b)],
        "shared_clusters": len(shared),
        "paired": paired,
        "df": k - 1,
    }
    nothing = {"ci_low": math.nan, "ci_high": math.nan, "se": math.nan, "p": math.nan}
    if k < 2 or not math.isfinite(value):
        return {**out, **nothing, "method": "no interval: fewer than two clusters, or undefined"}
    strata = [np.array(s, dtype=int) for s in (shared, only_a, only_b)]
    w = _weights(strata, len(clusters), seed)
    boot = _effect(b, w @ sb, w @ nb) - _effect(a, w @ sa, w @ na)
    boot = boot[np.isfinite(boot)]
    how = (
        f"paired cluster bootstrap over {len(shared)} shared clusters"
        if paired
        else f"stratified cluster bootstrap ({len(shared)} shared clusters, {len(only_a)} and "
        f"{len(only_b)} held by one side only: unpaired where not shared)"
    )
    if len(boot) < N_BOOT // 2:
        return {**out, **nothing, "method": f"{how}: the effect is undefined on most resamples"}
    se = float(boot.std(ddof=1)) * math.sqrt(k / (k - 1))
    if se <= 1e-12:
        p = 1.0 if abs(value) <= 1e-12 else min(1.0, 2.0 / 2.0**k)
        return {**out, "ci_low": value, "ci_high": value, "se": 0.0, "p": p,
                "method": f"{how}: every resample gives the same difference (sign test over "
                f"{k} clusters)"}  # fmt: skip
    q = float(stats.t.ppf(0.5 + level / 2, k - 1))
    p = float(2 * stats.t.sf(abs(value) / se, k - 1))
    return {
        **out,
        "ci_low": value - q * se,
        "ci_high": value + q * se,
        "se": se,
        "p": p,
        "method": f"{how}, {N_BOOT} resamples; t interval and test on {k - 1} df",
    }


def adjust(p_values: Sequence[float], method: Literal["holm", "bh"] = "holm") -> list[float]:
    """Adjusted p-values (NaN stays NaN and does not count towards the family)."""
    p = np.asarray(p_values, dtype=float)
    found = np.flatnonzero(~np.isnan(p))
    out = np.full(len(p), math.nan)
    m = len(found)
    if m == 0:
        return out.tolist()
    if method not in ADJUSTMENTS:
        raise ValueError(f"adjustment must be one of {', '.join(ADJUSTMENTS)}")
    if method == "bh":
        from scipy import stats

        out[found] = stats.false_discovery_control(p[found], method="bh")
        return out.tolist()
    order = found[np.argsort(p[found], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out.tolist()


def compare_effects(a: Effect, b: Effect, *, seed: int = 0) -> dict:
    """The difference b - a of one effect measured on two models (or two audits): paired
    over their units where both have them (:func:`compare_units`); else a normal test of two
    independent estimates, each standard error read off its interval (unpaired, so
    conservative where the two share items)."""
    if a.units is not None and b.units is not None:
        return compare_units(a.units, b.units, seed=seed)
    from scipy import stats

    se = math.hypot(effect_se(a), effect_se(b))
    value = b.value - a.value
    out = {"value": value, "n_clusters": [a.n, b.n], "shared_clusters": 0, "paired": False,
           "df": None}  # fmt: skip
    method = "unpaired normal test from the two 95% intervals (no per-unit numbers)"
    if not (math.isfinite(se) and math.isfinite(value)) or se <= 0:
        nothing = {"ci_low": math.nan, "ci_high": math.nan, "se": math.nan, "p": math.nan}
        return {**out, **nothing, "method": f"{method}: no interval"}
    z = float(stats.norm.ppf(0.5 + LEVEL / 2))
    p = float(2 * stats.norm.sf(abs(value) / se))
    return {**out, "ci_low": value - z * se, "ci_high": value + z * se, "se": se, "p": p,
            "method": method}  # fmt: skip


def effect_se(effect: Effect) -> float:
    """An effect's standard error read off its 95% interval: the half-width on the side
    facing its region's edge (the side a decision depends on), over z(0.975)."""
    if not effect.has_interval:
        return math.nan
    above = effect.value <= effect.region.bound  # the edge is above the estimate
    half = effect.ci_high - effect.value if above else effect.value - effect.ci_low
    return half / Z_SIDE


def scale_to_decide(
    se: float,
    distance: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    clusters: int | None = None,
) -> float | None:
    """How many times the current items a test would need to detect ``distance`` (an
    effect's distance to its edge, or a difference) with ``power`` at two-sided ``alpha``,
    its standard error ``se`` shrinking as 1/sqrt(items), the estimate taken as the truth;
    None where nothing can be said (no standard error, no distance). With the number of
    ``clusters`` the test resamples, the quantiles are Student's t on the degrees of freedom
    the larger sample would have (a few clusters need more than the normal approximation
    says); without, normal."""
    from scipy import stats

    if not (math.isfinite(se) and math.isfinite(distance)) or se <= 0:
        return None
    if abs(distance) <= 1e-9 * se:  # no distance, or rounding noise: no number of items
        return None
    ratio = (se / abs(distance)) ** 2
    scale = (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) ** 2 * ratio
    if clusters:
        for _ in range(20):  # the fixed point of scale = (t(df(scale)) quantiles)^2 * ratio
            df = max(clusters * scale - 1, 1.0)
            z = stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)
            scale, before = z**2 * ratio, scale
            if abs(scale - before) <= 1e-6 * before:
                break
    return float(scale)
