"""Alignment of counterfactual and saliency evidence (Ray Choudhury, Rogers & Augenstein,
"Machine reading, fast and slow"), for the ``right-reasons`` suite.

The method checks in two ways whether a QA model uses what a careful reader would: the
*counterfactual* (does it answer both the original and the counterfactual exactly right?)
and *saliency* (is the positive partition more salient than the negative one, see
:mod:`faithprobe.saliency.partitions`?). An instance is **aligned** when both say yes.

**Saliency test** (:func:`saliency_test`): a one-tailed independent two-sample t-test of
H1 "mean saliency of the positive tokens > mean of the negative tokens", at ``alpha``. It is
**Student's** test (pooled variance, scipy's ``equal_var=True``), not Welch's: the positive
partition is often a single token (BERT's vocabulary has "earlier", "later", "older" as one
token), and Welch's test needs a variance in each sample, so it could never pass such an
instance; Student's test takes the spread from the negative tokens (it then asks whether the
positive token stands out of the negative ones' distribution). Its price is the
equal-variance assumption. The test runs on the raw saliency values as the attribution
method gives them (Integrated Gradients: non-negative norms; Occlusion: signed logit drops).
It cannot run (decision False, with the reason) on an empty partition, on fewer than three
tokens in all (no degree of freedom), or on partitions that overlap. When neither partition
has any spread (every positive token equally salient, every negative one too) the t
statistic is a division by zero; the decision is then exact: the positive mean is above the
negative one or not.

**Saliency of the original input.** The method computes saliency on the original instance
only, so the partitions and saliency of a row are the original's; the counterfactual enters
through its exact match alone.

**Random control** (:func:`random_partition`): the same test on partitions of the same sizes
drawn at random from the union of both partitions' tokens, with a generator seeded per
instance (:func:`~faithprobe.seeding.rng_for` on the run seed and the instance id, so every
model and method sees the same draw for an instance). An alignment rate not above the
control's says the partitions mean nothing to the model.

**Denominator.** The alignment score is the method's (its Table 4): the share of aligned
instances among those answered exactly right on both the original and the counterfactual,
the only ones that can align. Dividing by every instance instead mixes accuracy into the
score (a model with few answers right scores near 0 whatever its saliency). The random
control shares that denominator, and so does every saliency method compared (IG and
Occlusion read the same instances; the caller passes the instances every method decided).

**Significance rate.** Besides alignment, the share of instances whose positive partition
passes the test at all, and the share whose random partition does, over every instance
with saliency (the answers do not enter): the random partition's rate is the method's
sanity check (a calibrated test passes about ``alpha`` of them; a rate as high as the real
partitions' says the heuristic partition is no more salient than chance). Real and random
are compared by an exact McNemar test, paired by instance.

Tables: :func:`instance_alignment_rows` adds the per-instance decisions to a results table;
:func:`alignment_scores` aggregates them per (dataset, model, method).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from faithprobe.metrics.intervals import paired_proportion_difference, wilson
from faithprobe.saliency.partitions import Partition
from faithprobe.seeding import rng_for

ALPHA = 0.05
CONTROL = "random-partition"
GROUPS = ["dataset", "model", "method"]

EMPTY = "empty partition"
TOO_FEW = "fewer than 3 tokens in all"
OVERLAP = "the partitions share tokens"


@dataclass(frozen=True)
class SaliencyTest:
    """Outcome of :func:`saliency_test`: the t statistic, one-tailed p-value, whether the
    positive partition is significantly more salient, and why not when the test cannot run."""

    statistic: float
    p_value: float
    passed: bool
    n_positive: int
    n_negative: int
    reason: str | None = None


def saliency_test(
    saliency: Sequence[float],
    positive_idx: Sequence[int],
    negative_idx: Sequence[int],
    alpha: float = ALPHA,
) -> SaliencyTest:
    """Is the mean saliency of the tokens ``positive_idx`` higher than that of
    ``negative_idx``? Student's one-tailed t-test (module docstring)."""
    values = np.asarray(saliency, dtype=np.float64)
    pos, neg = values[list(positive_idx)], values[list(negative_idx)]
    sizes = (len(pos), len(neg))
    if not all(sizes):
        reason = EMPTY
    elif sum(sizes) < 3:
        reason = TOO_FEW
    elif set(positive_idx) & set(negative_idx):
        reason = OVERLAP
    else:
        reason = None
    if reason:
        return SaliencyTest(float("nan"), float("nan"), False, *sizes, reason)
    scale = max(1.0, float(np.abs(values).max()))
    if max(np.ptp(pos), np.ptp(neg)) <= 1e-12 * scale:  # no spread: the means decide
        diff = pos.mean() - neg.mean()
        statistic = np.sign(diff) * np.inf if diff else np.nan
        return SaliencyTest(float(statistic), 0.0 if diff > 0 else 1.0, bool(diff > 0), *sizes)
    res = stats.ttest_ind(pos, neg, equal_var=True, alternative="greater")
    p = float(res.pvalue)
    return SaliencyTest(float(res.statistic), p, p < alpha, *sizes)


def instance_alignment(og_correct: bool, cf_correct: bool, test: SaliencyTest) -> bool:
    """Aligned: the original and the counterfactual both answered exactly right (EM = 1)
    and the saliency test passed."""
    return bool(og_correct and cf_correct and test.passed)


def random_partition(
    rng: np.random.Generator, n_positive: int, candidates: Sequence[int]
) -> Partition:
    """A control partition: ``n_positive`` of ``candidates`` (token indices: the union of
    both real partitions) drawn without replacement as positive, the rest negative, so
    both parts keep their sizes. The draw depends on the set of candidates, not their
    order."""
    pool = sorted(set(candidates))
    if not 0 <= n_positive <= len(pool):
        raise ValueError(f"cannot draw {n_positive} positive tokens from {len(pool)}")
    drawn = rng.permutation(len(pool))
    positive = sorted(pool[i] for i in drawn[:n_positive])
    negative = sorted(pool[i] for i in drawn[n_positive:])
    return Partition(tuple(positive), tuple(negative))


def instance_alignment_rows(
    frame: pd.DataFrame, *, seed: int = 0, alpha: float = ALPHA
) -> pd.DataFrame:
    """Per-instance decisions. ``frame`` has one row per (dataset, model, method, instance):
    ``id``, ``og_em`` and ``cf_em`` (exact match of the original and counterfactual
    answers), ``saliency`` (per token, of the original input), ``positive`` and
    ``negative`` (token indices, :func:`~faithprobe.saliency.partitions.token_partition`).
    Added: ``statistic``, ``p_value``, ``passed``, ``reason``, ``both_correct``,
    ``aligned``, and the random control's ``control_passed`` and ``control_aligned``."""
    out = []
    for row in frame.itertuples(index=False):
        test = saliency_test(row.saliency, row.positive, row.negative, alpha)
        rng = rng_for(seed, str(row.id), CONTROL)
        control = random_partition(rng, len(row.positive), [*row.positive, *row.negative])
        control_test = saliency_test(row.saliency, control.positive, control.negative, alpha)
        og, cf = row.og_em == 1, row.cf_em == 1
        out.append(
            {
                "statistic": test.statistic,
                "p_value": test.p_value,
                "passed": test.passed,
                "reason": test.reason,
                "both_correct": og and cf,
                "aligned": instance_alignment(og, cf, test),
                "control_passed": control_test.passed,
                "control_aligned": instance_alignment(og, cf, control_test),
            }
        )
    return pd.concat(
        [frame.reset_index(drop=True), pd.DataFrame(out, index=range(len(frame)))], axis=1
    )


# (name, column, over): each rate's column and the instances it is a share of
RATES = (
    ("aligned", "aligned", "both_correct"),
    ("control", "control_aligned", "both_correct"),
    ("significant", "passed", "instances"),
    ("control_significant", "control_passed", "instances"),
)
# (test column, the two paired rates it compares, the instances they are shares of)
TESTS = (
    ("alignment_p", "aligned", "control_aligned", "both_correct"),
    ("significance_p", "passed", "control_passed", "instances"),
)


def mcnemar_exact(a: pd.Series, b: pd.Series) -> float:
    """Two-sided exact McNemar test of paired booleans ``a`` and ``b`` (the same instances):
    a binomial test of the discordant pairs at 1/2. 1.0 when there is none."""
    a, b = a.astype(bool), b.astype(bool)
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def _share(k: int, n: int) -> tuple[float, float, float]:
    """``k / n`` with its Wilson interval; NaNs when ``n`` is 0."""
    return (k / n if n else float("nan"), *wilson(k, n))


def alignment_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, method): ``instances`` (with a saliency decision), ``n`` of them
    answered exactly right on both the original and the counterfactual (the method's
    denominator, module docstring) and ``both_correct`` (``n / instances``); each with a
    Wilson 95% interval (instances taken as independent): ``aligned`` (share of the ``n``
    whose positive partition passed the saliency test), ``control`` (the random-partition
    control's share of the same ``n``), ``significant`` and ``control_significant`` (shares
    of all ``instances`` whose real / random partition passed, whatever the answers: the
    method's sanity check -- a rate near ``alpha`` says the test is calibrated, one near
    ``significant`` that the real partitions are no more salient than chance); the exact
    McNemar tests of real against random partitions, paired by instance: ``alignment_p``
    (aligned vs control) and ``significance_p`` (significant vs control_significant); and
    ``excess`` (aligned minus control on the ``n`` instances) with Newcombe's paired 95%
    interval (:func:`~faithprobe.metrics.intervals.paired_proportion_difference`; NaNs
    when ``n`` is 0: nothing can align). ``frame`` is :func:`instance_alignment_rows`'s
    output (or any frame with its boolean columns); for one denominator across methods,
    give every method the same instances."""
    out = []
    for keys, rows in frame.groupby(GROUPS, sort=True):
        both = rows[rows["both_correct"].astype(bool)]
        over = {"both_correct": both, "instances": rows}
        record = dict(zip(GROUPS, keys, strict=True)) | {"instances": len(rows), "n": len(both)}
        for name, column, base in RATES:
            value, lo, hi = _share(int(over[base][column].sum()), len(over[base]))
            record |= {name: value, f"{name}_ci_low": lo, f"{name}_ci_high": hi}
        record["both_correct"] = len(both) / len(rows)
        for name, real, control, base in TESTS:
            record[name] = mcnemar_exact(over[base][real], over[base][control])
        excess = paired_proportion_difference(both["aligned"], both["control_aligned"])
        record |= dict(zip(("excess", "excess_ci_low", "excess_ci_high"), excess, strict=True))
        out.append(record)
    return pd.DataFrame(out)
