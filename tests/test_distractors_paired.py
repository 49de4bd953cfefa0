"""The distractors suite's paired tests compare like with like: where attractors come
between entity and fact for related attractors only (as in the method's released items),
"unrelated vs related" is judged on the positions both sides hold, and "one related
attractor" once per position, so neither mixes in items the other side lacks."""

from __future__ import annotations

import pandas as pd
import pytest

from faithprobe.suites.distractors import metrics as m

BASES = ("a", "b", "c", "d")
RELATED_AFTER_RIGHT = {"a", "b", "c"}  # the related attractor after the fact pulls d only


def _row(base: str, kind: str, position: str, correct: bool) -> dict:
    is_base = kind == "none"
    return {
        "subject": "s",
        "original_id": base,
        "intervention": "none" if is_base else f"{kind}-{position}",
        "item_set": "capitals",
        "setting": "none" if is_base else "multi",
        "attractor_type": kind,
        "n_attractors": 0 if is_base else 1,
        "position": "none" if is_base else position,
        "n_filler": 0,
        "n_padding": 0,
        "competent": True,
        "correct": correct,
        "log_relative_probability": 0.0,
    }


def _results() -> pd.DataFrame:
    """Multi setting, one attractor: unrelated after the fact only (always right); related
    after the fact (right on a, b, c) and between entity and fact (always wrong)."""
    rows = []
    for b in BASES:
        rows.append(_row(b, "none", "none", True))
        rows.append(_row(b, "unrelated", "after", True))
        rows.append(_row(b, "B", "after", b in RELATED_AFTER_RIGHT))
        rows.append(_row(b, "B", "between", False))
    return pd.DataFrame(rows)


def _test(tests: list[dict], name: str) -> dict:
    return next(t for t in tests if t["name"] == name)


def test_unrelated_vs_related_compares_the_positions_both_sides_hold():
    results = _results()
    after_only = results[results["position"].isin(["after", "none"])]
    tests = m.tests(results)
    like = _test(tests, "unrelated vs related (multi; after)")
    alone = _test(m.tests(after_only), "unrelated vs related (multi; after)")
    assert like["difference"] == alone["difference"] == pytest.approx(1 / 4)
    assert like["n"] == alone["n"] == 4
    # before: each base item's related accuracy pooled over after and between
    pooled = results[results["attractor_type"] == "B"].groupby("original_id")["correct"].mean()
    assert (1 - pooled).mean() == pytest.approx(5 / 8) != like["difference"]
    assert not any(t["name"] == "unrelated vs related (multi)" for t in tests)


def test_one_related_attractor_is_one_test_per_position():
    tests = m.tests(_results())
    after = _test(tests, "one related attractor (multi, after)")
    between = _test(tests, "one related attractor (multi, between)")
    assert after["difference"] == pytest.approx(1 / 4)  # the card's drop, after the fact
    assert between["difference"] == pytest.approx(1.0)
    card = next(
        d
        for d in m.one_attractor_drops(_results())
        if d["effect"] == "related_drop" and d["setting"] == "multi"
    )
    assert card["value"] == pytest.approx(after["difference"])
