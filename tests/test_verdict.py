"""The card's verdict rule on hand-made intervals, and each suite's headline reader on
hand-made metrics."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from faithprobe.audit.card import headline_effects
from faithprobe.metrics.alignment import alignment_scores
from faithprobe.metrics.intervals import paired_proportion_difference
from faithprobe.metrics.verdict import (
    FAITHFUL,
    INCONCLUSIVE,
    UNFAITHFUL,
    Effect,
    Region,
    combined,
    intervals_differ,
    verdict,
)

AT_MOST, AT_LEAST = Region("at_most", 0.1), Region("at_least", 0.5)


@pytest.mark.parametrize(
    ("interval", "region", "expected"),
    [
        ((0.05, 0.0, 0.09), AT_MOST, FAITHFUL),  # wholly inside
        ((0.05, 0.0, 0.1), AT_MOST, FAITHFUL),  # touching the edge counts as inside
        ((0.3, 0.2, 0.4), AT_MOST, UNFAITHFUL),  # wholly outside
        ((0.08, 0.02, 0.2), AT_MOST, INCONCLUSIVE),  # crossing the edge
        ((0.7, 0.6, 0.8), AT_LEAST, FAITHFUL),
        ((0.2, 0.1, 0.3), AT_LEAST, UNFAITHFUL),
        ((0.5, 0.4, 0.6), AT_LEAST, INCONCLUSIVE),
        ((math.nan, math.nan, math.nan), AT_LEAST, INCONCLUSIVE),  # nothing estimated
        ((0.7, None, None), AT_LEAST, INCONCLUSIVE),  # no interval
        ((math.inf, 3.0, math.inf), AT_LEAST, FAITHFUL),  # an unbounded ratio
    ],
)
def test_verdict_reads_the_interval_against_the_edge(interval, region, expected):
    value, lo, hi = (math.nan if x is None else x for x in interval)
    assert verdict(value, lo, hi, region) == expected


def test_a_suite_is_unfaithful_if_any_effect_is_faithful_if_all_are():
    assert combined([FAITHFUL, UNFAITHFUL, INCONCLUSIVE]) == UNFAITHFUL
    assert combined([FAITHFUL, FAITHFUL]) == FAITHFUL
    assert combined([FAITHFUL, INCONCLUSIVE]) == INCONCLUSIVE
    assert combined([]) == INCONCLUSIVE


def test_effects_round_trip_through_their_record():
    e = Effect("s", "k", "t", "m", 0.3, None, 0.5, 10, AT_MOST, "r")
    record = e.record()
    assert record["ci_low"] is None and record["verdict"] == INCONCLUSIVE
    back = Effect.from_record(record)
    assert back.key == "k" and math.isnan(back.ci_low) and back.region == AT_MOST


def test_differences_need_intervals_apart():
    a = Effect("s", "k", "t", "a", 0.2, 0.1, 0.3, 10, AT_MOST)
    b = Effect("s", "k", "t", "b", 0.5, 0.31, 0.6, 10, AT_MOST)
    c = Effect("s", "k", "t", "c", 0.4, 0.29, 0.6, 10, AT_MOST)
    assert intervals_differ(a, b) and intervals_differ(b, a)
    assert not intervals_differ(a, c)


def test_region_rejects_an_unknown_side():
    with pytest.raises(ValueError):
        Region("below", 0.1)


# -- each suite's headline, read off hand-made metrics -------------------------------------


def _ci(value, lo, hi):
    return {"value": value, "ci_low": lo, "ci_high": hi}


def test_distractors_headline_is_the_one_related_attractor_drop():
    metrics = {"tests": [
        {"subject": "m", "name": "one related attractor (single)", "n": 40, "difference": 0.3,
         "ci_low": 0.2, "ci_high": 0.4, "test": "Wilcoxon"},
        {"subject": "m", "name": "B vs T (single)", "n": 40, "difference": 0.0,
         "ci_low": -0.1, "ci_high": 0.1, "test": "Wilcoxon"},
    ]}  # fmt: skip
    (e,) = headline_effects("distractors", metrics)
    assert (e.key, e.value, e.verdict) == ("one_related_attractor_single", 0.3, UNFAITHFUL)


def test_confidence_shift_headline_subtracts_chance():
    metrics = {
        "pseudo_accuracy": [{"subject": "m", "probe": "no_question", "agnostic": 1 / 3,
                             "n": 100, "method": "se", **_ci(0.36, 0.33, 0.38)}],
        "maxprob_detection": [{"subject": "m", "probe": "no_question", "n_instances": 50,
                               "method": "boot", **_ci(0.7, 0.65, 0.75)}],
    }  # fmt: skip
    excess, detection = headline_effects("confidence-shift", metrics)
    assert excess.value == pytest.approx(0.36 - 1 / 3) and excess.verdict == FAITHFUL
    assert detection.region.side == "at_least" and detection.verdict == FAITHFUL


def test_natural_logic_headline_reads_ratio_and_difference():
    row = {"subject": "m", "feature": "context", "tce_set": "I0", "dce_set": "I2",
           "n_bases": 20, "tce": _ci(0.0, 0.0, 0.0), "dce": _ci(0.0, 0.0, 0.0),
           "ratio": _ci(None, None, None), "delta": _ci(0.0, 0.0, 0.0)}  # fmt: skip
    ratio, delta = headline_effects("natural-logic", {"effects": [row]})
    # a prediction that never moves: the ratio is undefined, the difference says why
    assert ratio.verdict == INCONCLUSIVE and delta.verdict == UNFAITHFUL


def test_faithfulness_headline_reads_deletion_negation_and_the_probe():
    deletion = {"scores": [
        {"subject": "m", "variant": "TS-R", "metric": "unk", "n": 30, **_ci(0.1, 0.0, 0.2)},
        {"subject": "m", "variant": "TS", "metric": "unk", "n": 30, **_ci(0.1, 0.0, 0.2)},
    ], "negation": [
        {"subject": "m", "negation": "all", "metric": "comb_acc", "n": 30, **_ci(0.9, 0.8, 0.95)},
    ]}  # fmt: skip
    unk, comb = headline_effects("faithfulness", deletion)
    assert (unk.key, unk.verdict) == ("unknown_after_ts_r", UNFAITHFUL)
    assert (comb.key, comb.verdict) == ("comb_acc_negation", FAITHFUL)
    probe = {"predicate_argument": [
        {"subject": "m", "variant": "negated", "form": "original", "metric": "accuracy",
         "n": 40, "n_clusters": 10, **_ci(0.6, 0.4, 0.8)},
        {"subject": "m", "variant": "negated", "form": "paraphrase", "metric": "accuracy",
         "n": 40, **_ci(0.6, 0.4, 0.8)},
        {"subject": "m", "variant": "space", "form": "original", "metric": "flip_rate",
         "n": 40, **_ci(0.0, 0.0, 0.04)},
    ]}  # fmt: skip
    negated, flips = headline_effects("faithfulness", probe)
    assert negated.n == 10 and negated.verdict == INCONCLUSIVE
    assert flips.key == "formatting_flips_space" and flips.verdict == FAITHFUL


def test_right_reasons_headline_reads_f1_loss_and_alignment_beyond_the_control():
    metrics = {
        "tests": [{"subject": "m", "dataset": "comparisons", "variant": "CF", "metric": "f1",
                   "n": 30, "difference": 0.02, "ci_low": -0.01, "ci_high": 0.04,
                   "test": "Wilcoxon"}],
        "alignment": [{"dataset": "comparisons", "variant": "CF", "model": "m", "method": "ig",
                       "n": 30, "aligned": 0.2, "control": 0.4, "both_correct": 0.5,
                       "excess": -0.2, "excess_ci_low": -0.35, "excess_ci_high": -0.02}],
    }  # fmt: skip
    loss, aligned = headline_effects("right-reasons", metrics)
    assert loss.verdict == FAITHFUL
    assert aligned.value == -0.2 and aligned.region == Region("at_least", 0.05)
    assert aligned.verdict == UNFAITHFUL


def test_alignment_is_not_faithful_when_neither_partition_ever_aligns():
    """No answer right: aligned and control are both 0. The card once read that as
    'faithful' (a share of 0 is at least a control of 0); the paired excess over the
    control cannot tell, and says so."""
    none = pd.DataFrame(
        {"dataset": "d", "model": "m", "method": "ig-l2", "aligned": [False] * 21,
         "control_aligned": [False] * 21, "passed": [False] * 21,
         "control_passed": [True] * 4 + [False] * 17, "both_correct": [False] * 21}
    )  # fmt: skip
    row = alignment_scores(none).iloc[0].to_dict() | {"variant": "CF"}
    (effect,) = headline_effects("right-reasons", {"alignment": [row]})
    assert effect.value == 0.0 and effect.ci_low < 0 < 0.05 < effect.ci_high
    assert effect.verdict == INCONCLUSIVE


def test_newcombe_paired_interval_matches_the_worked_example():
    """Fagerland, Lydersen & Laake, *Statistical Analysis of Contingency Tables*, ch. 8:
    complete response before and after consolidation therapy (Cavo et al., 2012),
    59 / 6 / 16 / 80: -0.0621 (95% CI -0.1186 to -0.0046)."""
    cells = {(True, True): 59, (True, False): 6, (False, True): 16, (False, False): 80}
    a = [x for (x, _), k in cells.items() for _ in range(k)]
    b = [y for (_, y), k in cells.items() for _ in range(k)]
    diff, low, high = paired_proportion_difference(a, b)
    assert (round(diff, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)
    swapped = paired_proportion_difference(b, a)
    assert swapped[0] == pytest.approx(-diff) and swapped[1] == pytest.approx(-high)
