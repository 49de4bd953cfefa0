"""Intervals over base examples for the natural-logic rates (TCE, DCE), their differences
and their ratio.

A rate is a ratio estimator: the CP summed over the drawn bases' pairs over their number of
pairs. The seed set is a random draw of bases from the grid, and what one base brings (its
pairs' CP sum and count) is a fixed function of the base for a given model, so bases are
independent draws and the pairs of one base are not. Every quantity here is a linear
contrast of rates measured on the same bases (TCE - DCE; TCE of one model minus another's),
or a ratio of two, which is decided by such contrasts (Fieller: ``DCE / TCE = r`` exactly
when ``DCE - r * TCE = 0``).

A contrast's standard error is the ratio estimators' linearized variance over bases,
``k/(k-1) * sum_b e_b**2`` with ``e_b = (CP sum_b - rate * pairs_b) / pairs`` per rate (the
cluster-robust variance of survey sampling; rates of the same bases get a covariance from
the same sums). Its interval is a **studentized (bootstrap-t) interval** over bases, never
narrower than the t-interval with ``k - 1`` degrees of freedom: the quantiles of
``(contrast* - contrast) / se*`` over bootstrap resamples of the bases replace t's where
they lie further out. Per-base rates are far from normal (a model is right or wrong on a
base, and its pairs follow: rates pile up near 0 and 1), so the estimate and its standard
error move together and a symmetric interval misses on one side (the percentile bootstrap
and the t-interval missed on that side in 7-12% of seed sets of 12 bases and 3-8% of 24).

A rate that is the same in every base (every base at 0: a model that never moves; at 1: a
reader flipping every label-changing pair) has no spread to estimate a variance from, and a
zero variance would claim a certainty that k bases do not give (a base where the model
behaves otherwise may just not have been drawn). So every rate's variance is what its bases'
spread shows plus what n bases cannot show (:func:`flat_variance`): the variance of an
Agresti-Coull proportion with no success in n trials, as if each of the n bases with pairs
of the rate were one trial (all its pairs moving together), ``p(1 - p) / (n + z**2)`` with
``p = (z**2 / 2) / (n + z**2)``. Two narrower rules failed. Giving that variance only to a
rate exactly the same on every base broke the bootstrap-t: a TCE of 1 on 20 of 24 bases,
0.97 on two and near 0 on two had a variance near 0 in every resample without the two near
0 (12% of them), whose t statistics ran past 30 and put TCE - DCE = 0.91 at [-0.79, 1.0];
and DCE/TCE had no upper end on 3.7% of seed sets of 16 bases. Taking the larger of the two
variances bound in more resamples than samples (a resample holds fewer distinct bases, so
less spread) and cut the bootstrap t's tails: 3-4% misses at 24 to 48 bases.

``benchmarks/natural_logic_coverage.py`` measures it: seed sets drawn from the shared NLI-XY
grid; partial readers and logistic models with context- and word-pair-level random effects
placed on the card's edges (20 cases), 300 seed sets each, pooled; the share of 95%
intervals that miss the truth on the side that grants a false "faithful" (the lower end of
TCE - DCE above it, the upper end of DCE/TCE below it; 2.5% is nominal), and DCE/TCE
intervals with no upper end:

=======  ===============================  ===============================
 bases    the flat-rate variance added     given only to exactly flat rates
=======  ===============================  ===============================
 12       0.7% / 0.4%, 0.4% unbounded      5.0% / 5.1%, 13% unbounded
 16       1.4% / 1.2%, none unbounded      2.6% / 2.6%, 3.7% unbounded
 20       1.8% / 1.5%                      1.8% / 2.1%, 0.7% unbounded
 24       1.8% / 1.8%                      1.4% / 1.4%
 32       1.8% / 1.7%                      0.8% / 0.8%
 48       2.1% / 2.0%                      1.0% / 1.0%
=======  ===============================  ===============================

(misses of TCE - DCE / of DCE/TCE). The price is width where the rule was already right:
TCE - DCE's median interval is 5% wider at 32 and 48 bases, 2% at 24, as wide at 20, and
narrower at 12 and 16, where the old one blew up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from faithprobe.metrics.intervals import LEVEL, N_BOOT

Z = 1.959963984540054  # the standard normal's 97.5% quantile (the Agresti-Coull pseudo-count)
ALPHA = (1 - LEVEL) / 2
# Below this many bases the effects get no interval (so no verdict). At 16 bases the
# interval's one-sided miss is 1.2-1.4% against 2.5% nominal (table above), and a
# reader (TCE = 1, DCE = 0 on every base) is faithful, and competent on 98% of the seed sets
# of the shared grid (92% at 12: the best constant label is beaten by its 5-point margin
# only when at least 3 bases carry the minority label).
MIN_BASES = 16
_BISECTIONS = 30  # halvings of [0, 1] when a ratio's bound is searched: 1e-9 precise


def rate_moments(sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rates and their covariance from CP sums and pair counts of shape ``(..., m, k)``
    (m rates over k bases; a base with no pair of a rate has 0 and 0 there): rates of shape
    ``(..., m)``, covariance ``(..., m, m)`` (module docstring; NaN for a rate with no
    pair)."""
    k = sums.shape[-1]
    totals = counts.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = sums.sum(-1) / totals
        influence = (sums - values[..., None] * counts) / totals[..., None]
    cov = k / (k - 1) * influence @ np.swapaxes(influence, -1, -2)
    diagonal = np.einsum("...ii->...i", cov)  # a writable view of the variances
    diagonal[...] = diagonal + flat_variance((counts > 0).sum(-1))
    return values, cov


def flat_variance(n: np.ndarray | int) -> np.ndarray:
    """The variance of a rate that is 0 (or 1) on every one of ``n`` bases: that of an
    Agresti-Coull proportion with no success in n trials, added to every rate's (module
    docstring)."""
    p = (Z**2 / 2) / (n + Z**2)
    return p * (1 - p) / (n + Z**2)


@dataclass(frozen=True)
class BaseRates:
    """Rates measured on the same k bases, with bootstrap resamples of the bases."""

    values: np.ndarray  # (m,)
    cov: np.ndarray  # (m, m)
    boot_values: np.ndarray  # (B, m)
    boot_cov: np.ndarray  # (B, m, m)
    k: int
    t: float  # the two-sided 95% quantile of Student's t with k - 1 degrees of freedom

    def _studentized(self, w: np.ndarray) -> tuple[float, float, float, float, np.ndarray]:
        """Contrast ``w @ rates``: estimate, standard error, the quantiles read below and
        above it (bootstrap-t, never inside t's), and the bootstrap t statistics."""
        value = float(w @ self.values)
        se = float(np.sqrt(max(w @ self.cov @ w, 0.0)))
        boot_se = np.sqrt(np.maximum(np.einsum("i,bij,j->b", w, self.boot_cov, w), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            boot_t = (self.boot_values @ w - value) / boot_se
        boot_t = boot_t[np.isfinite(boot_t)]
        lo, hi = np.quantile(boot_t, [ALPHA, 1 - ALPHA]) if len(boot_t) else (0.0, 0.0)
        return value, se, min(lo, -self.t), max(hi, self.t), boot_t

    def contrast(self, weights, low: float = -np.inf, high: float = np.inf) -> dict:
        """``weights @ rates`` (a rate, TCE - DCE, a difference of models) with its interval
        clipped to [low, high] and the two-sided p-value of "it is 0" (the larger of the
        bootstrap-t's and t's; 1 or 0 for a contrast that is the same in every base)."""
        from scipy import stats  # here, not at the top: a re-run whose metrics are remembered

        w = np.asarray(weights, dtype=float)
        value, se, q_lo, q_hi, boot_t = self._studentized(w)
        if not se > 0:
            return {"value": value, "ci_low": value, "ci_high": value, "p_value": float(value == 0)}
        observed = value / se
        p_t = 2 * stats.t.sf(abs(observed), self.k - 1)
        p_boot = 2 * min(np.mean(boot_t >= observed), np.mean(boot_t <= observed))
        return {
            "value": value,
            "ci_low": max(value - q_hi * se, low),
            "ci_high": min(value - q_lo * se, high),
            "p_value": float(min(1.0, max(p_t, p_boot))),
        }

    def ratio(self, num: int, den: int) -> dict:
        """``rates[num] / rates[den]`` with the set of r whose contrast ``num - r * den`` the
        interval of :meth:`contrast` does not exclude (Fieller's construction), searched as
        ``theta = r / (1 + r)`` in [0, 1]. ``ci_high`` is None where that set is unbounded
        (the denominator not clearly above 0); both are None when neither rate is."""
        a, b = self.values[num], self.values[den]
        value = a / b if b > 0 else None
        if not a + b > 0:
            return {"value": value, "ci_low": None, "ci_high": None}
        basis = np.eye(len(self.values))

        def ends(theta: float) -> tuple[float, float]:  # the contrast's interval at theta
            c, se, q_lo, q_hi, _ = self._studentized((1 - theta) * basis[num] - theta * basis[den])
            return c - q_hi * se, c - q_lo * se

        estimate = a / (a + b)
        low = 0.0 if ends(0.0)[0] <= 0 else _bisect(lambda th: ends(th)[0] <= 0, estimate, 0.0)
        high = None if ends(1.0)[1] >= 0 else _bisect(lambda th: ends(th)[1] >= 0, estimate, 1.0)
        return {
            "value": value,
            "ci_low": low / (1 - low),
            "ci_high": None if high is None else high / (1 - high),
        }


def _bisect(accepted: Callable[[float], bool], inside: float, outside: float) -> float:
    """The edge between ``inside`` (accepted) and ``outside`` (not) of an accepted range."""
    for _ in range(_BISECTIONS):
        mid = (inside + outside) / 2
        inside, outside = (mid, outside) if accepted(mid) else (inside, mid)
    return inside


def base_rates(sums: np.ndarray, counts: np.ndarray, seed: int) -> BaseRates:
    """:class:`BaseRates` from CP sums and pair counts per rate and base (shape (m, k),
    k >= 2), with ``N_BOOT`` resamples of the bases seeded by ``seed`` (the same resamples
    for every model with the same number of bases)."""
    from scipy import stats  # here, not at the top (see contrast)

    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    k = sums.shape[-1]
    idx = np.random.default_rng(seed).integers(0, k, size=(N_BOOT, k))
    values, cov = rate_moments(sums, counts)
    boot_values, boot_cov = rate_moments(
        np.moveaxis(sums[:, idx], 1, 0), np.moveaxis(counts[:, idx], 1, 0)
    )
    return BaseRates(values, cov, boot_values, boot_cov, k, float(stats.t.ppf(1 - ALPHA, k - 1)))
