"""Metrics of the ``confidence-shift`` suite: pure functions of its results table.

The table has one row per (subject, probe trial of an instance); each row carries the
instance's original confidences (softmax over the choices' scores) and those after the
probe. Conventions used throughout:

* An *instance* is one benchmark item (its id: the column ``original_id``); its 5 trials
  of a probe are averaged per instance first, and instances are the unit of every standard
  error and test (trials of one instance are not independent).
* The *agnostic* value is 1/n for an instance with n choices: what a model that knows no
  choice is right would give each of them, and its pseudo-accuracy in expectation.
* Trials that produced exactly the same input as an earlier trial of the same instance
  (every trial of No-Question does) are averaged like the rest, but enter the per-instance
  shift tests once: repeating one observation five times is not five observations.

**Shift type of an instance** (Shen & Kejriwal's four types; the paper leaves the samples of
its tests open, so here is the decision and why). Let *before* be the original confidences
of the instance's incorrect choices and *after* the confidences of the same choices (same
positions) in each distinct trial of the probe. Two two-sided t-tests at the 90% level:

1. after vs before, paired per (choice, trial): a one-sample t-test of the differences.
   Pairing by choice removes the between-choice spread, which is not what changed.
2. after vs agnostic: a one-sample t-test of the after confidences against 1/n. This
   tests their mean, as the method states it (mean confidence of the incorrect choices).

Then *random-like*: differs from before, not from 1/n (the model became uncertain);
*conservative*: not from before, differs from 1/n (it kept its old confidences);
*hybrid*: neither (the data cannot tell the two apart, e.g. before was already near 1/n);
*deviated*: both (it moved, but not towards 1/n). With fewer than two samples a test
cannot be run and the instance is *undetermined*; with zero variance the test is exact
(p = 1 if the mean equals the reference, else 0).

**How many samples a test has.** An instance with n choices has n - 1 incorrect choices per
distinct trial, so its tests have (n - 1) x distinct trials samples. No-Question repeats
one input, so on Social IQA its tests rest on 2 samples (df = 1): they reject rarely, and
"hybrid" (neither rejects) is nearly forced whatever the model does. ``shift_types`` reports
the samples behind each probe's tests; ``pooled_shifts`` is the alternative that does not
run out of samples: one decision per probe from the same two tests run over instances
(each instance's mean change of its incorrect choices' confidences, and their mean minus
1/n; df = instances - 1), which says what the probe does to the model as a whole rather
than to each instance.

**No-Question vs Wrong-Question** (the method's Table 2, column 5): the per-instance mean
confidence of the pseudo-correct choice under each of the two probes, paired over the
instances that have both, with a t-test of the difference (``probe_contrasts``). Both
probes keep the choices and the old answer's slot, so the difference is what keeping an
unrelated question does beside removing the question.

**MaxProb detector**: instances are split in half by a seeded hash of their id; in each
trial the threshold is the mean MaxProb over the first half's original and perturbed inputs,
and on the second half "MaxProb above the threshold => original" is scored over both inputs
of every instance (balanced, chance 50%). The accuracy is the mean over the second half's
instances of each one's share of right calls over its trials (instances are the unit here
too; with every instance in every trial it is the mean of the per-trial accuracies, which
``trial_values`` lists). The thresholds are fitted once: the interval, and a paired
comparison of two models, hold them fixed and resample the scored instances.

**Benchmark irregularities** (:func:`benchmark_irregularities`, the method's Discussion):
where the right answers and each model's picks fall over the answer positions, the chosen
against the other choices' length and overlap with the prompt, and the correlation of their
word frequencies (:mod:`~faithprobe.suites.confidence_shift.benchmark_irregularity`), beside
what the shortcuts those irregularities allow score (:func:`shortcuts`).

**Instances that keep their confidence** (:func:`kept_confidence`, our view, not the
method's): per probe, the instances whose confidence (MaxProb) did not drop under it, and
how their features differ from the other instances'; see
:mod:`faithprobe.suites.confidence_shift.kept_confidence`.

**Units** (:func:`instance_units`): each headline effect also carries its per-instance
values, so the card can compare two models on the same resampled instances.

**Ties at the top share the credit** (:func:`credit`): a model whose top confidence is
shared by k choices earns 1/k on an instance if the right (or pseudo-correct) choice is one
of them. A model that cannot tell the choices apart then earns 1/n, what a random pick earns
in expectation, not whatever position ``argmax`` breaks ties to (which would make a
perfectly agnostic model's pseudo-accuracy the share of instances whose answer sits first).
Accuracy, competence and pseudo-accuracy count this credit; ``original_correct`` and
``pseudo_correct`` keep the plain ``argmax`` for the examples and the expectation.

**Competence** (:func:`competence_records`): accuracy on the original instances against the
best constant answer on them: always the same position, or (when choice texts recur across
instances, as Social IQA's "happy" does) always the same text; see
:mod:`faithprobe.metrics.competence`.

**Confidence spread** (:func:`confidence_spread`): the population standard deviation of an
input's choice confidences, i.e. their root-mean-square distance from 1/n (confidences sum
to 1, so their mean is 1/n): the square root of the method's variance of the choice
confidences, 0 for the agnostic model. Computed per trial, then averaged per instance (a
model picking a different choice confidently in each trial is not agnostic on average).
After No-Right-Answer it says where the confidence freed by removing the right answer went:
spread evenly (spread near 0, the method's *random-like* shift), kept on the right answer's
slot as if the donor answer there were right (*conservative*), or moved onto the old wrong
choices, avoiding the donor (*deviated*); both of the latter leave a spread.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from faithprobe.asking.letters import LETTER_PROBABILITIES, SCORES
from faithprobe.metrics.answer_modes import mode_title
from faithprobe.metrics.competence import competence
from faithprobe.metrics.headline import needs_row
from faithprobe.metrics.intervals import (
    LEVEL,
    clustered_mean,
    paired_cluster_difference,
    wilson,
)
from faithprobe.metrics.units import Units
from faithprobe.suites.confidence_shift import NORMALISATIONS, PROBE_TITLES
from faithprobe.suites.confidence_shift import benchmark_irregularity as bi
from faithprobe.suites.confidence_shift import kept_confidence as kc
from faithprobe.suites.confidence_shift.choice_words import overlap, words
from faithprobe.suites.confidence_shift.normalisation import choice_scores

SHIFT_ALPHA = 0.10
SHIFT_TYPES = ("random-like", "hybrid", "conservative", "deviated", "undetermined")
ORIGINAL = "original"  # the "probe" of original-only rows (probes=none): no probe at all
PROBE_ORDER = tuple(PROBE_TITLES)  # the order probes are reported in
# pairs of probes whose pseudo-correct confidences are compared (the method's Table 2, col. 5)
CONTRASTS = (("no_question", "wrong_question"),)
# confidences this close to the highest share the top (equal scores, up to rounding)
TIE_TOLERANCE = 1e-9
Z = stats.norm.ppf(0.5 + LEVEL / 2)


# --------------------------------------------------------------------------- tests


def one_sample_p(x, reference: float) -> float:
    """Two-sided one-sample t-test p-value of mean(x) = reference; exact when x has no
    variance; NaN with fewer than two values."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return float("nan")
    if np.ptp(x) <= 1e-12:  # no variance, up to rounding
        return 1.0 if np.isclose(x.mean(), reference, rtol=0, atol=1e-12) else 0.0
    return float(stats.ttest_1samp(x, reference).pvalue)


@dataclass(frozen=True)
class ShiftDecision:
    shift_type: str
    p_vs_before: float
    p_vs_agnostic: float
    n_samples: int


def classify_shift(before, after, n_choices: int, alpha: float = SHIFT_ALPHA) -> ShiftDecision:
    """Shift type of one instance (see the module docstring).

    ``before``: original confidences of the incorrect choices, shape (k,).
    ``after``: their confidences in each distinct trial of the probe, shape (trials, k).
    """
    before = np.asarray(before, dtype=float)
    after = np.atleast_2d(np.asarray(after, dtype=float))
    if after.shape[1] != before.shape[0]:
        raise ValueError(f"after has {after.shape[1]} choices per trial, before {len(before)}")
    p_before = one_sample_p((after - before).ravel(), 0.0)
    p_agnostic = one_sample_p(after.ravel(), 1.0 / n_choices)
    return ShiftDecision(shift_kind(p_before, p_agnostic, alpha), p_before, p_agnostic, after.size)


def shift_kind(p_before: float, p_agnostic: float, alpha: float = SHIFT_ALPHA) -> str:
    """The shift type the two tests' p-values decide (undetermined if either is NaN)."""
    if np.isnan(p_before) or np.isnan(p_agnostic):
        return "undetermined"
    return {
        (True, False): "random-like",
        (False, True): "conservative",
        (False, False): "hybrid",
        (True, True): "deviated",
    }[(p_before < alpha, p_agnostic < alpha)]


def top_choices(confidences) -> list[int]:
    """The choices whose confidence ties the highest (within :data:`TIE_TOLERANCE`)."""
    conf = np.asarray(confidences, dtype=float)
    return [int(i) for i in np.flatnonzero(conf >= conf.max() - TIE_TOLERANCE)]


def credit(top: Sequence[int], target: int) -> float:
    """The credit for ``target`` when the choices ``top`` share the top (see the module
    docstring): 1/len(top) if ``target`` is one of them, else 0 (0 for an abstention, which
    names no choice)."""
    return 1.0 / len(top) if int(target) in top else 0.0


# --------------------------------------------------------------------------- helpers


def _mean_se(x) -> dict:
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n == 0:
        return {"value": float("nan"), "se": float("nan"), "ci_low": float("nan"),
                "ci_high": float("nan"), "n": 0}  # fmt: skip
    se = float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    m = float(x.mean())
    return {"value": m, "se": se, "ci_low": m - Z * se, "ci_high": m + Z * se, "n": n}


def _probes(results: pd.DataFrame) -> list[str]:
    present = set(results["probe"]) - {ORIGINAL}
    return [p for p in PROBE_ORDER if p in present] + sorted(present - set(PROBE_ORDER))


def _subjects(results: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(results["subject"]))


def with_confidences(results: pd.DataFrame) -> pd.DataFrame:
    """The rows with confidences on both inputs (every scoring subject's; a letter-writing
    subject's where its endpoint gave the letters' log-probabilities)."""
    if results.empty:
        return results
    keep = results["confidences"].notna() & results["original_confidences"].notna()
    return results[keep]


def _originals(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (subject, instance) with the original-input columns."""
    return rows.drop_duplicates(["subject", "original_id"]).set_index("original_id")


def _per_instance(rows: pd.DataFrame, column: str) -> pd.Series:
    """The mean of ``column`` over an instance's trials."""
    return rows.groupby("original_id")[column].mean()


def instance_units(values: pd.Series) -> dict:
    """The :class:`~faithprobe.metrics.units.Units` record of an effect that is the mean of
    ``values`` (one per instance, indexed by instance id): each instance is a unit and its
    own cluster, as every interval here resamples instances, and its id is the benchmark's,
    the same for every model and every audit that drew it."""
    return Units.build("mean", values.index, values.index, values).record()


# --------------------------------------------------------------------------- metrics


def original_accuracy(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Accuracy on the original instances (a tie at the top shares its credit), with a
    bootstrap interval over instances (Wilson where every instance agrees)."""
    out = []
    for subject in _subjects(results):
        orig = _originals(results[results["subject"] == subject])
        est = clustered_mean(orig["original_credit"], orig.index, seed=seed, proportion=True)
        p, n = est.value, est.n
        out.append(
            {
                "subject": subject,
                "value": p,
                "se": float(np.sqrt(p * (1 - p) / n)) if n else float("nan"),
                "ci_low": est.ci_low,
                "ci_high": est.ci_high,
                "n": n,
                "agnostic": float((1.0 / orig["n_choices"]).mean()),
                "method": est.method.replace("base items", "instances"),
            }
        )
    return out


def gold_keys(originals: pd.DataFrame) -> list[set[str]]:
    """Per original instance, the constant answers that are right on it: the right
    answer's position, and its text when some choice text recurs across instances (then
    "always answer 'happy'" is a constant answer too; it is right where 'happy' is the
    right choice)."""
    texts = [[c.strip().lower() for c in choices] for choices in originals["original_choices"]]
    recurring = max(Counter(t for ts in texts for t in set(ts)).values(), default=0) > 1
    keys = []
    for ts, label in zip(texts, originals["label"], strict=True):
        found = {f"position:{int(label)}"}
        if recurring:
            found.add(f"text:{ts[int(label)]}")
        keys.append(found)
    return keys


def competence_records(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Per subject, accuracy on the original instances against the best constant answer on
    them (:func:`gold_keys`; clusters: the instances), as
    :func:`faithprobe.metrics.competence.competence` gives it."""
    out = []
    for subject in _subjects(results):
        orig = _originals(results[results["subject"] == subject])
        record = competence(
            orig["original_credit"].astype(float).to_numpy(),
            gold_keys(orig),
            orig.index.to_numpy(),
            seed=seed,
            metric="accuracy on the original instances",
        )
        out.append({"subject": subject, **record})
    return out


# the headline tables whose effects need the choices' confidences
CONFIDENCE_TABLES = ("confidence_spread", "maxprob_detection")


def needs_confidences(results: pd.DataFrame) -> list[dict]:
    """For each subject none of whose rows carries confidences on both inputs (letters
    parsed from replies; or letters whose endpoint never listed a letter among the first
    token's top_logprobs), a row per confidence table and probe saying that its effects
    need probabilities (:func:`~faithprobe.metrics.headline.needs_row`)."""
    confident = set(with_confidences(results)["subject"]) if len(results) else set()
    out = []
    for subject in _subjects(results):
        if subject in confident:
            continue
        sub = results[results["subject"] == subject]
        why = (
            "no letter was among the top_logprobs of its replies' first tokens"
            if (sub["answer_mode"] == LETTER_PROBABILITIES).any()
            else f"it answered by {mode_title(sub['answer_mode'].iloc[0])}"
        )
        out += [needs_row(subject, table, why, probe=probe)
                for table in CONFIDENCE_TABLES for probe in _probes(sub)]  # fmt: skip
    return out


def abstentions(results: pd.DataFrame) -> list[dict]:
    """For subjects that answered by letter: the share of replies naming no choice, on the
    original instances and after each probe (all trials), with 95% intervals (Wilson over
    instances for the originals; cluster bootstrap over instances after a probe)."""
    if "answer_mode" not in results or results.empty:
        return []
    out = []
    letters = results[results["answer_mode"] != SCORES]
    for subject in _subjects(letters):
        sub = letters[letters["subject"] == subject]
        orig = _originals(sub)["original_abstained"].astype(bool)
        lo, hi = wilson(int(orig.sum()), len(orig))
        out.append({"subject": subject, "probe": "original", "value": float(orig.mean()),
                    "ci_low": lo, "ci_high": hi, "n": len(orig), "n_instances": len(orig)})  # fmt: skip
        for probe in _probes(sub):
            rows = sub[sub["probe"] == probe]
            est = clustered_mean(
                rows["abstained"].astype(float), rows["original_id"], proportion=True
            )
            out.append({"subject": subject, "probe": probe, "value": est.value,
                        "ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n,
                        "n_instances": est.n_clusters})  # fmt: skip
    return out


def pseudo_accuracy(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Share of perturbed instances whose pseudo-correct choice gets the top confidence (a
    tie shares its credit), averaged over trials per instance; tested against 1/n and
    against original accuracy. ``excess``: pseudo-accuracy minus 1/n with a paired
    bootstrap interval over instances (the card's measure of the prompt probes)."""
    out = []
    for subject in _subjects(results):
        sub = results[results["subject"] == subject]
        for probe in _probes(sub):
            rows = sub[sub["probe"] == probe]
            x = _per_instance(rows, "pseudo_credit")
            orig = _originals(rows)
            agnostic = (1.0 / orig["n_choices"]).reindex(x.index)
            original = orig["original_credit"].astype(float).reindex(x.index)
            by_trial = rows.groupby("trial")["pseudo_credit"].mean()
            out.append(
                {
                    "subject": subject,
                    "probe": probe,
                    **_mean_se(x),
                    "method": "mean over instances of the per-instance mean over trials; "
                    "normal interval from the standard error over instances",
                    "n_trials": int(rows["trial"].nunique()),
                    "trial_values": [float(v) for v in by_trial],
                    "trial_sd": float(by_trial.std(ddof=1)) if len(by_trial) > 1 else None,
                    "agnostic": float(agnostic.mean()),
                    "original_accuracy": float(original.mean()),
                    "vs_agnostic": t_test(x - agnostic),
                    "vs_original": t_test(x - original),
                    "excess": {
                        **paired_cluster_difference(x, agnostic, x.index, seed=seed),
                        "units": instance_units(x - agnostic),
                    },
                }
            )
    return out


def t_test(differences) -> dict:
    """Two-sided t-test of mean(differences) = 0 over instances (a paired t-test when the
    differences are after - before); exact when the differences do not vary."""
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    out = {"test": "t-test over instances (two-sided)", "n": len(d)}
    out["difference"] = float(d.mean()) if len(d) else float("nan")
    if len(d) < 2 or np.ptp(d) <= 1e-12:
        return {**out, "statistic": float("nan"), "p_value": one_sample_p(d, 0.0)}
    res = stats.ttest_1samp(d, 0.0)
    return {**out, "statistic": float(res.statistic), "p_value": float(res.pvalue)}


def instance_shifts(results: pd.DataFrame, alpha: float = SHIFT_ALPHA) -> pd.DataFrame:
    """The shift type of every (subject, probe, instance), with both p-values."""
    records = []
    probed = results[results["probe"] != ORIGINAL]
    for (subject, probe, instance), rows in probed.groupby(
        ["subject", "probe", "original_id"], sort=False
    ):
        first = rows.iloc[0]
        label, n = int(first["label"]), int(first["n_choices"])
        wrong = [j for j in range(n) if j != label]
        before = np.asarray(first["original_confidences"], dtype=float)[wrong]
        distinct = rows.drop_duplicates("input_key")
        after = np.stack([np.asarray(c, dtype=float)[wrong] for c in distinct["confidences"]])
        d = classify_shift(before, after, n, alpha)
        records.append(
            {
                "subject": subject,
                "probe": probe,
                "original_id": instance,
                "shift_type": d.shift_type,
                "p_vs_before": d.p_vs_before,
                "p_vs_agnostic": d.p_vs_agnostic,
                "n_samples": d.n_samples,
                "distinct_trials": len(distinct),
                "mean_change": float((after - before).mean()),
                "mean_vs_agnostic": float(after.mean() - 1.0 / n),
            }
        )
    return pd.DataFrame(records)


def shift_counts(results: pd.DataFrame, alpha: float = SHIFT_ALPHA) -> list[dict]:
    shifts = instance_shifts(results, alpha)
    out = []
    for subject in _subjects(results):
        for probe in _probes(results[results["subject"] == subject]):
            s = shifts[(shifts["subject"] == subject) & (shifts["probe"] == probe)]
            counts = s["shift_type"].value_counts()
            total = len(s)
            row = {"subject": subject, "probe": probe, "n": total, "alpha": alpha}
            for kind in SHIFT_TYPES:
                row[kind] = int(counts.get(kind, 0))
                row[f"{kind}_share"] = row[kind] / total if total else float("nan")
            row["distinct_trials"] = float(s["distinct_trials"].mean()) if total else None
            samples = s["n_samples"]
            row["samples_per_test"] = float(samples.mean()) if total else None
            row["min_samples"] = int(samples.min()) if total else None
            row["df"] = float(samples.mean() - 1) if total else None
            out.append(row)
    return out


def pooled_shifts(results: pd.DataFrame, alpha: float = SHIFT_ALPHA) -> list[dict]:
    """One shift type per (subject, probe) from the two tests run over instances (see the
    module docstring): each instance's mean change of its incorrect choices' confidences
    against 0, and their mean minus 1/n against 0; df = instances - 1."""
    shifts = instance_shifts(results, alpha)
    out = []
    for subject in _subjects(results):
        for probe in _probes(results[results["subject"] == subject]):
            s = shifts[(shifts["subject"] == subject) & (shifts["probe"] == probe)]
            change, agnostic = t_test(s["mean_change"]), t_test(s["mean_vs_agnostic"])
            out.append(
                {
                    "subject": subject,
                    "probe": probe,
                    "shift_type": shift_kind(change["p_value"], agnostic["p_value"], alpha),
                    "alpha": alpha,
                    "change": change,
                    "vs_agnostic": agnostic,
                    "n_instances": len(s),
                    "df": len(s) - 1,
                }
            )
    return out


def _spread(confidences) -> float:
    """The population SD of one input's choice confidences: their RMS distance from 1/n."""
    return float(np.std(np.asarray(confidences, dtype=float)))


def confidence_spread(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Per subject and probe, the spread of the choice confidences (see the module
    docstring) after the probe and on the original inputs, each a mean over instances with a
    bootstrap interval over instances, and after minus before, paired by instance."""
    out = []
    for subject in _subjects(results):
        sub = results[results["subject"] == subject]
        for probe in _probes(sub):
            rows = sub[sub["probe"] == probe]
            spreads = pd.Series([_spread(c) for c in rows["confidences"]], index=rows.index)
            after = spreads.groupby(rows["original_id"]).mean()
            orig = _originals(rows)
            before = pd.Series(
                [_spread(c) for c in orig["original_confidences"]], index=orig.index
            ).reindex(after.index)
            ids = after.index.to_numpy()
            out.append(
                {
                    "subject": subject,
                    "probe": probe,
                    "after": {
                        **clustered_mean(after, ids, seed=seed).as_dict(),
                        "units": instance_units(after),
                    },
                    "before": clustered_mean(before, ids, seed=seed).as_dict(),
                    "change": paired_cluster_difference(after, before, ids, seed=seed),
                    "n_instances": len(after),
                    "method": "per instance the mean over trials of the SD of the choice "
                    "confidences; mean over instances, bootstrap over instances, percentile",
                }
            )
    return out


def _at(conf, index) -> float:
    return float(np.asarray(conf, dtype=float)[int(index)])


def _pseudo_confidence(rows: pd.DataFrame) -> pd.Series:
    """Per instance, the mean over trials of the pseudo-correct choice's confidence."""
    values = [_at(c, i) for c, i in zip(rows["confidences"], rows["pseudo_label"], strict=True)]
    return pd.Series(values, index=rows.index).groupby(rows["original_id"]).mean()


def probe_contrasts(results: pd.DataFrame) -> list[dict]:
    """For each pair of :data:`CONTRASTS` present: the per-instance mean pseudo-correct
    confidence under the first and the second probe, and a paired t-test of first - second
    over the instances that have both (the method's Table 2, column 5, for the pair
    No-Question / Wrong-Question)."""
    out = []
    for subject in _subjects(results):
        sub = results[results["subject"] == subject]
        present = set(_probes(sub))
        for first, second in CONTRASTS:
            if not {first, second} <= present:
                continue
            a = _pseudo_confidence(sub[sub["probe"] == first])
            b = _pseudo_confidence(sub[sub["probe"] == second])
            a, b = a.align(b, join="inner")
            out.append(
                {
                    "subject": subject,
                    "first": first,
                    "second": second,
                    "first_confidence": _mean_se(a),
                    "second_confidence": _mean_se(b),
                    "difference": t_test(a - b),
                    "n_instances": len(a),
                }
            )
    return out


def kept_confidence(results: pd.DataFrame) -> tuple[list[dict], list[dict]]:
    """Per subject and probe, the instances that kept their confidence (MaxProb not lower
    after the probe than on the original) and, per feature of the instances, how they
    differ from the ones whose confidence dropped: the summaries and the feature rows of
    :func:`~faithprobe.suites.confidence_shift.kept_confidence.kept_confidence`."""
    summaries, features = [], []
    for subject in _subjects(results):
        sub = results[results["subject"] == subject]
        for probe in _probes(sub):
            rows = sub[sub["probe"] == probe]
            orig = _originals(rows)
            summary, found = kc.kept_confidence(
                orig, orig["original_maxprob"].astype(float), _per_instance(rows, "maxprob")
            )
            key = {"subject": subject, "probe": probe}
            summaries.append({**key, **summary})
            features += [{**key, **row} for row in found]
    return summaries, features


# a shortcut a model ignoring the prompt could take -> each choice's score under it
SHORTCUTS = {
    "the longest choice (words)": lambda prompt, choice: float(len(words(choice))),
    "the choice sharing most words with the prompt": lambda prompt, choice: overlap(choice, prompt),
}
COMMONEST_POSITION = "always the commonest right position"


def shortcuts(originals: pd.DataFrame, seed: int = 0) -> list[dict]:
    """The accuracy of each shortcut of :data:`SHORTCUTS` (a tie at the top shares its
    credit), and of always answering the commonest right position, on the instances of
    ``originals`` (one row per instance), with a bootstrap interval over instances (Wilson
    where every instance agrees), beside the agnostic 1/n. The commonest position is picked
    on these same instances, so its accuracy is the best any constant position gets."""
    labels = originals["label"].astype(int).to_numpy()
    credits = {}
    for name, score in SHORTCUTS.items():
        credits[name] = [
            credit(top_choices([score(p, c) for c in choices]), label)
            for p, choices, label in zip(
                originals["original_prompt"], originals["original_choices"], labels, strict=True
            )
        ]
    credits[COMMONEST_POSITION] = (labels == np.bincount(labels).argmax()).astype(float)
    agnostic = float((1.0 / originals["n_choices"]).mean())
    out = []
    for name, values in credits.items():
        est = clustered_mean(values, originals.index, seed=seed, proportion=True)
        out.append({"shortcut": name, "value": est.value, "ci_low": est.ci_low,
                    "ci_high": est.ci_high, "n": est.n, "agnostic": agnostic,
                    "method": est.method.replace("base items", "instances")})  # fmt: skip
    return out


def benchmark_irregularities(results: pd.DataFrame, seed: int = 0) -> dict[str, list[dict]]:
    """The method's benchmark irregularities (module docstring), on the run's original
    instances: of the right answers (``of`` = "right answers"), then of each subject's
    picks (``of`` = the subject; replies naming no choice left out); and the shortcuts'
    accuracies. Each list under its name with ``benchmark_`` before it (``benchmark_positions``
    ...); none for an empty table."""
    if results.empty:
        return {}
    subjects = _subjects(results)
    first = _originals(results[results["subject"] == subjects[0]])
    out = bi.analyse(bi.RIGHT_ANSWERS, list(first["original_prompt"]),
                     list(first["original_choices"]), list(first["label"]), seed)  # fmt: skip
    for subject in subjects:
        orig = _originals(results[results["subject"] == subject])
        picked = orig[orig["original_prediction"].astype(int) >= 0]
        if picked.empty:
            continue
        found = bi.analyse(subject, list(picked["original_prompt"]),
                           list(picked["original_choices"]),
                           list(picked["original_prediction"]), seed)  # fmt: skip
        for key, rows in found.items():
            out[key] += rows
    out["shortcuts"] = shortcuts(first, seed)
    return {f"benchmark_{key}": rows for key, rows in out.items()}


def accuracy_by_normalisation(results: pd.DataFrame) -> list[dict]:
    """Original accuracy of every scoring subject under every normalisation (lm-eval
    reports ``acc`` and ``acc_norm`` side by side), from the raw summed log-probabilities and
    token counts the results table keeps; Wilson intervals over instances."""
    out = []
    for subject in _subjects(results):
        orig = _originals(results[results["subject"] == subject])
        for how in NORMALISATIONS:
            correct = [
                int(np.argmax(choice_scores(lp, nt, ch, how))) == int(label)
                for lp, nt, ch, label in zip(
                    orig["original_logprobs"], orig["original_n_tokens"],
                    orig["original_choices"], orig["label"], strict=True,
                )
            ]  # fmt: skip
            n, k = len(correct), int(sum(correct))
            lo, hi = wilson(k, n)
            out.append({"subject": subject, "normalisation": how,
                        "value": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi,
                        "n": n})  # fmt: skip
    return out


def confidence_profile(results: pd.DataFrame) -> list[dict]:
    """Mean variance of the choice confidences and mean confidence of the correct choice
    (before) and of the pseudo-correct choice (after), per probe, with paired t-tests."""
    out = []
    for subject in _subjects(results):
        sub = results[results["subject"] == subject]
        for probe in _probes(sub):
            rows = sub[sub["probe"] == probe].copy()
            rows["variance_after"] = [float(np.var(c)) for c in rows["confidences"]]
            orig = _originals(rows)
            var_before = pd.Series([float(np.var(c)) for c in orig["original_confidences"]],
                                   index=orig.index)  # fmt: skip
            conf_before = pd.Series(
                [
                    _at(c, i)
                    for c, i in zip(orig["original_confidences"], orig["label"], strict=True)
                ],
                index=orig.index,
            )
            var_after = _per_instance(rows, "variance_after").reindex(orig.index)
            conf_after = _pseudo_confidence(rows).reindex(orig.index)
            row = {"subject": subject, "probe": probe}
            for name, before, after in (
                ("variance", var_before, var_after),
                ("confidence", conf_before, conf_after),
            ):
                row[f"{name}_before"] = _mean_se(before)
                row[f"{name}_after"] = _mean_se(after)
                row[f"{name}_change"] = t_test(after - before)
            out.append(row)
    return out


def _half(original_id: str, seed: int) -> int:
    return hashlib.sha256(f"{seed}\x1fmaxprob\x1f{original_id}".encode()).digest()[0] & 1


def maxprob_detection(results: pd.DataFrame, seed: int) -> list[dict]:
    """Accuracy of "MaxProb above threshold => original input" (see module docstring): the
    mean over test-half instances of each one's share of right calls, a threshold per
    trial."""
    out = []
    for subject in _subjects(results):
        sub = results[results["subject"] == subject]
        for probe in _probes(sub):
            rows = sub[sub["probe"] == probe]
            half = rows["original_id"].map(lambda i: _half(i, seed))
            hits, clusters, per_trial, thresholds = [], [], [], []
            for _, t_rows in rows.groupby("trial"):
                first = t_rows[half.loc[t_rows.index] == 0]
                second = t_rows[half.loc[t_rows.index] == 1]
                if first.empty or second.empty:
                    continue
                threshold = float(
                    np.concatenate([first["original_maxprob"], first["maxprob"]]).mean()
                )
                ok_orig = (second["original_maxprob"] > threshold).to_numpy()
                ok_pert = (second["maxprob"] <= threshold).to_numpy()
                per_trial.append(float(np.concatenate([ok_orig, ok_pert]).mean()))
                thresholds.append(threshold)
                hits += [*ok_orig, *ok_pert]
                clusters += [*second["original_id"], *second["original_id"]]
            if not per_trial:
                continue
            by_instance = pd.Series(hits, dtype=float).groupby(np.asarray(clusters)).mean()
            est = clustered_mean(by_instance, by_instance.index, seed=seed)
            out.append(
                {
                    "subject": subject,
                    "probe": probe,
                    "value": est.value,
                    "ci_low": est.ci_low,
                    "ci_high": est.ci_high,
                    "n": len(hits),
                    "n_instances": est.n_clusters,
                    "method": "mean over test-half instances of each one's share of right "
                    "calls over trials; bootstrap over test-half instances, thresholds fixed",
                    "trial_values": per_trial,
                    "thresholds": thresholds,
                    "vs_chance": t_test(by_instance - 0.5),
                    # per-instance correctness given the fitted thresholds: resampling the
                    # test half holds the thresholds (fitted on the other half) fixed
                    "units": instance_units(by_instance),
                }
            )
    return out


def dataset_breakdown(
    results: pd.DataFrame, left_out: Mapping[str, Sequence[str]] | None = None
) -> dict:
    """Instances and perturbed inputs per probe, and the run's instances each probe left out
    (``left_out``: the ids of the file's instances it could not be given, for want of a
    donor)."""
    first = results[results["subject"] == results["subject"].iloc[0]]
    per_probe = first.groupby("probe").agg(
        instances=("original_id", "nunique"), pairs=("pair_id", "count")
    )
    ran = set(first["original_id"])
    missing = {p: len(ran & set(ids)) for p, ids in (left_out or {}).items()}
    return {
        "n_instances": int(first["original_id"].nunique()),
        "n_pairs": len(first),
        "choices": {
            str(k): int(v)
            for k, v in _originals(first)["n_choices"].value_counts().sort_index().items()
        },  # fmt: skip
        "by_probe": [
            {
                "probe": p,
                "instances": int(r.instances),
                "pairs": int(r.pairs),
                "left_out": missing.get(p, 0),
            }
            for p, r in per_probe.reindex(_probes(first)).iterrows()
        ],
    }
