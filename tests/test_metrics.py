import math

import numpy as np
import pandas as pd
import pytest

from faithprobe.metrics.intervals import (
    clustered_mean,
    geometric_mean_ratio,
    paired_difference,
    wilson,
)
from faithprobe.suites.distractors import metrics as m


def test_clustered_mean_value_and_interval():
    values = [1, 0, 1, 1, 0, 1, 1, 1]
    clusters = ["a", "a", "b", "b", "c", "c", "d", "d"]
    e = clustered_mean(values, clusters, proportion=True)
    assert e.value == pytest.approx(6 / 8)
    assert e.n == 8 and e.n_clusters == 4
    # cluster means are 0.5, 1, 0.5, 1: every resample lies in [0.5, 1]
    assert 0.5 <= e.ci_low <= e.value <= e.ci_high <= 1.0


def test_degenerate_proportion_falls_back_to_wilson_over_clusters():
    e = clustered_mean([1] * 10, list("aabbccddee"), proportion=True)
    lo, hi = wilson(5, 5)
    assert e.value == 1.0 and (e.ci_low, e.ci_high) == (lo, hi)
    assert lo == pytest.approx(0.5655, abs=1e-3)  # Wilson 95% for 5/5
    assert "Wilson" in e.method


def test_geometric_mean_of_ratios():
    logs = np.log([2.0, 0.5, 4.0, 1.0])
    e = geometric_mean_ratio(logs, ["a", "b", "c", "d"])
    assert e.value == pytest.approx((2 * 0.5 * 4 * 1) ** 0.25)
    assert e.ci_low <= e.value <= e.ci_high


def test_paired_difference_sign_and_test():
    a = pd.Series([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], index=list("abcdefgh"))
    b = pd.Series([0.0, 0.5, 0.0, 0.5, 0.0, 0.0, 0.5, 0.0], index=list("abcdefgh"))
    r = paired_difference(a, b)
    assert r["difference"] == pytest.approx(0.8125)
    assert r["p_value"] < 0.05 and r["n"] == 8
    same = paired_difference(a, a)
    assert same["p_value"] == 1.0 and same["difference"] == 0


def _row(base, setting, kind, n, correct, competent=True, logrel=0.0, filler=0):
    is_base = kind == "none"
    return {
        "subject": "s",
        "original_id": base,
        "pair_id": f"{base}|{setting}|{kind}|{n}",
        "intervention": "none" if is_base else "x",
        "item_set": "capitals",
        "setting": setting,
        "attractor_type": kind,
        "n_attractors": n,
        "position": "none" if is_base else "after",
        "n_filler": filler,
        "competent": competent,
        "correct": correct,
        "log_relative_probability": logrel,
    }


def test_accuracy_counts_only_competent_items_and_starts_at_base():
    rows = [
        _row("a", "none", "none", 0, True),
        _row("b", "none", "none", 0, True),
        _row("c", "none", "none", 0, False, competent=False),
        _row("a", "single", "B", 1, True, logrel=math.log(0.5)),
        _row("b", "single", "B", 1, False, logrel=math.log(0.25)),
        _row("c", "single", "B", 1, True, competent=False, logrel=0.0),
    ]
    est = pd.DataFrame(m.estimates(pd.DataFrame(rows)))
    main = est[(est.view == "main") & (est.metric == "accuracy")].set_index("n_attractors")
    assert main.loc[0, "value"] == 1.0 and main.loc[0, "n"] == 2
    assert main.loc[1, "value"] == 0.5 and main.loc[1, "n"] == 2
    everything = est[(est.view == "all_items") & (est.metric == "accuracy")]
    assert everything.set_index("n_attractors").loc[1, "value"] == pytest.approx(2 / 3)
    rel = est[(est.view == "main") & (est.metric == "relative_probability")]
    assert rel.set_index("n_attractors").loc[1, "value"] == pytest.approx((0.5 * 0.25) ** 0.5)
    comp = m.base_accuracy(pd.DataFrame(rows))
    assert comp[0]["n_base"] == 3 and comp[0]["n_competent"] == 2 and comp[0]["n_dropped"] == 1
