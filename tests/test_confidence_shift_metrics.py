"""The confidence-shift statistics on synthetic confidence sets whose answer is known."""

import numpy as np
import pandas as pd
import pytest

from faithprobe.metrics.units import Units
from faithprobe.suites.confidence_shift import metrics as m


def _noisy(center, k=2, trials=5, scale=0.01, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(center, float) + rng.normal(0, scale, size=(trials, k))


def test_one_sample_p_is_exact_without_variance_and_nan_with_one_value():
    assert m.one_sample_p([0.2, 0.2, 0.2], 0.2) == 1.0
    assert m.one_sample_p([0.2, 0.2], 0.3) == 0.0
    assert np.isnan(m.one_sample_p([0.2], 0.3))


@pytest.mark.parametrize(
    ("before", "after_center", "expected"),
    [
        # was confident (wrong choices near 0.05), now spread evenly: random-like
        ([0.05, 0.05], [1 / 3, 1 / 3], "random-like"),
        # keeps its old confidences, which are far from 1/3: conservative
        ([0.05, 0.10], [0.05, 0.10], "conservative"),
        # was already agnostic and stays so: the tests cannot tell -> hybrid
        ([1 / 3, 1 / 3], [1 / 3, 1 / 3], "hybrid"),
        # moves away from both (wrong choices now near 0.45 each): deviated
        ([0.05, 0.05], [0.45, 0.45], "deviated"),
    ],
)
def test_shift_types_on_known_confidence_sets(before, after_center, expected):
    d = m.classify_shift(before, _noisy(after_center), n_choices=3)
    assert d.shift_type == expected
    assert d.n_samples == 10


def test_a_single_sample_is_undetermined_and_shapes_are_checked():
    assert m.classify_shift([0.1], [[0.3]], n_choices=2).shift_type == "undetermined"
    with pytest.raises(ValueError, match="choices per trial"):
        m.classify_shift([0.1, 0.2], [[0.3]], n_choices=3)


def test_significance_level_is_ninety_percent():
    # differences with t such that 0.05 < p < 0.10: a shift at 90%, not at 95%
    before = [0.2, 0.2]
    after = np.array([[0.2 + 0.01, 0.2 + 0.03], [0.2 + 0.002, 0.2 + 0.02]])
    p = m.one_sample_p((after - np.asarray(before)).ravel(), 0.0)
    assert 0.05 < p < 0.10
    at_90 = m.classify_shift(before, after, 3)
    assert at_90.p_vs_before == pytest.approx(p)
    assert at_90.shift_type in ("random-like", "deviated")  # moved
    assert m.classify_shift(before, after, 3, alpha=0.05).shift_type in ("hybrid", "conservative")


def _table(orig_conf, pert_conf, *, probe="wrong_question", label=0, pseudo=0, trials=1):
    """Results rows for instances given original and perturbed confidence vectors."""
    rows = []
    for i, (co, cp) in enumerate(zip(orig_conf, pert_conf, strict=True)):
        for t in range(trials):
            cp_t = cp[t] if np.ndim(cp) == 2 else cp
            rows.append(
                {
                    "subject": "s",
                    "pair_id": f"i{i}/{probe}[trial={t}]",
                    "original_id": f"i{i}",
                    "probe": probe,
                    "trial": t,
                    "input_key": f"i{i}-{t}",
                    "n_choices": len(co),
                    "label": label,
                    "pseudo_label": pseudo,
                    "original_confidences": list(co),
                    "confidences": list(cp_t),
                    "original_correct": int(np.argmax(co)) == label,
                    "pseudo_correct": int(np.argmax(cp_t)) == pseudo,
                    "original_credit": m.credit(m.top_choices(co), label),
                    "pseudo_credit": m.credit(m.top_choices(cp_t), pseudo),
                    "original_maxprob": max(co),
                    "maxprob": max(cp_t),
                }
            )
    return pd.DataFrame(rows)


def test_maxprob_detector_is_perfect_when_originals_are_more_confident():
    n = 200
    table = _table([[0.9, 0.05, 0.05]] * n, [[0.4, 0.3, 0.3]] * n)
    (row,) = m.maxprob_detection(table, seed=0)
    assert row["value"] == 1.0
    assert row["thresholds"] == [pytest.approx(0.65)]
    assert 80 < row["n_instances"] < 120  # about half the instances are the test half


def test_maxprob_detector_is_at_chance_when_nothing_differs():
    n = 200
    table = _table([[0.6, 0.2, 0.2]] * n, [[0.6, 0.2, 0.2]] * n)
    (row,) = m.maxprob_detection(table, seed=0)
    assert row["value"] == 0.5  # every input sits at the threshold: all called perturbed


def test_maxprob_detection_is_a_mean_over_instances_when_a_trial_is_missing():
    """Trial 0 detects every input, trial 1 (probe changes nothing) half of them; test
    instances that lost trial 1 count 1.0, the others 0.75, each once."""
    n = 60
    table = _table([[0.9, 0.05, 0.05]] * n, [[[0.4, 0.3, 0.3], [0.9, 0.05, 0.05]]] * n, trials=2)
    tested = sorted(i for i in table["original_id"].unique() if m._half(i, 0) == 1)
    lost = (table["trial"] == 1) & table["original_id"].isin(tested[:5])
    (row,) = m.maxprob_detection(table[~lost], seed=0)
    assert row["trial_values"] == [1.0, 0.5]
    assert row["value"] == pytest.approx((5 * 1.0 + (len(tested) - 5) * 0.75) / len(tested))
    units = Units.from_record(row["units"])
    assert units.value() == pytest.approx(row["value"], abs=1e-12)
    assert sorted(units.unit) == tested and units.cluster == units.unit


def test_pseudo_accuracy_averages_trials_per_instance_and_tests_against_1_over_n():
    # 100 instances, 2 trials: instance i picks the pseudo-correct choice in trial 0 only
    orig = [[0.8, 0.1, 0.1]] * 100
    pert = [[[0.7, 0.2, 0.1], [0.1, 0.7, 0.2]]] * 100
    table = _table(orig, pert, trials=2)
    (row,) = m.pseudo_accuracy(table)
    assert row["value"] == pytest.approx(0.5)
    assert row["trial_values"] == [1.0, 0.0]
    assert row["agnostic"] == pytest.approx(1 / 3)
    assert row["vs_agnostic"]["difference"] == pytest.approx(0.5 - 1 / 3)
    assert row["vs_original"]["difference"] == pytest.approx(-0.5)
    (acc,) = m.original_accuracy(table)
    assert acc["value"] == 1.0 and acc["n"] == 100


def test_confidence_profile_and_shift_counts_on_a_conservative_model():
    rng = np.random.default_rng(0)
    orig, pert = [], []
    for _ in range(50):
        c = np.array([0.8, 0.15, 0.05])
        orig.append(c)
        pert.append([c + np.r_[0, rng.normal(0, 1e-3, 2)] for _ in range(3)])
    table = _table(orig, pert, trials=3)
    (counts,) = m.shift_counts(table)
    # only noise moved: the test rejects "no move" in about alpha = 10% of instances
    assert counts["random-like"] == 0 and counts["hybrid"] == 0
    assert counts["conservative"] + counts["deviated"] == 50
    assert counts["conservative_share"] >= 0.75
    (profile,) = m.confidence_profile(table)
    assert profile["confidence_before"]["value"] == pytest.approx(0.8)
    assert profile["confidence_after"]["value"] == pytest.approx(0.8, abs=1e-3)


def test_repeated_identical_trials_enter_the_shift_test_once():
    # No-Question style: every trial has the same input; 3 choices -> 2 samples
    orig = [[0.8, 0.15, 0.05]]
    pert = [[[0.5, 0.3, 0.2]] * 5]
    table = _table(orig, pert, trials=5, probe="no_question")
    table["input_key"] = "same"
    shifts = m.instance_shifts(table)
    assert shifts.loc[0, "n_samples"] == 2 and shifts.loc[0, "distinct_trials"] == 1


def test_no_question_tests_rest_on_two_samples_and_the_pooled_test_decides_over_instances():
    """A model that becomes agnostic without the question: per instance the 2 samples of
    No-Question (df = 1) cannot show the move, so every instance is "hybrid"; pooled over
    50 instances the move is clear and the probe is random-like."""
    rng = np.random.default_rng(1)
    orig = [[0.8, 0.2, 0.0]] * 50
    pert = [[[1 / 3, 1 / 3 + e, 1 / 3 - e]] * 5 for e in rng.normal(0, 0.01, 50)]
    table = _table(orig, pert, trials=5, probe="no_question")
    table["input_key"] = table["original_id"]  # every trial the same input
    (counts,) = m.shift_counts(table)
    assert counts["hybrid"] == 50
    assert counts["samples_per_test"] == 2 and counts["min_samples"] == 2 and counts["df"] == 1
    (pooled,) = m.pooled_shifts(table)
    assert pooled["shift_type"] == "random-like"
    assert pooled["n_instances"] == 50 and pooled["df"] == 49
    assert pooled["change"]["p_value"] < 1e-6 and pooled["vs_agnostic"]["p_value"] > 0.1
    assert pooled["change"]["difference"] == pytest.approx((2 / 3 - 0.2) / 2, abs=0.01)


def test_no_question_vs_wrong_question_pseudo_confidence_is_a_paired_test():
    rng = np.random.default_rng(2)
    orig = [[0.8, 0.1, 0.1]] * 40
    nq = [[0.6 + e, 0.2 - e / 2, 0.2 - e / 2] for e in rng.normal(0, 0.02, 40)]
    wq = [[0.5 + e, 0.25 - e / 2, 0.25 - e / 2] for e in rng.normal(0, 0.02, 40)]
    table = pd.concat(
        [_table(orig, nq, probe="no_question"), _table(orig, wq, probe="wrong_question")]
    )
    (row,) = m.probe_contrasts(table)
    assert (row["first"], row["second"]) == ("no_question", "wrong_question")
    assert row["first_confidence"]["value"] == pytest.approx(0.6, abs=0.01)
    assert row["second_confidence"]["value"] == pytest.approx(0.5, abs=0.01)
    assert row["difference"]["difference"] == pytest.approx(0.1, abs=0.01)
    assert row["difference"]["p_value"] < 1e-6 and row["n_instances"] == 40
    # only one of the two probes: no contrast
    assert m.probe_contrasts(table[table["probe"] == "no_question"]) == []
