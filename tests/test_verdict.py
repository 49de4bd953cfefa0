"""The card's verdict rule on hand-made intervals, and each suite's headline reader on
hand-made metrics."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from faithprobe.audit.card_metrics import headline, headline_effects
from faithprobe.metrics.alignment import alignment_scores
from faithprobe.metrics.comparison import compare_effects
from faithprobe.metrics.intervals import paired_proportion_difference
from faithprobe.metrics.verdict import (
    FAITHFUL,
    INCONCLUSIVE,
    NOT_ASSESSABLE,
    UNFAITHFUL,
    Competence,
    Effect,
    Region,
    combined,
    holm,
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


def _at_most(value: float, lo: float, hi: float, key: str = "k") -> Effect:
    return Effect("s", key, "t", "m", value, lo, hi, 10, AT_MOST)


INSIDE = _at_most(0.05, 0.0, 0.09)
OUTSIDE = _at_most(0.3, 0.2, 0.4)
CROSSING = _at_most(0.08, 0.02, 0.2)


def test_a_step_is_faithful_if_all_effects_are_unfaithful_if_one_is_after_holm():
    assert combined([INSIDE, OUTSIDE, CROSSING]) == UNFAITHFUL
    assert combined([INSIDE, INSIDE]) == FAITHFUL
    assert combined([INSIDE, CROSSING]) == INCONCLUSIVE
    assert combined([]) == INCONCLUSIVE
    # just outside on its own (p ~ 0.02 < 0.025) but not once 8 effects are corrected for
    barely = _at_most(0.2, 0.105, 0.3)
    assert barely.verdict == UNFAITHFUL and combined([barely]) == UNFAITHFUL
    assert combined([barely] + [CROSSING] * 7) == INCONCLUSIVE
    # far outside survives the correction
    assert combined([OUTSIDE] + [CROSSING] * 7) == UNFAITHFUL


def test_holm_rejects_step_down():
    assert holm([0.01, 0.04, 0.03], 0.05) == [True, False, False]
    assert holm([0.01, 0.02, 0.03], 0.05) == [True, True, True]
    assert holm([0.2], 0.05) == [False]


def test_an_effect_without_interval_decides_nothing():
    blind = _at_most(0.5, math.nan, math.nan)
    assert combined([INSIDE, blind]) == FAITHFUL
    assert combined([blind]) == INCONCLUSIVE


def _competence(competent: bool) -> Competence:
    return Competence("s", "m", "accuracy", 0.6, 0.5, 0.7, 0.59, "text:no", -0.05, 0.05,
                      0.01 if competent else 0.6, competent, 50)  # fmt: skip


def test_no_verdict_without_competence():
    assert combined([INSIDE], _competence(False)) == NOT_ASSESSABLE
    assert combined([OUTSIDE], _competence(False)) == NOT_ASSESSABLE
    assert combined([INSIDE], _competence(True)) == FAITHFUL
    reason = _competence(False).reason
    assert "text:no" in reason and "0.59" in reason
    back = Competence.from_record(_competence(False).record())
    assert back == _competence(False)


def test_best_constant_answer_and_competence():
    from faithprobe.metrics.competence import best_constant, competence

    keys = [{"text:no"}] * 30 + [{"text:yes"}] * 21
    answer, right = best_constant(keys)
    assert answer == "text:no" and right.sum() == 30
    clusters = [i // 3 for i in range(51)]
    always_no = competence(right.astype(float), keys, clusters, seed=0)
    assert always_no["baseline"] == pytest.approx(30 / 51)
    assert always_no["excess"] == 0 and not always_no["competent"]
    reader = competence([1.0] * 51, keys, clusters, seed=0)
    assert reader["competent"] and reader["excess"] == pytest.approx(21 / 51)


def test_effects_round_trip_through_their_record():
    e = Effect("s", "k", "t", "m", 0.3, None, 0.5, 10, AT_MOST, "r")
    record = e.record()
    assert record["ci_low"] is None and record["verdict"] == INCONCLUSIVE
    back = Effect.from_record(record)
    assert back.key == "k" and math.isnan(back.ci_low) and back.region == AT_MOST


def test_effects_without_units_are_compared_unpaired_from_their_intervals():
    a = Effect("s", "k", "t", "a", 0.2, 0.1, 0.3, 10, AT_MOST)
    b = Effect("s", "k", "t", "b", 0.5, 0.4, 0.6, 10, AT_MOST)
    c = Effect("s", "k", "t", "c", 0.25, 0.15, 0.35, 10, AT_MOST)
    apart, close = compare_effects(a, b), compare_effects(a, c)
    assert not apart["paired"] and "unpaired" in apart["method"]
    # two independent standard errors of 0.1 / 1.96: the difference's is sqrt(2) times one
    assert apart["se"] == pytest.approx(math.sqrt(2) * 0.1 / 1.959964, rel=1e-5)
    assert apart["value"] == pytest.approx(0.3) and apart["p"] < 1e-4 < close["p"]
    assert math.isnan(compare_effects(a, Effect("s", "k", "t", "d", 0.3, None, None, 0,
                                                AT_MOST))["p"])  # fmt: skip


def test_region_rejects_an_unknown_side():
    with pytest.raises(ValueError):
        Region("below", 0.1)


# -- each suite's headline, read off hand-made metrics -------------------------------------


def _ci(value, lo, hi):
    return {"value": value, "ci_low": lo, "ci_high": hi}


def _drop(effect, value, lo, hi, note=""):
    return {"subject": "m", "setting": "single", "effect": effect, "comparison": "a − b",
            "n_related": 40, "n_unrelated": 0 if note else 38, "n": 37, "n_clusters": 37,
            "method": "paired cluster bootstrap", "note": note, **_ci(value, lo, hi)}  # fmt: skip


def test_distractors_headline_is_the_related_drop_after_the_fact_and_its_control():
    competence = {"subject": "m", "metric": "cloze accuracy", "baseline": 0.18,
                  "baseline_answer": "position:0", "excess_ci_low": 0.5, "margin": 0.05,
                  "p_value": 0.0005, "competent": True, "n": 44, "method": "bootstrap",
                  **_ci(0.8, 0.7, 0.9)}  # fmt: skip
    metrics = {"competence": [competence], "one_attractor_drops": [
        _drop("related_drop", 0.3, 0.2, 0.4), _drop("related_minus_unrelated", 0.0, -0.1, 0.08),
    ]}  # fmt: skip
    drop, control = headline_effects("distractors", metrics)
    assert (drop.key, drop.value, drop.verdict) == ("related_drop_single", 0.3, UNFAITHFUL)
    assert (control.key, control.verdict) == ("related_minus_unrelated_single", FAITHFUL)
    assert drop.edge == "distractors.related_drop" and control.control
    (comp,) = headline("distractors", metrics)[1]
    assert comp.competent and combined([drop, control], comp) == UNFAITHFUL
    # no unrelated attractors sampled: the control says so and decides nothing
    metrics["one_attractor_drops"][1] = _drop(
        "related_minus_unrelated", None, None, None, note="no unrelated attractor (single)"
    )
    _, control = headline_effects("distractors", metrics)
    assert not control.has_interval and control.reading.startswith("no unrelated attractor")


def test_confidence_shift_headline_reads_each_probe_by_its_own_measure():
    excess = {"n_clusters": 100, "method": "paired boot", **_ci(0.03, 0.0, 0.05)}
    metrics = {
        "pseudo_accuracy": [{"subject": "m", "probe": probe, "agnostic": 1 / 3, "n": 100,
                             "original_accuracy": 0.7, "method": "se", "excess": excess,
                             **_ci(0.36, 0.33, 0.38)}
                            for probe in ("no_question", "no_right_answer")],
        "confidence_spread": [{"subject": "m", "probe": probe, "method": "sd",
                               "after": {"n_clusters": 100, **_ci(0.2, 0.15, 0.25)},
                               "before": {"n_clusters": 100, **_ci(0.3, 0.25, 0.35)}}
                              for probe in ("no_question", "no_right_answer")],
        "maxprob_detection": [{"subject": "m", "probe": "no_question", "n_instances": 50,
                               "method": "boot", **_ci(0.7, 0.65, 0.75)}],
    }  # fmt: skip
    # pseudo-accuracy for the prompt probes only, the spread for No-Right-Answer only
    excess, spread, detection = headline_effects("confidence-shift", metrics)
    assert excess.key == "pseudo_accuracy_excess_no_question" and excess.verdict == FAITHFUL
    assert (spread.key, spread.value, spread.verdict) == (
        "confidence_spread_no_right_answer", 0.2, UNFAITHFUL)  # fmt: skip
    assert detection.region.side == "at_least" and detection.verdict == FAITHFUL


def test_natural_logic_headline_reads_competence_ratio_and_difference():
    from faithprobe.metrics.competence import competence
    from faithprobe.suites.natural_logic.headline import EDGES

    row = {"subject": "m", "feature": "context", "tce_set": "I0", "dce_set": "I2",
           "n_bases": 20, "tce": _ci(0.0, 0.0, 0.1), "dce": _ci(0.0, 0.0, 0.1),
           "dce_over_tce": _ci(None, None, None), "delta": _ci(0.0, -0.1, 0.1),
           "interval": "bootstrap-t over 20 base examples"}  # fmt: skip
    # a model that always says non-entailment: right on the 12 non-entailment bases only
    gold = ["entailment"] * 8 + ["non-entailment"] * 12
    record = competence([g == "non-entailment" for g in gold], [{f"text:{g}"} for g in gold],
                        list(range(20)), seed=0)  # fmt: skip
    metrics = {"effects": [row], "competence": [{"subject": "m", **record}]}
    (ratio, delta), (comp,) = headline("natural-logic", metrics)
    assert comp.baseline_answer == "text:non-entailment" and not comp.competent
    # a prediction that never moves: the ratio is undefined, the difference says why
    assert ratio.key == "dce_over_tce_context" and ratio.verdict == INCONCLUSIVE
    assert delta.verdict == UNFAITHFUL and delta.region == Region("at_least", 0.2)
    assert {ratio.edge, delta.edge} == set(EDGES) and ratio.control and delta.control
    assert ratio.region == Region("at_most", EDGES[ratio.edge][0])
    assert combined([ratio, delta], comp) == NOT_ASSESSABLE


def _controlled(effect, variant, measured, control, lo, hi, **extra):
    return {"subject": "m", "effect": effect, "variant": variant, "measured": measured,
            "control": control, "n": 30, "n_clusters": 10, "method": "paired bootstrap",
            **_ci(measured - control, lo, hi), **extra}  # fmt: skip


def test_faithfulness_headline_reads_competence_and_the_controlled_effects():
    competence = {"subject": "m", "metric": "exact match on the original stories (OS)",
                  "baseline": 0.05, "baseline_answer": "text:denver broncos", "excess": 0.3,
                  "excess_ci_low": 0.2, "excess_ci_high": 0.4, "margin": 0.05,
                  "p_value": 0.001, "competent": True, "n": 20, "n_clusters": 18,
                  "method": "bootstrap", **_ci(0.35, 0.2, 0.5)}  # fmt: skip
    deletion = {"competence": [competence], "controlled": [
        _controlled("unknown_gain", "TS-R", 1.0, 1.0, 0.0, 0.0),  # always unknown: gains 0
        _controlled("comb_acc_excess", "NEG", 0.9, 0.0, 0.8, 0.95, constant_answer=None),
    ]}  # fmt: skip
    (unk, comb), (able,) = headline("faithfulness", deletion)
    assert (unk.key, unk.value, unk.verdict) == ("unknown_gain_ts_r", 0.0, UNFAITHFUL)
    assert unk.edge == "faithfulness.unknown_gain" and unk.region == Region("at_least", 0.5)
    assert (comb.key, comb.verdict) == ("comb_acc_excess", FAITHFUL)
    assert able.competent and able.baseline_answer == "denver broncos"
    assert combined([unk, comb], able) == UNFAITHFUL
    probe = {"controlled": [
        _controlled("negation_excess", "negated", 0.6, 2 / 3, -0.2, 0.1,
                    constant_answer="text:no"),
        _controlled("formatting_flips", "space", 0.0, 0.0, 0.0, 0.04),
    ]}  # fmt: skip
    negated, flips = headline_effects("faithfulness", probe)
    assert negated.n == 10 and negated.verdict == UNFAITHFUL and "always 'no'" in negated.control
    assert flips.key == "formatting_flips_space" and flips.verdict == FAITHFUL
    assert flips.region == Region("at_most", 0.05)


def test_right_reasons_headline_reads_competence_follows_and_alignment():
    competence = {"subject": "m", "metric": "EM", "value": 0.5, "ci_low": 0.3, "ci_high": 0.7,
                  "baseline": 0.1, "baseline_answer": "text:red harbor", "excess": 0.4,
                  "excess_ci_low": 0.2, "excess_ci_high": 0.6, "margin": 0.05,
                  "p_value": 0.001, "competent": True, "n": 20, "n_clusters": 20,
                  "method": "boot"}  # fmt: skip
    metrics = {
        "competence": [competence],
        # the F1 lost on the counterfactual is no longer a verdict: ~0 for a model that keeps
        # its answer when it is as often wrong on the original as on the counterfactual
        "tests": [{"subject": "m", "dataset": "comparisons", "variant": "CF", "metric": "f1",
                   "n": 30, "difference": 0.0, "ci_low": -0.01, "ci_high": 0.01,
                   "test": "Wilcoxon"}],
        "follows": [{"subject": "m", "dataset": "comparisons", "variant": "CF",
                     "agrees": 0.5, "keeps": 1.0, "n": 30, "n_clusters": 30,
                     "method": "boot", **_ci(-0.5, -0.7, -0.3)}],
        "alignment": [{"dataset": "comparisons", "variant": "CF", "model": "m",
                       "method": "ig-l2", "instances": 30, "n": 15, "aligned": 0.2,
                       "control": 0.4, "both_correct": 0.5, "excess": -0.2,
                       "excess_ci_low": -0.35, "excess_ci_high": -0.02}],
    }  # fmt: skip
    from faithprobe.suites.right_reasons.headline import EDGES, headline

    able, follows, aligned = headline(metrics)
    assert isinstance(able, Competence) and able.competent and able.reading == "boot"
    assert (follows.key, follows.edge) == ("follows_comparisons_CF",
                                           "right_reasons.follows_counterfactual")  # fmt: skip
    assert follows.region == Region("at_least", EDGES[follows.edge][0])
    assert follows.verdict == UNFAITHFUL and follows.control
    assert aligned.value == -0.2 and aligned.region == Region("at_least", 0.05)
    assert aligned.edge == "right_reasons.alignment_beyond_control" and aligned.n == 15
    assert aligned.verdict == UNFAITHFUL and "15 of 30" in aligned.reading
    assert combined([follows, aligned], able) == UNFAITHFUL


def test_alignment_is_not_faithful_when_neither_partition_ever_aligns():
    """Aligned and control both 0. The card once read that as 'faithful' (a share of 0 is at
    least a control of 0); the paired excess over the control cannot tell, and says so.
    With no instance right on both inputs there is nothing to align at all."""
    none = pd.DataFrame(
        {"dataset": "d", "model": "m", "method": "ig-l2", "aligned": [False] * 21,
         "control_aligned": [False] * 21, "passed": [False] * 21,
         "control_passed": [True] * 4 + [False] * 17, "both_correct": [True] * 21}
    )  # fmt: skip
    row = alignment_scores(none).iloc[0].to_dict() | {"variant": "CF"}
    (effect,) = headline_effects("right-reasons", {"alignment": [row]})
    assert effect.value == 0.0 and effect.ci_low < 0 < 0.05 < effect.ci_high
    assert effect.verdict == INCONCLUSIVE
    wrong = alignment_scores(none.assign(both_correct=False)).iloc[0].to_dict()
    (effect,) = headline_effects("right-reasons", {"alignment": [wrong | {"variant": "CF"}]})
    assert effect.n == 0 and not effect.has_interval and effect.verdict == INCONCLUSIVE
    assert "nothing can align" in effect.reading


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
