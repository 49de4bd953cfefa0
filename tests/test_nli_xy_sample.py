"""The natural-logic sample shipped with faithprobe (``catalog/samples/nli-xy``): a small
grid authored in NLI-XY's format, read by faithprobe's own reader, with labels that follow
the natural-logic rule, intervention sets the audit's small budget can use, and no row
taken from NLI-XY itself."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from faithprobe.catalog.locate import sample
from faithprobe.datasets.nli_xy import (
    challenge_files,
    gold_label,
    read_contexts,
    read_insertions,
    read_nli_xy,
)
from faithprobe.interventions import get
from faithprobe.records import ENTAILMENT
from faithprobe.suites.natural_logic.metrics import SETS

SAMPLE = sample("nli-xy").path
SHARED_NLI_XY = Path(__file__).resolve().parents[2] / "shared" / "data" / "nli-xy"
# the operator governing the slot (column ``operator``) and the monotonicity it gives there
DOWNWARD = {"no", "not", "not a single", "nobody", "never", "none", "every", "each", "all",
            "at most", "fewer than", "hardly any", "little", "if"}  # fmt: skip
UPWARD = {"", "some", "some of", "at least", "more than", "several", "a few", "a little",
          "a lot of", "lots of"}  # fmt: skip


@pytest.fixture(scope="module")
def grid():
    return read_nli_xy(SAMPLE)


def test_the_sample_is_found_where_the_package_keeps_it():
    assert SAMPLE is not None and SAMPLE.is_dir()
    assert {"contexts.tsv", "insertions.tsv", "README.md"} <= {p.name for p in SAMPLE.iterdir()}


def test_counts(grid):
    assert len(grid.contexts) == 55
    assert len(grid.insertions) == 112  # 56 rows, each also reversed
    assert len(grid.examples) == 2024
    assert Counter(e.label for e in grid.examples)[ENTAILMENT] == 780


def test_both_monotonicities_and_every_relation_and_kind(grid):
    assert Counter(c.monotonicity for c in grid.contexts) == {"up": 29, "down": 26}
    assert {i.relation for i in grid.insertions} == {"leq", "geq", "none"}
    for kind in ("singular", "mass", "plural", "place"):
        monotonicities = {c.monotonicity for c in grid.contexts if kind in c.kinds}
        assert monotonicities == {"up", "down"}, kind


def test_every_context_and_every_pair_enters_the_grid(grid):
    assert {c.id for c in grid.contexts} == set(grid.by_context)
    assert {i.id for i in grid.insertions} == set(grid.by_insertion)


def test_gold_labels_follow_the_natural_logic_rule(grid):
    for e in grid.examples:
        f = e.features
        expected = (f["relation"], f["monotonicity"]) in (("leq", "up"), ("geq", "down"))
        assert (e.label == ENTAILMENT) == expected, e.id
        assert e.label == gold_label(f["relation"], f["monotonicity"])


def test_the_operator_column_agrees_with_the_monotonicity():
    with (SAMPLE / "contexts.tsv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows:
        expected = "down" if row["operator"] in DOWNWARD else "up"
        assert row["operator"] in DOWNWARD | UPWARD, row["context"]
        assert row["monotonicity"] == expected, row["context"]


def test_every_base_has_each_intervention_set_it_can_have(grid):
    """I1-I3 hold pairs for every base; I0 (the context flips the label) for every base but
    those of relation ``none``, whose gold label no context changes."""
    for base in grid.examples:
        for name, spec in SETS.items():
            found = get(spec["intervention"]).apply(base, seed=0, pool=grid).examples
            possible = not (name == "I0" and base.features["relation"] == "none")
            assert bool(found) == possible, (name, base.id)


def test_no_challenge_set_is_found_beside_the_sample():
    assert challenge_files(SAMPLE) == []


@pytest.mark.skipif(not SHARED_NLI_XY.is_dir(), reason="../shared/data/nli-xy not present")
def test_no_row_is_taken_from_nli_xy():
    def texts(folder: Path) -> set[str]:
        return {" ".join(c.text.lower().split()) for c in read_contexts(folder / "contexts.tsv")}

    def pairs(folder: Path) -> set[tuple[str, str]]:
        return {
            (i.x.lower().strip(), i.y.lower().strip())
            for i in read_insertions(folder / "insertions.tsv")
        }

    assert not texts(SAMPLE) & texts(SHARED_NLI_XY)
    assert not pairs(SAMPLE) & pairs(SHARED_NLI_XY)  # both directions: reversals included
