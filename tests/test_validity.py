"""The card's validity table at the small budget: the reference models (a reader faithful
by construction, degenerate models ignoring their input) run through the whole audit, and
the card keeps its rules on them (:mod:`faithprobe.audit.validity`). Without the shared
data only the generated steps run; with it, all six."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithprobe.audit.validity import (
    READER,
    REFERENCES,
    markdown,
    run_validity,
    verdicts,
    violations,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def small_audit(tmp_path_factory):
    data = SHARED if SHARED.is_dir() else None
    found = run_validity(["small"], [0], data, tmp_path_factory.mktemp("validity"))
    return found["small", 0]


def test_reference_models_keep_the_cards_rules(small_audit):
    found = verdicts(small_audit)
    assert violations(found) == []
    ran = {step for step, _ in found}
    assert {"distractors", "faithfulness-negation", "right-reasons"} <= ran
    if SHARED.is_dir():
        assert len(ran) == 6
    for step in ran:  # every reference answers every step
        assert all((step, r) in found for r in REFERENCES), step


def test_the_rules_catch_a_card_that_breaks_them(small_audit):
    found = dict(verdicts(small_audit))
    found["distractors", READER] = "inconclusive"
    found["distractors", "ref:constant"] = "faithful"
    found["distractors", "ref:nearest"] = "not assessable"
    broken = violations(found)
    assert len(broken) == 3 and all(b.startswith("distractors:") for b in broken)


def test_the_table_has_a_row_per_step(small_audit):
    table = markdown({("small", 0): small_audit})
    assert table.count("\n| small |") == len({s for s, _ in verdicts(small_audit)})
