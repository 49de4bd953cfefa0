"""The method's analysis of *benchmark* irregularities (Shen & Kejriwal 2023, Discussion):
could something other than the prompt tell a model which choice to pick?

The method looks at the benchmark itself, and at the choices its model selects, for four
irregularities; here each is computed over the run's instances (the whole file without
``--limit``), once for the right answers (the data's own irregularity, no model involved)
and once per model for the choice it selects on the original instance (its top choice; a
reply naming none is left out):

* **Positions** (:func:`positions`): how the right answers (or the model's picks) fall over
  the answer positions A, B, C, ..., each share with a Wilson interval, and a chi-square
  goodness-of-fit test against the uniform 1/n (scipy's ``chisquare``), per number of
  choices. The paper: Social IQA's right answers are 33.4% A and 33.6% B, HellaSwag's 25%
  each.
* **Length and overlap** (:func:`chosen_vs_others`): per instance, the chosen choice's
  length in words and the mean length of the others; the same for the share of a choice's
  words found in the prompt. Means over instances with t intervals, and the paired
  difference with a t interval and a paired t-test over instances. The paper: the choices
  its model selects on Social IQA have 3.72 words [3.62, 3.82] against 3.69 for the
  others, not significant.
* **Word frequencies** (:func:`chosen_words_correlation`, :func:`frequency_correlation`):
  the Pearson correlation of the word-frequency distributions of the chosen and the other
  choices (every word of either, counted over all instances), beside the same correlation
  for choices picked at random (the control: a pick that ignores the words), and of the
  prompts and all the choices. The paper: 0.982 between selected and non-selected choices
  on Social IQA, 0.997 on HellaSwag. (A bootstrap over instances does not give this
  correlation an interval: resampling duplicates instances' words, which lowers r, and the
  percentile interval of the resamples misses the estimate itself.)

Words are :func:`~faithprobe.suites.confidence_shift.choice_words.words`. The shortcuts a
model ignoring the prompt could take (always the commonest position, the longest choice,
the choice sharing most words with the prompt) are scored in
:func:`faithprobe.suites.confidence_shift.metrics.benchmark_irregularities`, beside 1/n.

This is the method's analysis. The suite's instance-level view (instances whose confidence
does not drop under a probe) is ours: :mod:`~faithprobe.suites.confidence_shift.kept_confidence`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np
from scipy import sparse, stats

from faithprobe.metrics.intervals import LEVEL, wilson
from faithprobe.suites.confidence_shift.choice_words import overlap, words

RIGHT_ANSWERS = "right answers"  # the rows of the data's own irregularities
POSITIONS = string.ascii_uppercase
# feature -> (what it is, its value for one choice given the prompt)
CHOICE_FEATURES = {
    "words": "length (words)",
    "prompt_overlap": "words found in the prompt (share)",
}
CHOSEN_VS_OTHERS = "chosen vs other choices"
PROMPTS_VS_CHOICES = "prompts vs all choices"
RANDOM_DRAWS = 200  # random picks per instance behind the word-frequency control


def _feature(name: str, choice: str, prompt: str) -> float:
    return float(len(words(choice))) if name == "words" else overlap(choice, prompt)


def positions(of: str, chosen: Sequence[int], n_choices: int) -> tuple[list[dict], dict]:
    """One row per position (count, share with a Wilson interval, the uniform 1/n) of the
    ``chosen`` positions of instances with ``n_choices`` choices, and the chi-square test of
    their counts against uniform."""
    counts = np.bincount(np.asarray(chosen, dtype=int), minlength=n_choices)
    n = int(counts.sum())
    rows = []
    for i, count in enumerate(counts):
        lo, hi = wilson(int(count), n)
        rows.append({"of": of, "n_choices": n_choices, "position": POSITIONS[i],
                     "count": int(count), "share": count / n if n else float("nan"),
                     "ci_low": lo, "ci_high": hi, "uniform": 1 / n_choices})  # fmt: skip
    test = {"of": of, "n_choices": n_choices, "n": n, "df": n_choices - 1,
            "test": "chi-square goodness of fit against uniform"}  # fmt: skip
    if n == 0:
        return rows, {**test, "statistic": float("nan"), "p_value": float("nan")}
    res = stats.chisquare(counts)
    return rows, {**test, "statistic": float(res.statistic), "p_value": float(res.pvalue)}


def _mean_test(x: np.ndarray) -> dict:
    """Mean with a t interval at :data:`LEVEL` and the two-sided one-sample t-test of mean
    0; exact where the values do not vary (the interval is the mean, p is 1 if it is 0,
    else 0); NaN with fewer than two values."""
    out = {"mean": float(x.mean()) if len(x) else float("nan")}
    if len(x) < 2:
        return {**out, "ci_low": float("nan"), "ci_high": float("nan"), "p_value": float("nan")}
    if np.ptp(x) <= 1e-12:
        exact = float(abs(out["mean"]) <= 1e-12)
        return {**out, "ci_low": out["mean"], "ci_high": out["mean"], "p_value": exact}
    res = stats.ttest_1samp(x, 0.0)
    ci = res.confidence_interval(LEVEL)
    return {**out, "ci_low": float(ci.low), "ci_high": float(ci.high),
            "p_value": float(res.pvalue)}  # fmt: skip


def _drop_p(estimate: dict) -> dict:
    return {k: v for k, v in estimate.items() if k != "p_value"}


def chosen_vs_others(
    of: str, prompts: Sequence[str], choices: Sequence[Sequence[str]], chosen: Sequence[int]
) -> list[dict]:
    """Per :data:`CHOICE_FEATURES` feature: the chosen choice's value and the mean of the
    other choices' per instance, their means over instances and the paired difference
    (chosen - others) with a t interval and a two-sided paired t-test."""
    out = []
    for name in CHOICE_FEATURES:
        mine, theirs = [], []
        for prompt, options, pick in zip(prompts, choices, chosen, strict=True):
            values = [_feature(name, c, prompt) for c in options]
            mine.append(values[int(pick)])
            theirs.append(np.mean([v for j, v in enumerate(values) if j != int(pick)]))
        a, b = np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float)
        d = _mean_test(a - b)
        out.append({"of": of, "feature": name, "chosen": _drop_p(_mean_test(a)),
                    "others": _drop_p(_mean_test(b)), "difference": d["mean"],
                    "ci_low": d["ci_low"], "ci_high": d["ci_high"], "p_value": d["p_value"],
                    "n": len(a), "test": "paired t-test over instances (two-sided)"})  # fmt: skip
    return out


def _counts(texts: Sequence[str], vocabulary: dict[str, int]) -> sparse.csr_matrix:
    """Texts x vocabulary word counts."""
    rows, cols = [], []
    for i, text in enumerate(texts):
        for word in words(text):
            rows.append(i)
            cols.append(vocabulary.setdefault(word, len(vocabulary)))
    data = np.ones(len(rows))
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), len(vocabulary)))


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation of two [k, V] arrays."""
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    norms = np.sqrt((a * a).sum(-1) * (b * b).sum(-1))
    return (a * b).sum(-1) / np.where(norms > 0, norms, np.nan)


def _summed(matrix: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """The counts of ``rows`` of ``matrix`` summed, as a [1, vocabulary] array."""
    return np.asarray(matrix[rows].sum(0)).reshape(1, -1)


def frequency_correlation(
    of: str, between: str, first: Sequence[str], second: Sequence[str]
) -> dict:
    """The Pearson correlation of the word frequencies of the texts ``first`` and of the
    texts ``second`` (each counted over all its texts, on the union of their words)."""
    vocabulary: dict[str, int] = {}
    counts = _counts([*first, *second], vocabulary)
    a = _summed(counts, np.arange(len(first)))
    b = _summed(counts, np.arange(len(first), len(first) + len(second)))
    return {"of": of, "between": between, "pearson": float(_pearson(a, b)[0]),
            "vocabulary": len(vocabulary), "n": len(first)}  # fmt: skip


def chosen_words_correlation(
    of: str, choices: Sequence[Sequence[str]], chosen: Sequence[int], seed: int = 0
) -> dict:
    """:func:`frequency_correlation` of the chosen and the other choices, beside its control:
    the same correlation when the choice taken per instance is drawn at random
    (:data:`RANDOM_DRAWS` seeded draws; their mean and 2.5 and 97.5 percentiles). A
    selection that follows the choices' words moves r away from the random picks'."""
    texts = [c for options in choices for c in options]
    vocabulary: dict[str, int] = {}
    counts = _counts(texts, vocabulary)
    starts = np.cumsum([0, *(len(c) for c in choices)])[:-1]
    sizes = np.array([len(c) for c in choices])
    every = _summed(counts, np.arange(len(texts)))

    def r(rows: np.ndarray) -> float:
        picked = _summed(counts, rows)
        return float(_pearson(picked, every - picked)[0])

    rng = np.random.default_rng(seed)
    draws = [r(starts + rng.integers(0, sizes)) for _ in range(RANDOM_DRAWS)]
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return {"of": of, "between": CHOSEN_VS_OTHERS,
            "pearson": r(starts + np.asarray(chosen, dtype=int)), "vocabulary": len(vocabulary),
            "n": len(choices), "random_mean": float(np.mean(draws)),
            "random_low": float(low), "random_high": float(high),
            "random_draws": RANDOM_DRAWS}  # fmt: skip


def analyse(
    of: str,
    prompts: Sequence[str],
    choices: Sequence[Sequence[str]],
    chosen: Sequence[int],
    seed: int = 0,
) -> dict[str, list[dict]]:
    """The irregularities of the ``chosen`` choices (the right answers, or a model's picks)
    among ``choices``: ``positions`` and ``position_tests`` per number of choices,
    ``choices`` (:func:`chosen_vs_others`), and ``word_frequencies``: the chosen vs the
    other choices' correlation (for the right answers also the prompts vs all choices')."""
    chosen = [int(c) for c in chosen]
    out: dict[str, list[dict]] = {"positions": [], "position_tests": []}
    sizes = np.array([len(c) for c in choices])
    for k in sorted(set(sizes.tolist())):
        rows, test = positions(of, [c for c, s in zip(chosen, sizes, strict=True) if s == k], k)
        out["positions"] += rows
        out["position_tests"].append(test)
    out["choices"] = chosen_vs_others(of, prompts, choices, chosen)
    out["word_frequencies"] = [chosen_words_correlation(of, choices, chosen, seed)]
    if of == RIGHT_ANSWERS:
        every = [c for options in choices for c in options]
        out["word_frequencies"].append(
            frequency_correlation(of, PROMPTS_VS_CHOICES, list(prompts), every)
        )
    return out
