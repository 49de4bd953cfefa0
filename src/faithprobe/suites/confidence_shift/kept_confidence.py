"""Instances that keep their confidence under a probe, in the ``confidence-shift`` suite:
which instances' confidence does not drop when no choice is correct, and how they differ
from the rest. This view is ours, not the method's: Shen & Kejriwal analyse the
*benchmark's* irregularities (answer positions, choice length, prompt overlap, word
frequencies: :mod:`~faithprobe.suites.confidence_shift.benchmark_irregularity`); this
module asks the same kind of question of single instances.

The premise is the method's: a model that reads the question and the choices should be less
sure of its pick once the question, or the right answer, is gone. Most instances'
confidence drops; this view singles out those that behave otherwise and asks what sets
them apart. Here, per subject and probe:

* An instance's *confidence* is its MaxProb, the top choice confidence (the quantity the
  method's MaxProb detector thresholds, defined for every probe). Before: on the original
  input; after: the mean over the probe's trials. The instance **kept** its confidence when
  it did not drop (after >= before, within :data:`TOLERANCE`), and it **rose** when
  after > before. The share of kept instances carries a Wilson interval over instances;
  their ids are listed (``kept_ids``).
* **Features** of each instance, all read off the original instance (the same for every
  probe): its original confidence, whether the model got it right (a tie's shared credit),
  the prompt's and the right answer's length in words, the share of the right answer's
  words that occur in the prompt, and, where the data names one, its category (Social
  IQA: the kind of question; HellaSwag: the activity), as one 0/1 indicator per category.
* **How kept instances differ** from the ones whose confidence dropped: per feature, the
  mean over each group, their difference with a Welch t interval (95%) and Welch's t-test
  (scipy's ``ttest_ind``, unequal variances; on an indicator it compares the two groups'
  shares of that category). The p-values of one subject and probe are Holm-adjusted
  together (the features are looked at as a family), and the categories also get one
  omnibus chi-square test of independence (category x kept).

Categories with fewer than :data:`MIN_CATEGORY` instances are pooled into ``other``, so
that a long tail (HellaSwag has about 190 activities) does not become a row per instance.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from faithprobe.metrics.comparison import adjust
from faithprobe.metrics.intervals import LEVEL, wilson
from faithprobe.suites.confidence_shift.choice_words import overlap, words

TOLERANCE = 1e-9  # a change of MaxProb this small is no change (rounding of equal inputs)
ROUNDING = 1e-9  # a feature that varies less than this within a group is a constant
MIN_CATEGORY = 10  # categories with fewer instances are pooled into OTHER
OTHER = "other"
CRITERION = "MaxProb after the probe (mean over trials) >= MaxProb on the original"
# feature -> what it is, in the report's words
FEATURES = {
    "original_confidence": "original confidence (MaxProb)",
    "originally_correct": "originally correct",
    "prompt_words": "prompt length (words)",
    "answer_words": "right answer length (words)",
    "answer_prompt_overlap": "right answer's words found in the prompt (share)",
}
CATEGORY_PREFIX = "category: "


def instance_features(originals: pd.DataFrame) -> pd.DataFrame:
    """One row per instance (the index of ``originals``: one row per instance holding the
    original-input columns) with :data:`FEATURES` and the instance's ``category`` (None
    where the data names none)."""
    right = [c[int(i)] for c, i in zip(originals["original_choices"], originals["label"],
                                       strict=True)]  # fmt: skip
    return pd.DataFrame(
        {
            "original_confidence": originals["original_maxprob"].astype(float),
            "originally_correct": originals["original_credit"].astype(float),
            "prompt_words": [float(len(words(p))) for p in originals["original_prompt"]],
            "answer_words": [float(len(words(a))) for a in right],
            "answer_prompt_overlap": [
                overlap(a, p) for a, p in zip(right, originals["original_prompt"], strict=True)
            ],
            "category": originals.get("category"),
        },
        index=originals.index,
    )


def pooled_categories(categories: pd.Series) -> pd.Series | None:
    """The categories with rare ones (fewer than :data:`MIN_CATEGORY` instances) pooled into
    :data:`OTHER`; None when the data names no category, or only one."""
    named = categories.dropna().astype(str)
    if named.empty:
        return None
    counts = named.value_counts()
    pooled = named.where(named.map(counts) >= MIN_CATEGORY, OTHER)
    return pooled if pooled.nunique() > 1 else None


def welch(kept: np.ndarray, dropped: np.ndarray) -> dict:
    """Mean of each group, their difference (kept - dropped) with a Welch t interval at
    :data:`LEVEL` and Welch's two-sided t-test; NaN where a group has fewer than two
    instances. Where neither group varies the difference has no sampling error: the
    interval is the difference itself and p is 1 if it is 0, else 0 (as
    :func:`~faithprobe.suites.confidence_shift.metrics.one_sample_p` treats a constant)."""
    out = {
        "kept_mean": float(kept.mean()) if len(kept) else float("nan"),
        "dropped_mean": float(dropped.mean()) if len(dropped) else float("nan"),
        "n_kept": len(kept),
        "n_dropped": len(dropped),
        "test": "Welch's t-test (two-sided), Welch t interval",
    }
    out["difference"] = out["kept_mean"] - out["dropped_mean"]
    if min(len(kept), len(dropped)) < 2:
        return {**out, "ci_low": float("nan"), "ci_high": float("nan"), "p_value": float("nan")}
    if np.ptp(kept) <= ROUNDING and np.ptp(dropped) <= ROUNDING:  # two constants
        d = out["difference"]
        return {**out, "ci_low": d, "ci_high": d, "p_value": float(abs(d) <= ROUNDING)}
    with warnings.catch_warnings():  # scipy warns of a constant group, whose variance 0 is exact
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        res = stats.ttest_ind(kept, dropped, equal_var=False)
    ci = res.confidence_interval(LEVEL)
    return {**out, "ci_low": float(ci.low), "ci_high": float(ci.high),
            "p_value": float(res.pvalue)}  # fmt: skip


def category_test(categories: pd.Series, kept: pd.Series) -> dict:
    """Chi-square test of independence of category and whether it kept its confidence (scipy's
    ``chi2_contingency``); the smallest expected count says how far to trust its
    approximation."""
    table = pd.crosstab(categories, kept)
    if table.shape[1] < 2:  # every instance kept its confidence, or none
        return {"test": "chi-square test of independence", "statistic": float("nan"),
                "df": 0, "p_value": float("nan"), "min_expected": float("nan")}  # fmt: skip
    res = stats.chi2_contingency(table.to_numpy())
    return {"test": "chi-square test of independence", "statistic": float(res.statistic),
            "df": int(res.dof), "p_value": float(res.pvalue),
            "min_expected": float(res.expected_freq.min())}  # fmt: skip


def kept_confidence(
    originals: pd.DataFrame, before: pd.Series, after: pd.Series
) -> tuple[dict, list[dict]]:
    """For one subject and probe: the kept-confidence summary and one comparison row per
    feature (see the module docstring). ``before`` and ``after`` are MaxProb per instance,
    indexed like ``originals``."""
    change = (after - before).reindex(originals.index)
    kept = change >= -TOLERANCE
    features = instance_features(originals)
    k, n = int(kept.sum()), len(kept)
    lo, hi = wilson(k, n)
    summary = {
        "n_instances": n,
        "kept": k,
        "value": k / n if n else float("nan"),
        "ci_low": lo,
        "ci_high": hi,
        "rose": int((change > TOLERANCE).sum()),
        "mean_change": float(change.mean()),
        "kept_mean_change": float(change[kept].mean()) if k else float("nan"),
        "criterion": CRITERION,
        "kept_ids": [str(i) for i in change.index[kept]],
    }
    columns = {name: features[name] for name in FEATURES}
    categories = pooled_categories(features["category"])
    if categories is not None:
        summary["categories"] = category_test(categories, kept.reindex(categories.index))
        for name in sorted(categories.unique()):
            columns[CATEGORY_PREFIX + name] = (categories == name).astype(float)
    rows = []
    for name, values in columns.items():
        values = values.reindex(originals.index)
        known = values.notna()
        rows.append(
            {
                "feature": name,
                **welch(
                    values[known & kept].to_numpy(float),
                    values[known & ~kept].to_numpy(float),
                ),
            }
        )
    family = [*rows, *([summary["categories"]] if categories is not None else [])]
    for test, p in zip(family, adjust([t["p_value"] for t in family], "holm"), strict=True):
        test["p_holm"] = p
    return summary, rows
