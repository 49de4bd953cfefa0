"""benchmarks/natural_logic_coverage.py on the hand-made NLI-XY table of test_natural_logic:
the grid's pairs are the suite's, the intervals those of the suite's ``effect_pair`` on the
same bases, the misses counted on the right side of the truth, and the planted models'
truths what they were built to be."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faithprobe.datasets.nli_xy import read_nli_xy
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.natural_logic import intervals
from faithprobe.suites.natural_logic.metrics import SETS, effect_pair
from test_natural_logic import write_grid

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def coverage():
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(BENCHMARKS)
        return importlib.import_module("natural_logic_coverage")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_grid(tmp_path_factory.mktemp("coverage") / "nli-xy")


@pytest.fixture(scope="module")
def grid(coverage, folder):
    return coverage.read_grid(folder)


def test_the_grid_pairs_every_example_as_the_suite_does(grid, folder):
    ids = [e.id for e in read_nli_xy(folder).examples]
    suite = get_suite("natural-logic", {"bases": "0", "challenge": "none"})
    for name in SETS:
        base, alternative = grid.pairs[name]
        ours = sorted((ids[b], ids[a]) for b, a in zip(base, alternative, strict=True))
        theirs = sorted(
            (p.original.id, p.intervened.id)
            for p in suite.pairs(folder, 0)
            if p.intervention == name
        )
        assert ours == theirs and ours, name


def test_misses_are_counted_on_the_false_faithful_side(coverage):
    truth = {"delta": 0.2, "dce_over_tce": 0.5}
    ends = [
        (0.25, 0.6, 0.4),  # TCE - DCE's lower end above 0.2, DCE/TCE's upper end below 0.5
        (0.1, 0.15, np.inf),  # TCE - DCE's upper end below 0.2 (the other side); unbounded
        (0.2, 0.5, 0.5),  # both ends on the truth: no miss
        (-0.1, 0.3, 0.7),  # covers both
    ]
    assert coverage.misses(ends, truth) == {
        "sets": 4,
        "delta_misses": 1,
        "ratio_misses": 1,
        "delta_misses_above": 1,
        "ratio_unbounded": 1,
        "delta_width": pytest.approx(0.325),
    }


def _pairs(coverage, grid, case, cp, bases, ids) -> list[pd.DataFrame]:
    """The result rows of ``case``'s two sets whose base is in ``bases``, as the suite
    writes them (the columns ``effect_pair`` reads)."""
    frames = []
    for name in coverage.FEATURE_SETS[case.feature]:
        base, alternative = grid.pairs[name]
        keep = np.isin(base, bases)
        frames.append(pd.DataFrame({
            "set": name,
            "original_id": [ids[b] for b in base[keep]],
            "intervened_id": [ids[a] for a in alternative[keep]],
            "cp": cp(name)[keep],
        }))  # fmt: skip
    return frames


def test_the_intervals_are_the_suites_on_the_same_bases(coverage, grid, folder):
    ids = [e.id for e in read_nli_xy(folder).examples]
    predictions = coverage.reader(grid, 0.5, 0.5, seed=3)(0.2)
    cp = coverage.changes(grid, predictions)
    for feature in ("context", "insertion"):
        case = coverage.case_of(grid, "reader", feature, cp)
        k = intervals.MIN_BASES
        for j, bases in enumerate(coverage.seed_sets(case, k, 3, [0, 1])):
            assert len(bases) == k and list(bases) == sorted(bases)
            rates = intervals.base_rates(case.sums[:, bases], case.counts[:, bases], j)
            low, high, ratio_high = coverage.interval_ends(rates)
            suite = effect_pair(*_pairs(coverage, grid, case, cp, bases, ids), seed=j)
            assert suite["n_bases"] == k
            assert (low, high) == (suite["delta"]["ci_low"], suite["delta"]["ci_high"])
            assert ratio_high == (suite["dce_over_tce"]["ci_high"] or np.inf)


def test_truths_of_the_planted_models(coverage, grid):
    reader = coverage.reader(grid, 0.0, 0.0, seed=0)
    for feature in ("context", "insertion"):
        truth = coverage.case_of(grid, "reader", feature, coverage.changes(grid, reader(0))).truth()
        assert (truth["tce"], truth["dce"]) == (1, 0)
        flipped = coverage.changes(grid, reader(1.0))  # every reading flipped: the same changes
        assert coverage.case_of(grid, "flipped", feature, flipped).truth() == truth
        case = coverage.case_of(grid, "mix", feature, coverage.mix(grid, 0.5, seed=1))
        reads = np.random.default_rng(1).random(grid.size) < 0.5
        tce_set = coverage.FEATURE_SETS[feature][0]
        assert case.truth()["tce"] == pytest.approx(reads[grid.pairs[tce_set][0]].mean())
        assert case.truth()["dce"] == 0 and 0 < case.truth()["tce"] < 1


def test_a_version_from_a_file_is_scored_on_the_same_seed_sets(coverage, grid):
    """The current module loaded by path as the version before gives the same figures."""
    predictions = coverage.logistic(grid, 1.0, 1.0, seed=0)(1.0)
    case = coverage.case_of(grid, "logistic", "context", coverage.changes(grid, predictions))
    figures = coverage.coverage(case, intervals.MIN_BASES, 4, [0, 2], intervals.__file__)
    assert set(figures) == {"current", "before"}
    assert figures["current"] == figures["before"] and figures["current"]["sets"] == 4
